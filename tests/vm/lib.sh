# Shared by the in-VM tests: run a mesh, keep its console output, leave its results file to be
# checked on the host. Python (numpy, h5py) under TCG emulation costs seconds per start and tests
# nothing about verbs, so the checks of files run after the VM, on the host (tests/vm/run_test.sh):
# `later` copies the files into HOSTDIR, on the shared checkout, and queues the check there.
#   TEST.sh BUILD/rdmamesh HOSTDIR
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:?usage: TEST.sh BUILD/rdmamesh HOSTDIR}
hostdir=${2:?usage: TEST.sh BUILD/rdmamesh HOSTDIR}
tmp=$(mktemp -d)
fails=0
queued=0
# what the kernel counted (rxe's retries and sequence errors, the backlog's drops) at the test's
# start, and again at its first failure: whether rxe gave up on a path, and why
kernel_counters() { "$root/tools/softroce-cluster" counters 2>/dev/null; }
kernel_counters >"$tmp/counters.start"
fail() {
  echo "FAIL $*"
  fails=$((fails + 1))
  if [ "$fails" = 1 ]; then
    sed 's/^/    kernel counters at the start: /' "$tmp/counters.start"
    kernel_counters | sed 's/^/    kernel counters now:          /'
  fi
}

# later MESSAGE TOOL ARGS...: run TOOL ARGS on the host after the VM, "FAIL MESSAGE" if it fails.
# TOOL, in the checkout, is named relative to it; files under $tmp among ARGS are copied into
# HOSTDIR and named by their file name there (the host runs the check inside HOSTDIR).
later() {
  local msg=$1 tool=${2#"$root"/} a args=()
  shift 2
  for a in "$@"; do
    case "$a" in "$tmp"/*) [ -f "$a" ] && cp "$a" "$hostdir/"; a=${a##*/} ;; esac
    args+=("$a")
  done
  printf '%q ' "$msg" "$tool" "${args[@]}" >>"$hostdir/checks"
  echo >>"$hostdir/checks"
  queued=$((queued + 1))
}

# hang_bound NAME SECONDS OUT CMD...: runs CMD, its output to OUT. Past SECONDS (far above any
# normal run: a job that long is hung) it prints every rank's threads' stacks (gdb, from the
# host's root the VM mounts) and what each waits on in the kernel, in one loud HANG block, kills
# the job and returns 124: a hang says where it hangs, and ends well before the VM's own bound.
hang_bound() {
  local name=$1 limit=$2 out=$3 pid p began=$SECONDS
  shift 3
  "$@" >"$out" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ $((SECONDS - began)) -ge "$limit" ]; then
      echo "   HANG $name: still running after $limit s; every rank's stacks:"
      for p in $(pgrep -x rdmamesh); do
        echo "   -- rank $(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')" \
          "(pid $p, state $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null), kernel wait $(cat "/proc/$p/wchan" 2>/dev/null)):"
        timeout 60 gdb -p "$p" -batch -ex "thread apply all bt 15" 2>/dev/null | grep -E "^(Thread|#)" |
          sed 's/^/      /' | head -n 120
      done
      tail -n 20 "$out" | sed 's/^/   | /'
      kill -TERM "$pid" 2>/dev/null
      sleep 5
      pkill -KILL -x rdmamesh
      kill -KILL "$pid" 2>/dev/null
      wait "$pid"
      echo "${hostdir##*/vm-} $name: hung (stacks in the log)" >>"$(dirname "$hostdir")/reruns.log"
      return 124
    fi
    sleep 1
  done
  wait "$pid"
}

# mesh NAME NP CHECK_ARGS -- RDMAMESH_ARGS...: runs, requires exit 0 (a healthy verdict), under -D
# no cause named in any run, and a clean results file
mesh() {
  local name=$1 np=$2 checks=$3 start=$SECONDS
  shift 4
  echo "== $name: mpirun -np $np rdmamesh $* -o $tmp/$name.h5"
  if ! mpirun -np "$np" "$bin" "$@" -o "$tmp/$name.h5" >"$tmp/$name.txt" 2>&1; then
    cat "$tmp/$name.txt"; fail "$name: rdmamesh exited non-zero"; return 1
  fi
  cat "$tmp/$name.txt"
  # for the log only (where CI's minutes go), never a verdict
  echo "   $name took $((SECONDS - start)) s"
  # a healthy VM reads healthy: the verdict counts nothing (exit 0), and under -D a part one run
  # named is listed by the verdict as seen, not counted. One run names a healthy part as often as
  # its '# false alarms:' line says, which on the VM's 2 shared vCPUs beside a loaded host is
  # often (a suspect pair is no cause)
  case " $* " in
    *" -D "*)
      grep -q "^# below" "$tmp/$name.txt" && { fail "$name: a pair below --expect on a healthy VM"; return 1; }
      not_counted "$name" "$tmp/$name.txt" || return 1
      ;;
  esac
  grep -qE "^# setup \[s\] median/max over ranks: placement .* barrier .*; slowest rank [0-9]+ \(" "$tmp/$name.txt" &&
    grep -qE "^# resources: per rank up to [0-9]+ QPs, [0-9]+ CQ entries" "$tmp/$name.txt" ||
    { fail "$name: the header lacks the setup or resources line"; return 1; }
  # shellcheck disable=SC2086
  later "$name: results file" "$here/check_results.py" "$tmp/$name.h5" --ranks "$np" $checks
}

