#!/usr/bin/env bash
# A real Slurm on the emulated 3-node cluster (tools/softroce-vm --nodes 3 --slurm; this runs on
# node1, where the client commands reach slurmctld): jobs/mesh.sbatch and jobs/scaling.sbatch run
# as multi-node allocations and write valid files whose ranks sit on node1..node3 and whose root
# carries the SLURM_* context, under srun and under mpirun; a failed pair fails the job; the
# health job drains a node whose port the kernel slows; scancel during the mesh job leaves a
# file marked interrupted with every finished run in it.
source "$(dirname "$0")/lib.sh"
[ "${RDMAMESH_VM_NODES:-0}" = 3 ] || { echo "slurm_test: run me with tools/softroce-vm --nodes 3 --slurm"; exit 2; }
sinfo -h -N -o "%N %T" | sort | tr '\n' ' ' | grep -q "node1 idle node2 idle node3 idle" ||
  { sinfo -N; echo "slurm_test: the three nodes are not idle"; exit 2; }
export RDMAMESH_BIN=$bin RDMAMESH_RESULTS=$tmp/results
# the jobs' reports and plots run on the host, after this part (tests/vm/deferred)
export RDMAMESH_ANALYSIS=$here/deferred RDMAMESH_TEST_HOSTDIR=$hostdir
repo=$(cd "$here/../.." && pwd)
cd "$repo" || exit 2  # sbatch from the checkout root, as the jobs' headers say

# submit NAME SBATCH_ARGS…: sbatch --wait; sets $job and $rc, prints the job's output
submit() {
  local name=$1 start=$SECONDS
  shift
  echo "== $name: sbatch --wait $*"
  job=$(sbatch --parsable --wait -o "$tmp/$name-%j.out" "$@")
  rc=$?
  job=${job%%;*}
  cat "$tmp/$name-$job.out" 2>/dev/null
  # for the log only (where CI's minutes go), never a verdict
  echo "(job $job exited $rc after $((SECONDS - start)) s)"
}

# 1. the mesh job: mesh + pairs over two sizes, one rank per node, the report beside the file
RDMAMESH_SIZES=4K,64K RDMAMESH_DURATION=0.3 RDMAMESH_ARGS="--warmup 0.1" submit mesh -N 3 jobs/mesh.sbatch
out=$tmp/results/rdmamesh-$job.h5
mesh_h5=$out  # its pairs run: what one pair alone carries through a port (the sick health job's shaping)
if [ "$rc" = 0 ] && [ -f "$out" ]; then
  grep -q "srun, 3 node(s) x 1" "$tmp/mesh-$job.out" || fail "mesh job: did not launch with srun --mpi=pmix"
  later "mesh job: results file" "$here/check_results.py" "$out" --ranks 3 --op write_imm --patterns mesh,pairs --sizes 4096,65536
  later "mesh job: ranks, nodes, SLURM_* attributes" "$here/check_cluster.py" "$out" --nodes 3 --per-node 1 --map block --slurm-job "$job"
  grep -q "report: deferred to the host: analysis/report rdmamesh-$job.h5 -o rdmamesh-$job-report" "$tmp/mesh-$job.out" ||
    fail "mesh job: did not call the report on its file"
  later "mesh job: the report it called" /usr/bin/test -s "rdmamesh-$job-report/summary.md"
else
  fail "mesh job: exit $rc, file $(ls "$out" 2>&1)"
fi

# 2. the scaling job: 2 ranks per node, 1 and 2 active, three sizes in one launch, one plot (its
# points, efficiency and knee against the file) and the report's scaling section. Up to 64 KiB
# with a window of 16: the job's default 1 MiB queues 128 MiB per pair, and draining that at
# TCG speed took a minute while proving nothing the smaller sizes do not.
RDMAMESH_PER_NODE=2 RDMAMESH_SIZES=4K,16K,64K RDMAMESH_DURATION=0.5 RDMAMESH_ARGS="--warmup 0.2 -t 16" \
  submit scaling -N 3 jobs/scaling.sbatch
