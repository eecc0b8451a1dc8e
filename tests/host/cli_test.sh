#!/usr/bin/env bash
# Bad input and a machine without RDMA, launched the way users launch: under mpirun.
# Each case: exit code, exactly one `rdmamesh: error:` line naming the fix, no rank left behind.
# No case is judged by the clock: the hardened (ASan) build on a busy machine needs over 10 s
# for `mpirun --help`. The only clock is the hang bound; tools/bench-faults times the errors.
set -uo pipefail
bin=${1:?usage: cli_test.sh BUILD/rdmamesh}
mpirun=(mpirun --oversubscribe)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
hang_bound=240  # seconds: a rank left waiting, never a slow machine

# run NAME EXPECTED_RC PATTERN -- MPIRUN_ARGS...
run() {
  local name=$1 want_rc=$2 pattern=$3
  shift 4
  local start=$SECONDS
  timeout "$hang_bound" "${mpirun[@]}" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$? took=$((SECONDS - start))
  if [ "$rc" = 124 ]; then echo "FAIL $name: hung (killed after ${hang_bound}s)"; fails=$((fails + 1)); return; fi
  local lines
  lines=$(grep -c '^rdmamesh: error:' "$tmp/err")
  if [ "$rc" != "$want_rc" ]; then
    echo "FAIL $name: exit $rc, expected $want_rc"; sed 's/^/    /' "$tmp/err" | head -5; fails=$((fails + 1)); return
  fi
  if [ "$want_rc" != 0 ] && [ "$lines" != 1 ]; then
    echo "FAIL $name: $lines error lines, expected exactly one"; sed 's/^/    /' "$tmp/err" | head -8; fails=$((fails + 1)); return
  fi
  if ! grep -qE -- "$pattern" "$tmp/err" "$tmp/out"; then
    echo "FAIL $name: output lacks /$pattern/"; sed 's/^/    /' "$tmp/err" "$tmp/out" | head -8; fails=$((fails + 1)); return
  fi
  echo "ok   $name (${took}s)"
}

run "bad size"            2 "invalid --size '12Q'.*e\\.g\\. 64K"   -- -np 2 "$bin" -s 12Q
run "zero size"           2 "--size must be at least 1"          -- -np 2 "$bin" -s 0
run "zero depth"          2 "--tx-depth must be at least 1"      -- -np 2 "$bin" -t 0
run "unknown flag"        2 "--bogus.*--help"                    -- -np 2 "$bin" --bogus
run "unknown op"          2 "atomic"                             -- -np 2 "$bin" --op atomic
run "false-alarm 100"     2 "--false-alarm must be a percentage" -- -np 2 "$bin" --retest --false-alarm 100
run "-n with -D"          2 "excludes"                           -- -np 2 "$bin" -n 10 -D 1
run "single rank"         2 "at least 2 ranks.*mpirun -np N"     -- -np 1 "$bin"
run "options differ"      2 "--size is '4K' on this rank but '64K' on rank 0.*\\[rank 1\\]" \
                                                                  -- -np 1 "$bin" -s 64K : -np 1 "$bin" -s 4K
run "size too big"        2 "--size is at most 2G"               -- -np 2 "$bin" -s 1T
run "env differs"         2 "environment variable RDMAMESH_FAULT is '\(unset\)' on this rank but 'rkey:0:1' on rank 0.*mpirun -x RDMAMESH_FAULT" \
                                                                  -- -np 1 env RDMAMESH_FAULT=rkey:0:1 "$bin" : -np 1 "$bin"
run "bad fault spec"      2 "RDMAMESH_FAULT='flip:0:1': unknown fault 'flip'; use rkey:SRC:DST" \
                                                                  -- -x RDMAMESH_FAULT=flip:0:1 -np 2 "$bin"
