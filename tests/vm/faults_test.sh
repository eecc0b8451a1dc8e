#!/usr/bin/env bash
# Inside the SoftRoCE VM: faults injected with RDMAMESH_FAULT (and real signals) end the way
# docs/faults.md says: failed pairs named and isolated, corruption located, a dead
# or hung rank named, SIGTERM answered, and the results file kept. No case is judged by the
# clock: each runs under a hang bound far above a normal run (tools/bench-faults times them).
source "$(dirname "$0")/lib.sh"
check="$here/check_faults.py"

# launch NAME ENV_FAULT -- MPIRUN_ARGS...: runs under a 300 s hang bound; sets rc and took
launch() {
  local name=$1 spec=$2
  shift 3
  echo "== $name: RDMAMESH_FAULT=$spec mpirun $*"
  local start=$SECONDS
  RDMAMESH_FAULT=$spec timeout 300 mpirun -x RDMAMESH_FAULT "$@" >"$tmp/$name.txt" 2>&1
  rc=$? took=$((SECONDS - start))
  grep -vE '^# rank |PMIX ERROR' "$tmp/$name.txt" | sed 's/^/    /'
  echo "   exit $rc after ${took}s"
}

# A bad rkey on one pair: that pair (both directions: it is one QP) fails with the status
# named, the other ten pairs finish, exit 1.
launch rkey rkey:1:2 -- -np 4 "$bin" -s 64K -D 1 --warmup 0.2 -o "$tmp/rkey.h5"
[ "$rc" = 1 ] || fail "rkey: exit $rc, expected 1 (run had failures)"
grep -q "^# failed pairs: 1->2 2->1$" "$tmp/rkey.txt" || fail "rkey: console does not list the failed pairs"
later "rkey: results file" "$check" "$tmp/rkey.h5" pair-failed 1 2

# A flipped byte in message 7 of 0->3: --verify names pair, message and byte; exit 1.
launch corrupt corrupt:0:3:7 -- -np 4 "$bin" -s 64K -D 1 --warmup 0.2 --verify -o "$tmp/corrupt.h5"
[ "$rc" = 1 ] || fail "corrupt: exit $rc, expected 1"
grep -q "^# event: verify: rank 0 -> rank 3 lane 0 message 7: byte 32768 of 65536 is 0x" "$tmp/corrupt.txt" ||
  fail "corrupt: console lacks the mismatch line"
later "corrupt: results file" "$check" "$tmp/corrupt.h5" corrupt 0 3 7

# SIGTERM to every rank (Slurm's time limit) 2 s into the second run (a 3 s interval): exit 4,
# run 1 written as interrupted with what its interval measured. The ranks signal themselves
# (RDMAMESH_FAULT=term, a process-directed kill() as from outside): a signal timed from the
# console or the file came seconds late when the busy-polling ranks starved the VM's shell.
launch sigterm term:2:1 -- -np 4 "$bin" --sizes 4K,64K -D 3 --warmup 0.5 -o "$tmp/term.h5"
[ "$rc" = 4 ] || fail "sigterm: exit $rc, expected 4"
[ "$(grep -c '^rdmamesh: error: interrupted by SIGTERM: wrote the 2 run(s)' "$tmp/sigterm.txt")" = 1 ] ||
  fail "sigterm: rank 0 did not report the interruption exactly once"
# the stop cut every window of run 1 short: its "# interrupted:" line says why, no rank is
# said to have lacked CPU (run 0 may have a short window of its own on a busy machine)
grep -q "^# short window:" <<<"$(sed -n '/^# interrupted:/,$p' "$tmp/sigterm.txt")" &&
  fail "sigterm: the cut-short run's windows are blamed on CPU starvation"
later "sigterm: results file" "$check" "$tmp/term.h5" interrupted 2