out=$tmp/results/rdmamesh-$job.h5
if [ "$rc" = 0 ] && [ -f "$out" ]; then
  later "scaling job: ranks, nodes, points, SLURM_* attributes" "$here/check_cluster.py" "$out" --nodes 3 --per-node 2 \
    --map block --scaling --slurm-job "$job"
  later "scaling job: the plot it called" /usr/bin/test -s "rdmamesh-$job-scaling.png"
  later "scaling job: the plot's points, efficiency and knee, its report" "$here/check_scaling.py" plot "$out" \
    4096,16384,65536 "rdmamesh-$job-report"
  grep -q "# scaling: 1 rank(s) per node active" "$tmp/scaling-$job.out" || fail "scaling job: no 1-per-node step"
else
  fail "scaling job: exit $rc, file $(ls "$out" 2>&1)"
fi

# 3. a failed pair fails the job: rdmamesh's exit code is the job's. Launched by the fallback
# launcher, mpirun inside the allocation (Open MPI reads it from Slurm): one job proves both
RDMAMESH_LAUNCHER=mpirun RDMAMESH_FAULT=rkey:0:2 RDMAMESH_SIZES=4K RDMAMESH_PATTERNS=mesh RDMAMESH_DURATION=0.5 \
  submit failed -N 3 jobs/mesh.sbatch
out=$tmp/results/rdmamesh-$job.h5
[ "$rc" = 1 ] || fail "failed-pair job: sbatch --wait gave $rc, rdmamesh exits 1 on a failed pair"
grep -q "mpirun, 3 node(s) x 1" "$tmp/failed-$job.out" || fail "failed-pair job: did not launch with mpirun"
later "failed-pair job: file" "$here/check_faults.py" "$out" pair-failed 0 2
later "mpirun job: ranks, nodes, SLURM_* attributes" "$here/check_cluster.py" "$out" --nodes 3 --per-node 1 --map block \
  --slurm-job "$job"
# the job calls its report even when rdmamesh failed; the report opens with the failed pair
later "failed-pair job: the report opens with the failed pair" /bin/grep -qE \
  "^- pair rank 0 \(node1, rxe_node1\) -> rank 2 \(node3, rxe_node3\): failed in 1 of 1" "rdmamesh-$job-report/summary.md"