echo precious > "$tmp/exists.h5"
run "output exists"       2 "exists; pass --force"               -- -np 2 "$bin" -o "$tmp/exists.h5"
[ "$(cat "$tmp/exists.h5")" = precious ] || { echo "FAIL output exists: file was modified"; fails=$((fails + 1)); }
run "output folder"       2 "folder '$tmp/nodir' does not exist" -- -np 2 "$bin" -o "$tmp/nodir/x.h5"
run "bad --expect"        2 "invalid --expect '180G'.*180Gb/s.*80%" -- -np 2 "$bin" --expect 180G
run "--expect over 100%"  2 "a percentage is at most 100%"       -- -np 2 "$bin" --expect 120%
run "topology unreadable"  2 "--topology $tmp/none.conf: cannot read it; give Slurm's topology.conf" \
                                                                  -- -np 2 "$bin" --topology "$tmp/none.conf"
printf 'SwitchName=leaf1 Node=n[1-2]\n' >"$tmp/typo.conf"
run "topology typo"       2 "topology $tmp/typo.conf line 1: unknown key 'Node'" \
                                                                  -- -np 2 "$bin" --topology "$tmp/typo.conf" -o "$tmp/t.h5"
[ ! -e "$tmp/t.h5" ] || { echo "FAIL topology typo: left a results file behind"; fails=$((fails + 1)); }
printf 'SwitchName=leaf1 Nodes=elsewhere[1-4]\nSwitchName=spine Switches=leaf1\n' >"$tmp/other.conf"
run "topology elsewhere"  2 "topology $tmp/other.conf: none of the job's nodes \\($(hostname | cut -d. -f1)\\) is under a switch" \
                                                                  -- -np 2 "$bin" --topology "$tmp/other.conf"
run "--expect in lat"     2 "--expect applies to --mode bw"      -- -np 2 "$bin" --mode lat --expect 1Gb/s
run "verdict folder"      2 "--verdict folder '$tmp/nodir' does not exist" -- -np 2 "$bin" --verdict "$tmp/nodir/v.json"
echo precious > "$tmp/v.json"
run "verdict exists"      2 "--verdict file '$tmp/v.json' exists; pass --force" -- -np 2 "$bin" --verdict "$tmp/v.json"
echo precious > "$tmp/new.verdict.json"  # the default verdict beside -o new.h5
run "verdict beside -o"   2 "--verdict file '$tmp/new.verdict.json' exists; pass --force" -- -np 2 "$bin" -o "$tmp/new.h5"
[ ! -e "$tmp/new.h5" ] || { echo "FAIL verdict beside -o: left a results file behind"; fails=$((fails + 1)); }
run "help once"           0 "Usage: rdmamesh"                    -- -np 3 "$bin" --help
[ "$(grep -c '^Usage: rdmamesh' "$tmp/out")" = 1 ] || { echo "FAIL help once: printed by more than one rank"; fails=$((fails + 1)); }

if [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
  echo "skip no device: this machine has RDMA devices"
else
  run "no device"         2 "no RDMA device found.*rdma link add rxe0 type rxe netdev IFACE.*tools/softroce-vm" \
                                                                  -- -np 4 "$bin" -o "$tmp/nodev.h5"
  [ ! -e "$tmp/nodev.h5" ] || { echo "FAIL no device: left an empty results file behind"; fails=$((fails + 1)); }
  # in a Slurm job whose own tree (scontrol show topology) places none of its nodes, the tree is
  # left out and the job goes on: here to the missing device, not to a topology error
  mkdir -p "$tmp/bin"
  printf '#!/bin/sh\necho "SwitchName=s0 Level=0 LinkSpeed=1 Nodes=elsewhere[1-4]"\n' >"$tmp/bin/scontrol"
  chmod +x "$tmp/bin/scontrol"
  run "slurm's tree elsewhere" 2 "no RDMA device found" -- -x SLURM_JOB_ID=1 -x PATH="$tmp/bin:$PATH" -np 2 "$bin"
  grep -q "topology" "$tmp/err" && { echo "FAIL slurm's tree elsewhere: a topology error"; fails=$((fails + 1)); }
fi

[ "$fails" = 0 ] && echo "all host CLI cases passed" || echo "$fails host CLI case(s) failed"
exit $((fails > 0))