# Slow pairs are named by their smallest cause: one held-back pair as a link, a rank holding
# back everything it sends as the rank (not as its three pairs). Held back to 30 % (a link: to
# 10 %), judged at --slow 60: far from the injected rate and from the VM's own noise between
# pairs. (A link held to 30 % once read as noise: the CPU its paused session left went to rank
# 1's other sends and to rank 3, its CPU's sharer, and the run's noise came out at ±56 %.)
launch slow-link 'slow:1:3:10' -- -np 4 "$bin" -s 64K -D 1 --warmup 0.2 --slow 60 --retest -o "$tmp/slow-link.h5"
# a second launch where it reads healthy: on a loaded machine the run once put the paced pair's
# shortfall on rank 3, its CPU's sharer (a rank is not a link, and alone its other pairs cleared
# it), and the fold counts a link only where a run named it: one pair alone is too weak a sample
# on its own (the simulator: such a rule counts a healthy link in 7 % of emulated jobs)
if [ "$rc" = 0 ]; then
  relaunched slow-link "missed (the paced link read healthy)"
  for f in "$tmp"/slow-link.{h5,verdict.json,txt}; do [ -e "$f" ] && mv "$f" "$f.missed"; done
  launch slow-link 'slow:1:3:10' -- -np 4 "$bin" -s 64K -D 1 --warmup 0.2 --slow 60 --retest -o "$tmp/slow-link.h5"
fi
# one pair in one run is a suspect; the retest that finds it still slow alone makes it the
# job's verdict: degraded (exit 5), the link counted
[ "$rc" = 5 ] || fail "slow-link: exit $rc, expected 5 (degraded: slow is not failed)"
[ "$(grep -c '^# \(slow\|suspect\): ' "$tmp/slow-link.txt")" = 1 ] || fail "slow-link: expected exactly one '# suspect:' line"
grep -q "^# suspect: link rank 1 (softroce-vm, rxe0) -> rank 3 (softroce-vm, rxe0) at [0-9.]* % of the median$" \
  "$tmp/slow-link.txt" || fail "slow-link: the slow link is not named"
grep -q "^#   link rank 1 (softroce-vm, rxe0) -> rank 3 (softroce-vm, rxe0): " "$tmp/slow-link.txt" ||
  fail "slow-link: the verdict does not count the link the retest confirmed"
later "slow-link: results file" "$check" "$tmp/slow-link.h5" outlier link 1 3
# --retest: the pair goes again alone beside healthy control pairs, and stays slow, beyond chance
# at the job's level. Any other pair below --slow in the run goes too (on a loaded machine, a
# rank sharing the paced rank's CPU can read just under it), and must not read still slow alone:
# the verdict counts the link alone
grep -qE "^# retest of run 0: rank 1 \(softroce-vm, rxe0\) -> rank 3 \(softroce-vm, rxe0\) alone at [0-9]+ % of its controls \([0-9]+–[0-9]+ %; [0-9]+ control\(s\); .*\), p [0-9.e+-]+ were it at 60 %: still slow alone \(its link or NIC\)$" \
  "$tmp/slow-link.txt" || fail "slow-link: the retest does not say still slow alone"
[ "$(grep '^# retest of run 0: ' "$tmp/slow-link.txt" | grep -c 'still slow alone')" = 1 ] ||
  fail "slow-link: a pair other than the link still slow alone"
grep -q "^# verdict: degraded (1 cause(s) " "$tmp/slow-link.txt" || fail "slow-link: the verdict counts more than the link"
later "slow-link: retest in the results file" "$check" "$tmp/slow-link.h5" retest 1:3