# 4. the health job on a healthy cluster: healthy, nothing drained; then with node2's RoCE port
# shaped by the kernel (tc tbf at a third of what it carried): node2 drained with rdmamesh's
# reason, node1 and node3 left idle. 4 KiB with every WR signaled: counts fine enough under TCG.
# Why a third: the retest judges node2's pairs alone against control pairs alone, and here the
# controls differ threefold by whether their two ranks, pinned by local rank, share one of the
# VM's 2 vCPUs (a real cluster gives each node its own CPUs); the retest's bound then sits at its
# widest, half the controls' median, and a port at half of its mesh's egress reads just that
# alone (46-57 %, cleared in 2 of 3 jobs by hand and in a CI run) where a third reads 26-54 %
# against it (3 of 3). (At a quarter, the CPU node2's starved ranks left to the others once
# made two ranks of other nodes slower beside it, which the verdict's retest now clears.)
root_tc() { nsenter --net=/proc/1/ns/net tc "$@"; }
# recheck: node2 drained by the sick health job, its port healthy again. A node drained for
# another reason is never rechecked (a dry run says so, and that three nodes are needed); then
# jobs/rdmamesh-recheck puts node2 back in service once the check passes on it, and the node
# check, reading that latest verdict, passes it too
recheck() {
  local out rc
  echo "== recheck: node3 drained by hand, jobs/rdmamesh-recheck -n; node3 resumed, jobs/rdmamesh-recheck"
  scontrol update NodeName=node3 State=DRAIN Reason="DIMM B2 errors"
  out=$(RDMAMESH_RESULTS=$tmp/results jobs/rdmamesh-recheck -n 2>&1)
  echo "$out" | sed 's/^/    /'
  grep -q "^rdmamesh-recheck: node3 left drained: its reason is not rdmamesh's (DIMM B2 errors)$" <<<"$out" ||
    fail "recheck: a node drained for another reason not left alone"
  grep -q "^rdmamesh-recheck: node2: drained by rdmamesh (rdmamesh: " <<<"$out" ||
    fail "recheck: node2 not found drained by rdmamesh"
  grep -q "the check needs 3 nodes at least" <<<"$out" || fail "recheck: one reference node for one drained node not refused"
  scontrol update NodeName=node3 State=RESUME
  # (a resumed node reads idle a moment later: a CI run's recheck found one reference node)
  for _ in $(seq 1 120); do [ "$(sinfo -h -N -n node3 -o %T)" = idle ] && break; sleep 0.5; done
  # unpinned (srun --cpu-bind=none, rdmamesh --bind none), as vm.rails' and vm.verdict's
  # retesting jobs: pinned by local rank, a pair whose two ranks share one of the VM's 2 vCPUs
  # is slow alone, and a loaded machine makes that a healthy node's pairs still slow alone (a
  # real node gives each rank its own core)
  RDMAMESH_RESULTS=$tmp/results RDMAMESH_RECHECK_WAIT=600 RDMAMESH_PER_NODE=2 RDMAMESH_SIZES=4K RDMAMESH_DURATION=2 \
    RDMAMESH_BIND=rdmamesh RDMAMESH_ARGS="-Q 1 --warmup 0.3 --bind none" jobs/rdmamesh-recheck >"$tmp/recheck.txt" 2>&1
  rc=$?
  sed 's/^/    /' "$tmp/recheck.txt"
  [ "$rc" = 0 ] || fail "recheck: exit $rc, expected 0 (node2 back in service)"
  grep -q "^rdmamesh-recheck: node2 passed its recheck (job [0-9]*): back in service$" "$tmp/recheck.txt" ||
    fail "recheck: node2 did not pass"
  [ -z "$(drained)" ] || fail "recheck: drained '$(drained)' after it, expected none"
  scontrol show reservation 2>&1 | grep -q "ReservationName=rdmamesh-recheck" && fail "recheck: its reservation left behind"
  RDMAMESH_NODE=node2 jobs/rdmamesh-node-check "$tmp/results" 24 || fail "recheck: the node check still fails node2"
}
# the health jobs unpinned, as the recheck below and for the same reason: pinned by local rank,
# every node's second rank is on the VM's second vCPU, a retest control between two of them
# reads slow alone, and controls that far apart can read the shaped node fine beside them
health() {
  RDMAMESH_PER_NODE=2 RDMAMESH_SIZES=4K RDMAMESH_DURATION=2 RDMAMESH_BIND=rdmamesh \
    RDMAMESH_ARGS="-Q 1 --warmup 0.3 --bind none" submit "$1" -N 3 jobs/healthcheck.sbatch
}
# first, an allocation too small to judge (2 nodes, one rank each: two pairs, no noise to measure them
# against) is not healthy: the job says it could judge nothing, exits 6, drains nothing
RDMAMESH_PER_NODE=1 RDMAMESH_SIZES=4K RDMAMESH_DURATION=1 submit health-tiny -N 2 jobs/healthcheck.sbatch
[ "$rc" = 6 ] || fail "too small a health job: exit $rc, expected 6 (unjudged)"
grep -q "the check could judge nothing" "$tmp/health-tiny-$job.out" || fail "too small a health job: does not say so"
grep -q "^# verdict: unjudged: none of the 1 bandwidth run(s) could be judged" "$tmp/health-tiny-$job.out" ||
  fail "too small a health job: no '# verdict: unjudged' line"