# not_counted NAME CONSOLE [SKIP_ERE]: every part a run named (a `# slow:` line not matching
# SKIP_ERE) is one the job's verdict lists as seen and not acted on (not counted, or cleared or
# undecided by a retest): a run names a healthy part as often as its '# false alarms:' line says,
# the verdict counts what more evidence confirms.
# The log says what each run named beside its stated level; false after a FAIL for each one not listed.
not_counted() {
  local name=$1 console=$2 skip=${3:-} line subject ok=0
  while read -r line; do
    [ -n "$skip" ] && grep -qE "$skip" <<<"$line" && continue
    subject=${line#\# slow: }
    subject=${subject%%: its *}
    if grep '^#   seen, ' "$console" | grep -qF ": $subject: "; then
      echo "   $name: one run named $subject, the verdict did not count it ($(grep -A3 -F "$line" "$console" | grep -m1 '^# false alarms: ' | cut -c3-95))"
    else
      fail "$name: $subject named, and the verdict does not list it as seen (not counted, cleared or undecided)"
      ok=1
    fi
  done < <(grep '^# slow: ' "$console")
  return "$ok"
}

# relaunched NAME WHY: a case launched once more, said here in one loud line and counted with the
# reruns at the end of CI's log (the emulator's noise or its transport failures, never hidden)
relaunched() {
  echo "   RERUN $1: $2: one more launch"
  echo "${hostdir##*/vm-} $1: $2, launched once more" >>"$(dirname "$hostdir")/reruns.log"
}

# missed NAME: a case whose fault read healthy gets one more launch
missed() { relaunched "$1" "missed (the fault it made read healthy)"; }

# job NAME EXPECTED_RC -- MPIRUN_ARGS -- RDMAMESH_ARGS: runs it, requires the exit code (or one
# of "A|B") and a verdict file; the console goes to $tmp/NAME.txt
job() {
  local name=$1 want=$2 launch=() start=$SECONDS
  shift 3
  while [ "$1" != -- ]; do launch+=("$1"); shift; done
  shift
  echo "== $name: mpirun ${launch[*]} rdmamesh $*"
  hang_bound "$name" 600 "$tmp/$name.txt" mpirun "${launch[@]}" "$bin" "$@" --quiet -o "$tmp/$name.h5"
  local rc=$?
  grep -E "^# (slow|below|healthy|judged|not judged|verdict)|^#   |rdmamesh: error" "$tmp/$name.txt" | sed 's/^/    /'
  echo "   $name took $((SECONDS - start)) s, exit $rc"
  # a fault that set nothing apart (unbound: prints why) was not exercised: not judged, said in
  # one loud line and counted with the reruns, never a pass
  local reason
  if [ "$rc" = 0 ] && [ -n "${unbound:-}" ] && reason=$("$unbound" "$tmp/$name.txt"); then
    echo "   NOT EXERCISED $name: $reason: not judged"
    echo "${hostdir##*/vm-} $name: not exercised ($reason), not judged" >>"$(dirname "$hostdir")/reruns.log"
    return 3
  fi
  if [ "$rc" = 0 ] && [ "${miss_ok:-0}" = 1 ]; then
    missed "$name"
    for f in "$tmp/$name".{h5,verdict.json,txt}; do mv "$f" "$f.missed"; done  # -o will not overwrite
    return 2
  fi
  # a QP rxe failed at the shaped port (see failed_at) is that port's: named and drained the same
  if [ "$rc" = 1 ] && [ "$want" = 5 ] && [ -n "${failed_on:-}" ] && failed_at "$tmp/$name.txt" $failed_on; then
    echo "   $name: pair(s) $(sed -n 's/^# failed pairs: //p' "$tmp/$name.txt") failed, each at ranks $failed_on"
    rc=5
  fi
  case "|$want|" in *"|$rc|"*) ;; *) cat "$tmp/$name.txt"; fail "$name: exit $rc, expected $want"; return 1 ;; esac
  [ -s "$tmp/$name.verdict.json" ] || { fail "$name: no verdict file beside the results"; return 1; }
}

# job_upto N JOB_ARGS...: job, launched up to N times while the fault it made reads healthy; job's
# status (3: not exercised)
job_upto() {
  local left=$1 rc
  shift
  while left=$((left - 1)); miss_ok=$((left > 0 ? 1 : 0)) job "$@"; rc=$?; [ "$rc" = 2 ]; do :; done
  return "$rc"
}