# (held to 8 %: at 30 % a loaded run once read rank 2 at 63 % of the median, above --slow 60,
# its CPU pauses given to rank 0 beside it and the median dragged down by the load; nearer 60 %
# the retest's three pairs against four controls that share the VM's two vCPUs leave an
# interval too wide to fall below 60 % at the job's level)
launch slow-rank 'slow:2:*:8' -- -np 4 "$bin" -s 64K -D 1 --warmup 0.2 --slow 60 --retest -o "$tmp/slow-rank.h5"
[ "$rc" = 5 ] || fail "slow-rank: exit $rc, expected 5 (degraded: slow is not failed)"
still=$(grep -cE '^# retest of run 0: rank 2 .* still slow alone' "$tmp/slow-rank.txt")
if grep -q '^# slow: ' "$tmp/slow-rank.txt"; then
  [ "$(grep -c '^# slow: ' "$tmp/slow-rank.txt")" = 1 ] || fail "slow-rank: expected exactly one '# slow:' line"
  grep -qE "^# slow: rank 2 \(softroce-vm, rxe0\): its sends at [0-9.]+ % of the median; [23] slow pair\(s\)(, 1 fine)?$" "$tmp/slow-rank.txt" ||
    fail "slow-rank: the slow rank is not named as a rank"
  later "slow-rank: results file" "$check" "$tmp/slow-rank.h5" outlier rank 2 -1
  # the pairs named under the rank (2 or 3 of its sends, as the '# slow:' line says) go again,
  # most of them (two at least) still slow alone: under stress-ng one of three once read 74 %
  # of the controls alone, the controls as starved of CPU as the paced rank
  retested=$(grep -cE '^# retest of run 0: rank 2 ' "$tmp/slow-rank.txt")
  [ "$still" -ge 2 ] && [ $((2 * still)) -gt "$retested" ] ||
    fail "slow-rank: $still of rank 2's $retested retested sends still slow alone, expected most and two at least"
else
  # the run's noise hid it (a loaded machine, 2026-11-25: ±84 % against rank 2's ~50 %); its
  # sends, the run's slowest pairs, go again alone, and the verdict names rank 2 from the retest
  echo "   slow-rank: inside the run's noise; named by the retest"
  [ "$still" -ge 2 ] || fail "slow-rank: $still of rank 2's sends still slow alone, expected two or more"
  # the verdict's words are its test's: of rank 2's pairs alone, most (two at least) below --slow
  words=$(grep -oE "^#   rank 2 \(softroce-vm, rxe0\): its sends at [0-9.–]+ % of the control pairs alone in the retest of 1 of 1 runs \(mesh 64K\); [0-9]+ of its [0-9]+ pair\(s\) alone below --slow$" \
    "$tmp/slow-rank.txt" | sed -E 's/.*; ([0-9]+) of its ([0-9]+) pair.*/\1 \2/')
  read -r below alone <<<"$words"
  [ -n "$words" ] && [ "$below" -ge 2 ] && [ $((2 * below)) -gt "$alone" ] ||
    fail "slow-rank: the verdict does not name rank 2 from the retest, most of its pairs alone below --slow"
  later "slow-rank: the verdict file names rank 2's node, from the retest" "$here/check_verdict.py" \
    "$tmp/slow-rank.h5" "$tmp/slow-rank.verdict.json" --node softroce-vm
fi
later "slow-rank: retest in the results file" "$check" "$tmp/slow-rank.h5" retest 2:0,2:1,2:3 2 most

# A round far longer than --timeout is not a dead peer: one-sided WRITEs (the receiver sees
# no completion at all), 2 ranks, each direction's round over 1.5 x --timeout. Exit 0, exact
# counts. (The VM moves 46-100 MB/s a direction on slow and fast hours: 450 MiB takes 4.5-10 s,
# over the 2.25 s the check asks everywhere)
echo "== long round: mpirun -np 2 rdmamesh --op write --pattern pairs -s 1M -n 450 --timeout 1.5"
timeout 600 mpirun -np 2 "$bin" --op write --pattern pairs -s 1M -n 450 --timeout 1.5 -o "$tmp/long.h5" >"$tmp/long.txt" 2>&1
rc=$?
grep -vE '^# rank ' "$tmp/long.txt" | sed 's/^/    /'
[ "$rc" = 0 ] || fail "long round: exit $rc, expected 0 (a long round was taken for a dead peer)"
later "long round: results file" "$check" "$tmp/long.h5" long 450 1.5