[ -z "$(drained)" ] || fail "too small a health job: drained $(drained)"
health health-ok
[ "$rc" = 0 ] || fail "healthy health job: exit $rc, expected 0"
grep -q "healthy by the verdict" "$tmp/health-ok-$job.out" || fail "healthy health job: does not say healthy"
if [ -n "$(drained)" ]; then
  fail "healthy health job: drained $(drained)"
  # back, or every later 3-node job waits for nodes until the hang bound
  for n in $(drained); do scontrol update NodeName="$n" State=RESUME; done
fi
later "healthy health job: its verdict" "$here/check_verdict.py" "$tmp/results/rdmamesh-$job.h5" \
  "$tmp/results/rdmamesh-$job.verdict.json" --healthy
egress=$(egress_gbps "$tmp/health-ok-$job.out" 2 3)
# The retest reads node2's pairs alone, one pair at a time through its port: a tbf binds them only
# below what one pair carries alone, and on a loaded machine (each pair CPU-bound under TCG) a
# third of the mesh's egress once sat above that (0.0247 Gb/s against 0.020-0.029 alone), so
# node2 read fine alone and was cleared. What node2 sent alone in the mesh job's `pairs` run
# (one rank per node, 4 KiB) bounds the shaping too: at 40 % of it, a pair alone reads below
# the retest's slow bound (50-74 % of the controls) however the load moves the rates.
lone=$(/usr/bin/python3 - "$mesh_h5" 2>/dev/null <<'EOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as f:
    for r in f["runs"].values():
        if r.attrs["pattern"] == "pairs" and int(r.attrs["size"]) == 4096:
            row = r["tx_bw"][()][1]  # rank 1: node2
            print(f"{np.nanmedian(row[[0, 2]]) * 8 / 1e9:.6f}")
            break
EOF
)
kbit=$(awk -v g="$egress" -v l="${lone:-0}" 'BEGIN { k = g * 1e6 / 3; if (l > 0 && l * 1e6 * 0.4 < k) k = l * 1e6 * 0.4; printf "%d", k }')
echo "== node2's port carried $egress Gb/s in the mesh, one pair alone ${lone:-?} Gb/s: tbf at $kbit kbit/s"
if [ "$kbit" -gt 0 ] && root_tc qdisc add dev roce2 root tbf rate "${kbit}kbit" burst 256kb latency 400ms; then
  # one job: under stress-ng the run's noise (±37 %) once hid node2, whose sends the retest still
  # found slow alone (2026-11-25); the verdict now counts that (basis retest)
  # as a user who may not drain (the job's drain command run as nobody, against the real
  # slurmctld): the job says so and drains nothing, and the verdict's list is what an operator
  # then applies
  RDMAMESH_SCONTROL="setpriv --reuid=65534 --regid=65534 --clear-groups scontrol" health health-sick
  root_tc qdisc del dev roce2 root
  grep -q "may not drain node2 (.*); the list to drain, with reasons, is in " "$tmp/health-sick-$job.out" ||
    fail "sick health job as a user who may not drain: no line saying so"
  [ -z "$(drained)" ] || fail "sick health job as a user who may not drain: drained '$(drained)'"
  /usr/bin/python3 -c 'import json, sys