# network_healthy NAME CONSOLE: a retested job on a healthy fabric reads healthy, or counts host
# causes only, never a network one: six ranks on the VM's two vCPUs beside a loaded machine can
# wait for a CPU in the retest too, and the host's figures then say so (said in one HOST line)
network_healthy() {
  local name=$1 console=$2
  if grep -q "^# verdict: degraded (" "$console"; then
    ! grep "^#     why: " "$console" | grep -qv "^#     why: host: " && grep -q "^#     why: host: " "$console" ||
      { fail "$name: a network cause counted on a healthy cluster"; return 1; }
    echo "   HOST $name: the verdict counted the host's CPU, not the network: $(grep -m1 "^#     why: host: " "$console" | cut -c14-)"
  else
    grep -q "^# verdict: healthy (" "$console" || { fail "$name: the verdict is not healthy on a healthy cluster"; return 1; }
  fi
}

# drained: the nodes Slurm holds drained now (what a health job did), on one line
drained() { sinfo -h -N -o "%N %T" | awk '$2 ~ /drain/ { print $1 }' | sort -u | tr '\n' ' '; }

# egress_gbps CONSOLE RANK...: what those ranks (a node's) sent to the other ranks, in Gb/s,
# from the send-bandwidth matrix a single-size run prints (the first: a --retest prints its own
# after it, of pairs run alone): the traffic that left through the node's port
egress_gbps() {
  local file=$1
  shift
  awk -v ranks=" $* " '/send bandwidth \[Gb\/s\]/ { if (seen) exit; m = 1; seen = 1; next }
    m && $1 ~ /^[0-9]+$/ && index(ranks, " " $1 " ") { for (c = 2; c <= NF; c++) if (!index(ranks, " " (c - 2) " ") && $c != "-") s += $c }
    m && $1 !~ /^[0-9]+$/ && $1 != "src\\dst" { m = 0 }
    END { print s + 0 }' "$file"
}

# median_egress_gbps CONSOLE: the median over ranks of what each rank sent to the others, from
# the same matrix: a typical port's rate, steadier than one rank's row (a clean 4K mesh in the
# VM read ±52 % noise, and half of one rank's own row shaped node2's two NICs at 25 and 40 Mb/s)
median_egress_gbps() {
  awk '/send bandwidth \[Gb\/s\]/ { if (seen) exit; m = 1; seen = 1; next }
    m && $1 ~ /^[0-9]+$/ { s = 0; for (c = 2; c <= NF; c++) if ($c != "-") s += $c; row[n++] = s; next }
    m && $1 != "src\\dst" { m = 0 }
    END { if (!n) { print 0; exit }
          for (i = 1; i < n; i++) for (j = i; j > 0 && row[j - 1] > row[j]; j--) { t = row[j]; row[j] = row[j - 1]; row[j - 1] = t }
          print (n % 2) ? row[(n - 1) / 2] : (row[n / 2 - 1] + row[n / 2]) / 2 }' "$1"
}

# failed_at CONSOLE RANK|A->B...: every pair the console lists as failed has an end on one of
# those ranks or is one of those pairs (false when none failed). rxe under TCG can fail a QP at a
# port shaped by tc (a responder's "remote invalid request" after the queue held the pair's
# packets, no drop counted: 2 of ~10 CI runs on 2026-11-25); the job then exits 1, its verdict
# still names that node.
failed_at() {
  local console=$1 failed a ranks=() pairs=()
  shift
  for a in "$@"; do
    case $a in *'->'*) pairs+=("$a") ;; *) ranks+=("$a") ;; esac
  done
  failed=$(sed -n 's/^# failed pairs: //p' "$console")
  [ -n "$failed" ] && ! tr ' ' '\n' <<<"$failed" | grep -vE "(^|>)($(IFS='|' && echo "${ranks[*]:-none}"))(-|$)" |
    grep -vxF -f <(printf '%s\n' "${pairs[@]}") >/dev/null
}

# rank_pid R: the process id of MPI rank R of the running job
rank_pid() {
  local p
  for p in $(pgrep -x rdmamesh); do
    # (not a pipe into grep -q: an environment over a pipe's block, cut by grep quitting, fails
    # the pipeline under pipefail and the rank would be missed)
    grep -qx "OMPI_COMM_WORLD_RANK=$1" <<<"$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null)" && echo "$p"
  done
  return 0
}

# finish: the in-VM verdict; the end marker tells the host the test ran to its end
finish() {
  rm -rf "$tmp"
  echo "# end" >>"$hostdir/checks"
  [ "$fails" = 0 ] && echo "all in-VM cases passed; $queued file check(s) left for the host" ||
    echo "$fails in-VM case(s) failed; $queued file check(s) left for the host"
  exit $((fails > 0))
}