# A hung rank (SIGSTOP: its NIC still answers, the process does not) mid-round: rank 0 names
# it from its missing beats, every survivor names it, the file says so; exit 3. The run
# would last 60 s: only liveness can end it before the hang bound.
echo "== hung: mpirun -np 4 rdmamesh -D 60 --timeout 3, SIGSTOP to rank 2 once traffic runs"
timeout 300 mpirun -np 4 "$bin" -s 64K -D 60 --timeout 3 -o "$tmp/hung.h5" >"$tmp/hung.txt" 2>&1 &
launcher=$!
for _ in $(seq 600); do grep -q '^#pattern' "$tmp/hung.txt" && break; sleep 0.2; done
sleep 2
stopped_pid=$(rank_pid 2)
kill -STOP $stopped_pid
stopped_at=$SECONDS
wait $launcher
rc=$?
kill -KILL $stopped_pid 2>/dev/null
grep -vE '^# rank |PMIX ERROR' "$tmp/hung.txt" | sed 's/^/    /'
echo "   exit $rc, $((SECONDS - stopped_at)) s after the SIGSTOP"
[ "$rc" != 124 ] || fail "hung: nobody named the hung rank before the 300 s hang bound"
[ "$rc" = 3 ] || fail "hung: exit $rc, expected 3"
grep -q "^rdmamesh: error: rank 0 (softroce-vm): rank 2 (softroce-vm) stopped answering (heard nothing from it" "$tmp/hung.txt" ||
  fail "hung: rank 0 does not name rank 2"
later "hung: results file" "$check" "$tmp/hung.h5" incomplete 0 "rank 2 (softroce-vm) stopped answering"

# kill -9 of a rank mid-sweep: the job keeps its finished sizes as a sweep, and says why it
# ended, under mpirun's teardown (SIGTERM to the rest) and under a launcher that lets the
# survivors run on (--enable-recovery, as srun). Under recovery the survivors must find the dead
# rank themselves (no sign of life for --timeout: 5 s here, so the case lasts seconds, not the
# default 30), name it and its host, keep the finished runs and exit 3 (tools/bench-faults
# times how long that takes). mpirun --enable-recovery itself exits 0 whatever its ranks
# return, so each rank's exit code is kept by a wrapper.
# (under teardown the ranks run bare: mpirun's SIGTERM must reach rdmamesh, not a wrapper)
for how in teardown recovery; do
  ranks=(-np 3 "$bin")
  [ "$how" = recovery ] &&
    ranks=(--enable-recovery -np 3 bash -c '"$0" "$@"; echo $? >"'"$tmp"'/cut-recovery.rc.$OMPI_COMM_WORLD_RANK"' "$bin")
  # rank 1 SIGKILLs itself 0.5 s into run 2 (counted from the run's start): sizes 4K and 16K
  # are finished, whatever the load
  launch "cut-$how" kill:1:0.5:2 -- "${ranks[@]}" --pattern pairs --sizes 4K,16K,64K,256K,1M -n 200 --timeout 5 \
    -o "$tmp/cut-$how.h5"
  [ "$rc" != 124 ] || fail "cut sweep ($how): hung until the 300 s hang bound"
  # mpirun --enable-recovery exits 0 whatever its ranks return; its teardown must not
  [ "$how" = recovery ] || [ "$rc" != 0 ] || fail "cut sweep ($how): exit 0 after a rank died"
  want="interrupted by SIGTERM"
  if [ "$how" = recovery ]; then
    want="rank 1 (softroce-vm) stopped answering"
    for r in 0 2; do
      [ "$(cat "$tmp/cut-$how.rc.$r" 2>/dev/null)" = 3 ] ||
        fail "cut sweep ($how): rank $r exited $(cat "$tmp/cut-$how.rc.$r" 2>/dev/null), expected 3"
      grep -q "^rdmamesh: error: rank $r (softroce-vm): rank 1 (softroce-vm) stopped answering" "$tmp/cut-$how.txt" ||
        fail "cut sweep ($how): rank $r does not name rank 1 and its host"
    done
  fi
  later "cut sweep ($how): results file" "$check" "$tmp/cut-$how.h5" cut-sweep 2 "$want"
done
finish