for d in json.load(open(sys.argv[1]))["drain"]:
    print(d["node"] + "\t" + d["reason"])' "$tmp/results/rdmamesh-$job.verdict.json" |
    while IFS=$'\t' read -r node reason; do scontrol update NodeName="$node" State=DRAIN Reason="$reason"; done
  # a QP rxe failed at the shaped port (see failed_at) is node2's: it still drains node2 alone
  if [ "$rc" = 1 ] && failed_at "$tmp/health-sick-$job.out" 2 3; then
    echo "   sick health job: pair(s) $(sed -n 's/^# failed pairs: //p' "$tmp/health-sick-$job.out") failed at node2"
  else
    [ "$rc" = 5 ] || fail "sick health job: exit $rc, expected 5 (degraded)"
  fi
  sinfo -N -o "%N %T %E" | sed 's/^/    /'
  [ "$(drained)" = "node2 " ] || fail "sick health job: drained '$(drained)', expected node2 alone"
  sinfo -h -n node2 -o "%E" | grep -q "^rdmamesh: " || fail "sick health job: node2's drain reason is not rdmamesh's"
  # the retest agrees: most of node2's sends, two at least, stay slow alone (one fast control
  # once stretched the retest's bound to 12 %, and node2's pairs at 21 % read fine while the run
  # still drained it). Not every one: a pair alone may use all the shaped port carries, once
  # 0.059 Gb/s at a tbf of 0.0595, 85 % of the controls. Read from node2's part as the verdict
  # counts it (`N of its M pair(s) alone below --slow`), or from the pairs' own lines: one pair
  # against controls that spread threefold on a busy VM is undecided alone (8-109 %) while the
  # node's seven together read 16-38 %
  sick=$(grep -E '^# retest of run 0: rank [23] \(node2, ' "$tmp/health-sick-$job.out" || true)
  slow=$(grep -c 'still slow alone' <<<"$sick")
  part=$(sed -nE 's/^#   node node2 \(ranks 2,3\): its sends .*; ([0-9]+) of its ([0-9]+) pair\(s\) alone below --slow$/\1 \2/p' \
    "$tmp/health-sick-$job.out" | head -1)
  read -r below of <<<"${part:-0 0}"
  { [ "$slow" -ge 2 ] && [ $((2 * slow)) -gt "$(grep -c . <<<"$sick")" ]; } ||
    { [ "$below" -ge 2 ] && [ $((2 * below)) -gt "$of" ]; } ||
    fail "sick health job: $slow of node2's $(grep -c . <<<"$sick") retested sends still slow alone (its part: ${below} of ${of} below --slow), expected most and two at least"
  later "sick health job: its verdict names node2" "$here/check_verdict.py" "$tmp/results/rdmamesh-$job.h5" \
    "$tmp/results/rdmamesh-$job.verdict.json" --node node2
  recheck
  # every drained node back, whatever this case found: the cancel job below needs all three
  for n in $(drained); do scontrol update NodeName="$n" State=RESUME; done
else
  fail "sick health job: no tc shaping ($kbit kbit/s)"
fi

# 5. scancel mid-sweep: Slurm's SIGTERM; the file keeps every finished run, marked interrupted
echo "== cancel: sbatch -N 3 jobs/mesh.sbatch, scancel after the first run is written"
job=$(RDMAMESH_SIZES=1K,2K,4K,8K,16K,32K,64K RDMAMESH_PATTERNS=mesh RDMAMESH_DURATION=0.5 RDMAMESH_ARGS="--warmup 0.2" \
  sbatch --parsable -N 3 -o "$tmp/cancel-%j.out" jobs/mesh.sbatch)
job=${job%%;*}
out=$tmp/results/rdmamesh-$job.h5
# the first run is written once the second one starts (its progress line): a grep, where a
# Python with h5py per poll cost seconds under TCG while the job ran on
# (hang bound only: the first run is written within seconds on an idle machine)
start=$SECONDS
for _ in $(seq 1 600); do
  grep -qE '^\[2/7\] ' "$tmp/cancel-$job.out" 2>/dev/null && break
  squeue -h -j "$job" 2>/dev/null | grep -q . || break
  sleep 0.5
done
scancel "$job"
for _ in $(seq 1 600); do squeue -h -j "$job" 2>/dev/null | grep -q . || break; sleep 0.5; done
echo "(job $job cancelled after $((SECONDS - start)) s)"
cat "$tmp/cancel-$job.out" 2>/dev/null
squeue -h -j "$job" 2>/dev/null | grep -q . && fail "cancel: job $job still queued 300 s after scancel"
# every run that started is in the file, the last one cut short (marked interrupted), the rest whole
started=$(grep -cE '^\[[0-9]+/7\] ' "$tmp/cancel-$job.out")
later "cancel: file (started $started runs)" "$here/check_faults.py" "$out" cancelled "$started"
finish
