#!/usr/bin/env bash
# Inside the SoftRoCE VM: --connect round against --connect all. Same exact per-pair counts and
# verified payloads for shift and pairs at N = 4 and 8; the QPs each rank holds while a round
# runs, counted from rdma-core's view (`rdma resource show qp`), never more than the round's
# partners need (and N-1 with all, so the count can tell them apart); the device-limit check
# that a job fits per round where it would not with every peer connected.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

for np_ in 4 8; do
  for p in shift pairs; do
    for c in all round; do
      mesh "$p$np_-$c" "$np_" "--op write_imm --patterns $p --sizes 4096,65536 --iters 150 --verify" -- \
        --pattern "$p" --sizes 4K,64K -n 150 --verify --connect "$c" --bind none
    done
    later "$p$np_-round: differs from $p$np_-all" "$here/check_same.py" "$tmp/$p$np_-all.h5" "$tmp/$p$np_-round.h5"
  done
done
grep -q "^# connect round: .* ms a round" "$tmp/shift8-round.txt" || fail "shift8-round: no per-round connect line"

# qp_list: "PID QPN" for every QP an rdmamesh process holds, as rdma-core lists them
qp_list() {
  rdma resource show qp 2>/dev/null | grep 'comm rdmamesh' |
    sed -n 's/.* lqpn \([0-9]*\) .* pid \([0-9]*\) comm rdmamesh.*/\2 \1/p' | sort -u
}

# max_qps NP ARGS...: "SEEN HELD" for the job: SEEN, the most QPs any one dump listed for an
# rdmamesh process; HELD, the most it provably held at once. A dump walks the device's QPs
# without a lock, so one taken while a round swaps QPs can list a destroyed QP and its
# replacement (seen under load: 5 where a rank held 4). A QP in two consecutive dumps was alive
# from its first listing to its second, so those in both were alive together: HELD never
# exceeds what the process held. It can fall short of it (under TCG a dump can take seconds, and
# a round may end between two), which is why the lower bound is judged on SEEN, the upper on HELD.
max_qps() {
  local np=$1 seen=0 held=0 n
  shift
  mpirun -np "$np" "$bin" "$@" --bind none --quiet >"$tmp/qps.txt" 2>&1 &
  local job=$!
  qp_list >"$tmp/qps.prev"
  while kill -0 "$job" 2>/dev/null; do
    sleep 0.1
    qp_list >"$tmp/qps.now"
    n=$(awk '{print $1}' "$tmp/qps.now" | uniq -c | sort -rn | awk 'NR==1 {print $1}')
    [ -n "$n" ] && [ "$n" -gt "$seen" ] && seen=$n
    n=$(comm -12 "$tmp/qps.prev" "$tmp/qps.now" | awk '{print $1}' | uniq -c | sort -rn | awk 'NR==1 {print $1}')
    [ -n "$n" ] && [ "$n" -gt "$held" ] && held=$n
    mv "$tmp/qps.now" "$tmp/qps.prev"
  done
  wait "$job" || { cat "$tmp/qps.txt" >&2; return 1; }
  echo "$seen $held"
}
for case in "shift 1 2" "shift 2 4" "pairs 1 1"; do
  read -r p q want <<<"$case"
  out=$(max_qps 6 --pattern "$p" -q "$q" -s 4K -D 0.5 --warmup 0.1 --connect round) ||
    { fail "qps $p -q $q: rdmamesh exited non-zero"; continue; }
  read -r seen held <<<"$out"
  echo "== QPs per rank, --pattern $p -q $q --connect round, 6 ranks: held at most $held, listed $seen (the round needs $want)"
  [ "$seen" -ge 1 ] && [ "$held" -le "$want" ] || fail "qps $p -q $q: a rank held $held QPs, the round needs $want"
done
out=$(max_qps 6 --pattern shift -s 4K -D 0.5 --warmup 0.1 --connect all) || fail "qps all: rdmamesh exited non-zero"
read -r seen held <<<"${out:-0 0}"
echo "== QPs per rank, --pattern shift --connect all, 6 ranks: listed $seen, held $held (every peer: 5)"
# no QP is swapped while an all-connected job runs, so one dump's count is what a rank holds
[ "$seen" = 5 ] && [ "$held" -le 5 ] || fail "qps shift all: a rank held $seen QPs, expected 5"

# the limit check: 4 ranks x 2 shift partners fit max_qp 8 per round; every peer (12) does not
echo "== RDMAMESH_TEST_MAX_QP=8: shift per round fits, --connect all does not"
out=$(env RDMAMESH_TEST_MAX_QP=8 mpirun -np 4 -x RDMAMESH_TEST_MAX_QP "$bin" --pattern shift -s 4K -n 50 2>&1) ||
  { echo "$out"; fail "max_qp 8, round: exit non-zero"; }
out=$(env RDMAMESH_TEST_MAX_QP=8 mpirun -np 4 -x RDMAMESH_TEST_MAX_QP "$bin" --pattern shift -s 4K -n 50 --connect all 2>&1) &&
  fail "max_qp 8, all: exit 0"
echo "$out" | grep "rdmamesh: error:" | sort -u
# an agreed setup error: one line for the job, naming the cheapest fix
[ "$(echo "$out" | grep -c "^rdmamesh: error:")" = 1 ] &&
  echo "$out" | grep -q "rdmamesh: error: the job needs 12 RC QPs on rxe0 .*max_qp is 8 (4 too many); use --connect round" ||
  fail "max_qp 8, all: not one error line naming --connect round"
finish
