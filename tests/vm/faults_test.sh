#!/usr/bin/env bash
# Inside the SoftRoCE VM: faults injected with RDMAMESH_FAULT (and real signals) end the way
# the README's fault table says: failed pairs named and isolated, corruption located, a dead
# rank named within 30 s, SIGTERM answered within a few seconds, and the results file kept.
source "$(dirname "$0")/lib.sh"
check="$here/check_faults.py"

# launch NAME ENV_FAULT -- MPIRUN_ARGS...: runs under a 90 s guard; sets rc and took
launch() {
  local name=$1 spec=$2
  shift 3
  echo "== $name: RDMAMESH_FAULT=$spec mpirun $*"
  local start=$SECONDS
  RDMAMESH_FAULT=$spec timeout 90 mpirun -x RDMAMESH_FAULT "$@" >"$tmp/$name.txt" 2>&1
  rc=$? took=$((SECONDS - start))
  grep -vE '^# rank |PMIX ERROR' "$tmp/$name.txt" | sed 's/^/    /'
  echo "   exit $rc after ${took}s"
}

# A bad rkey on one pair: that pair (both directions: it is one QP) fails with the status
# named, the other ten pairs finish, exit 1.
launch rkey rkey:1:2 -- -np 4 "$bin" -s 64K -D 2 --warmup 0.5 -o "$tmp/rkey.h5"
[ "$rc" = 1 ] || fail "rkey: exit $rc, expected 1 (run had failures)"
grep -q "^# failed pairs: 1->2 2->1$" "$tmp/rkey.txt" || fail "rkey: console does not list the failed pairs"
"$check" "$tmp/rkey.h5" pair-failed 1 2 || fail "rkey: results file"

# A flipped byte in message 7 of 0->3: --verify names pair, message and byte; exit 1.
launch corrupt corrupt:0:3:7 -- -np 4 "$bin" -s 64K -D 1 --warmup 0.5 --verify -o "$tmp/corrupt.h5"
[ "$rc" = 1 ] || fail "corrupt: exit $rc, expected 1"
grep -q "^# event: verify: rank 0 -> rank 3 lane 0 message 7: byte 32768 of 65536 is 0x" "$tmp/corrupt.txt" ||
  fail "corrupt: console lacks the mismatch line"
"$check" "$tmp/corrupt.h5" corrupt 0 3 7 || fail "corrupt: results file"

# kill -9 of rank 2 during the second run (first: 4K for 3 s, second: 64K, killed 5 s in).
# As under srun, the launcher lets the survivors run on (--enable-recovery): they must find
# the dead rank themselves, name it and its host, keep run 0 and exit non-zero, within 30 s.
# mpirun --enable-recovery itself exits 0 whatever its ranks return, so each rank's exit code
# is kept by a wrapper.
launch kill kill:2:5 -- --enable-recovery -np 4 bash -c '"$0" "$@"; echo $? >"'"$tmp"'/kill.rc.$OMPI_COMM_WORLD_RANK"' \
  "$bin" --sizes 4K,64K -D 3 --warmup 0.5 -o "$tmp/kill.h5"
[ "$rc" != 124 ] || fail "kill: the survivors hung until the 90 s guard"
[ "$took" -le 35 ] || fail "kill: survivors took ${took}s (kill at ~5 s; limit 30 s after it)"
for r in 0 1 3; do
  [ "$(cat "$tmp/kill.rc.$r" 2>/dev/null)" = 3 ] || fail "kill: rank $r exited $(cat "$tmp/kill.rc.$r" 2>/dev/null), expected 3"
done
for r in 0 1 3; do
  grep -q "^rdmamesh: error: rank $r (softroce-vm): rank 2 (softroce-vm) stopped answering" "$tmp/kill.txt" ||
    fail "kill: rank $r does not name rank 2 and its host"
done
"$check" "$tmp/kill.h5" incomplete 1 "rank 2 (softroce-vm) stopped answering" || fail "kill: results file"

# The same kill under a launcher that tears the job down itself (mpirun's default): fast,
# and the file still holds run 0, marked incomplete.
launch kill-default kill:2:5 -- -np 4 "$bin" --sizes 4K,64K -D 3 --warmup 0.5 -o "$tmp/killd.h5"
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "kill-default: exit $rc"
[ "$took" -le 20 ] || fail "kill-default: took ${took}s"
"$check" "$tmp/killd.h5" incomplete 1 "" || fail "kill-default: results file"

# SIGTERM to every rank (Slurm's time limit) during the second run: exit 4 within a
# few seconds, run 1 written as interrupted with what its interval measured.
echo "== sigterm: mpirun -np 4 rdmamesh --sizes 4K,64K -D 3, SIGTERM to every rank 1 s into the second run"
start=$SECONDS
timeout 90 mpirun -np 4 "$bin" --sizes 4K,64K -D 3 --warmup 0.5 -o "$tmp/term.h5" >"$tmp/term.txt" 2>&1 &
launcher=$!
# signal once the first run is on the console: 1 s into the second
for _ in $(seq 100); do grep -qE '^ +mesh +4096 ' "$tmp/term.txt" && break; sleep 0.2; done
sleep 1
pkill -TERM -x rdmamesh
signalled=$SECONDS
wait $launcher
rc=$? took=$((SECONDS - signalled))
grep -vE '^# rank ' "$tmp/term.txt" | sed 's/^/    /'
echo "   exit $rc, ${took}s after the signal"
[ "$rc" = 4 ] || fail "sigterm: exit $rc, expected 4"
[ "$took" -le 5 ] || fail "sigterm: took ${took}s after the signal"
[ "$(grep -c '^rdmamesh: error: interrupted by SIGTERM: wrote the 2 run(s)' "$tmp/term.txt")" = 1 ] ||
  fail "sigterm: rank 0 did not report the interruption exactly once"
"$check" "$tmp/term.h5" interrupted 2 || fail "sigterm: results file"
finish
