#!/usr/bin/env bash
# On the emulated 2-tier RoCE fabric (tools/softroce-vm --nodes 6 --leaves 3 --slurm; this runs on
# node1): leaf1 holds node1 and node2, leaf2 node3 and node4, leaf3 node5 and node6, all under
# one spine, one rank per node (two per node on 2 vCPUs: what a shaped node leaves idle goes to
# its leaf-mate's ranks, which then read slow beside it); the tree is in $RDMAMESH_TOPOLOGY and in
# Slurm (TopologyPlugin=topology/tree). Three leaves, not two: pairs through the spine are judged
# against pairs through the spine (crossing bridges costs CPU here, as oversubscription does on a
# real fabric), and with two leaves every one of them crosses both uplinks, so nothing beside
# them would say how fast they should be. A healthy srun job finds Slurm's tree by itself
# (scontrol show topology) and counts nothing. Faults made by the kernel's traffic control, not
# by rdmamesh: tbf (half of the healthy rate) on leaf3's uplink (up3, what leaves leaf3 for
# the spine) names that uplink and no node under it (exit 5, its verdict file counting that one
# cause, with --retest as a health job runs: the run names it, or where its noise hides it the
# uplink's pairs alone against pairs through the other leaves' uplinks do; a rank the run also
# names, slow for that run only, is cleared alone); tbf on node5's own port, found by the Slurm health job running --pattern
# spread (as above RDMAMESH_SPREAD_ABOVE nodes), names node5, not its leaf's uplink, and drains
# node5 alone.
source "$(dirname "$0")/lib.sh"
[ "${RDMAMESH_VM_NODES:-0}" = 6 ] && [ -s "${RDMAMESH_TOPOLOGY:-}" ] ||
  { echo "fabric_test: run me with tools/softroce-vm --nodes 6 --leaves 3 --slurm"; exit 2; }
six=(--host node1:1,node2:1,node3:1,node4:1,node5:1,node6:1 --bind-to none)
# unpinned: the six emulated nodes share the VM's 2 vCPUs, and pinned by local rank every rank
# sat on the first (each waited for it 85 % of the run, rxe's responders starved with them, and
# QPs failed with remote invalid request on paths no tc touched, 2 of the last 4 CI runs)
fine=(-s 4K -Q 1 -D 2 --warmup 0.3 --bind none)
root_tc() { nsenter --net=/proc/1/ns/net tc "$@"; }
for dev in up3 roce5; do root_tc qdisc del dev "$dev" root 2>/dev/null; done  # a failed earlier test's leftover
sed 's/^/    topology.conf: /' "$RDMAMESH_TOPOLOGY"

# healthy, under srun, as a health job runs it (--retest): Slurm's tree found without a flag,
# nothing counted. With one rank per node on 2 vCPUs the run alone can name a node whose rank
# waited for a CPU (node5's sends at 80 % inside ±3 %, an idle CI run, 2026-11-25); its sends
# alone beside control pairs are fine, and the verdict clears it (or, where its rank waited for
# a CPU alone too, counts the host, never the network: network_healthy)
echo "== healthy: srun -N 6 --ntasks-per-node 1 --cpu-bind=none --mpi=pmix rdmamesh ${fine[*]} --retest"
srun -N 6 --ntasks-per-node 1 --cpu-bind=none --mpi=pmix "$bin" "${fine[@]}" --retest --quiet -o "$tmp/healthy.h5" \
  >"$tmp/healthy.txt" 2>&1
rc=$?
grep -E "^# (topology|slow|healthy|judged|not judged|verdict|retest)|^#   |rdmamesh: error" "$tmp/healthy.txt" |
  sed 's/^/    /'
[ "$rc" = 0 ] || [ "$rc" = 5 ] || { cat "$tmp/healthy.txt"; fail "healthy: exit $rc, expected 0 (or 5: host causes only)"; }
grep -q "^# topology: scontrol show topology: 4 switch(es), 3 leaves; 6 of the job's 6 node(s) under them, 3 uplink(s) judged$" \
  "$tmp/healthy.txt" || fail "healthy: Slurm's tree was not read (no '# topology: scontrol show topology' line)"
network_healthy healthy "$tmp/healthy.txt"
later "healthy: the verdict file and /outliers say healthy (or the host), /topology holds Slurm's tree" \
  "$here/check_verdict.py" "$tmp/healthy.h5" "$tmp/healthy.verdict.json" --healthy-network --topology leaf1,leaf2,leaf3,spine

# sick NAME DEVICE RANKS EXPECTED_LINE [LINE_IF_FAILED] -- what leaves through DEVICE (RANKS' sends to
# the others in the healthy run) shaped to half, then one job (two where the first reads healthy, a
# run's noise). Where rxe gave up on QPs through the shaped queue (each failed pair with an end in
# RANKS), those pairs are the fault's and judged by nothing else: LINE_IF_FAILED is then what the
# pairs still measured must show.
# Half, not a quarter: at a quarter the shaped queue's side effects slowed pairs that do not
# cross it (an idle clean-clone run named leaf2's way down, and node5's port as its leaf's
# uplink, 2026-11-25); at half every idle run named the right one
sick() {
  local name=$1 dev=$2 ranks=$3 want=$4 want_failed=${5:-$4} kbit left=2 rc
  kbit=$(awk -v g="$(egress_gbps "$tmp/healthy.txt" $ranks)" 'BEGIN { printf "%d", g * 1e6 / 2 }')
  echo "== $name: tbf on $dev at $kbit kbit/s, half of what ranks $ranks sent through it in the healthy run"
  [ "$kbit" -gt 0 ] || { fail "$name: no egress measured for ranks $ranks"; return; }
  root_tc qdisc add dev "$dev" root tbf rate "${kbit}kbit" burst 256kb latency 400ms || { fail "$name: tc"; return; }
  while :; do
    mpirun "${six[@]}" "$bin" "${fine[@]}" --retest --topology "$RDMAMESH_TOPOLOGY" --quiet -o "$tmp/$name.h5" \
      >"$tmp/$name.txt" 2>&1
    rc=$?
    grep -E "^# (slow|healthy|judged|verdict)|^#   |rdmamesh: error" "$tmp/$name.txt" | sed 's/^/    /'
    left=$((left - 1))
    [ "$rc" = 0 ] && [ "$left" -gt 0 ] || break
    missed "$name"
    for f in "$tmp/$name".{h5,verdict.json,txt}; do mv "$f" "$f.missed"; done
  done
  root_tc -s qdisc show dev "$dev" | sed -n '1,2p' | sed 's/^/    tc: /'
  root_tc qdisc del dev "$dev" root
  if [ "$rc" != 5 ]; then
    failed_at "$tmp/$name.txt" $ranks || { cat "$tmp/$name.txt"; fail "$name: exit $rc, expected 5"; return; }
    echo "   $name: pair(s) $(sed -n 's/^# failed pairs: //p' "$tmp/$name.txt") failed, each with an end at ranks $ranks"
    want=$want_failed
  fi
  grep -qE "$want" "$tmp/$name.txt" || fail "$name: no line /$want/"
  # anything else the run names must be the verdict's `seen, not counted` (check_verdict.py)
}
# (its way down may read slow too: what comes down waits on acknowledgements going up)
# Where the sends up it failed (rxe gave up on the shaped queue), its way down is what is left to read.
sick uplink up3 "4 5" "^# slow: uplink leaf3-spine \(node5,node6\): up at [0-9.]+ %( and down at [0-9.]+ %)? of the median|^#   uplink leaf3-spine \(node5,node6\): up at [0-9.]+ % of the control pairs alone in the retest" \
  "^# slow: uplink leaf3-spine \(node5,node6\): (up|down) at [0-9.]+ %"
later "uplink: the verdict file counts leaf3's uplink alone, nothing to drain" "$here/check_verdict.py" \
  "$tmp/uplink.h5" "$tmp/uplink.verdict.json" --uplink leaf3-spine --topology leaf1,leaf2,leaf3,spine
later "uplink: analysis/report draws the tree with leaf3's uplink red, the heatmap leaf by leaf" \
  "$here/check_report.py" fabric "$tmp/uplink.h5" leaf3-spine

# node5's own port at half, found by the Slurm health job as a large allocation runs it: above
# RDMAMESH_SPREAD_ABOVE nodes (here 5) --pattern spread, each rank against partners on the other
# leaves, one each way per round, and its slow pairs retested alone. It names node5 (not its
# leaf's uplink, which node6's sends cross at full rate) and drains node5 alone; where a busy run
# reads the port as the uplink (it slows its leaf-mate's pairs through it too), the retest of both
# sides of each node under it narrows the uplink to node5, whose sends alone stay slow while
# node6's read fine. A second job where the first reads healthy, as in sick()
kbit=$(awk -v g="$(egress_gbps "$tmp/healthy.txt" 4)" 'BEGIN { printf "%d", g * 1e6 / 2 }')
echo "== port: tbf on roce5 at $kbit kbit/s (half of what rank 4 sent in the healthy run), the health job with spread"
if [ "$kbit" -gt 0 ] && root_tc qdisc add dev roce5 root tbf rate "${kbit}kbit" burst 256kb latency 400ms; then
  left=2
  while :; do
    job=$(cd "$root" && RDMAMESH_SPREAD_ABOVE=5 RDMAMESH_PARTNERS=4 RDMAMESH_PER_NODE=1 RDMAMESH_SIZES=4K RDMAMESH_DURATION=1 \
      RDMAMESH_BIND=rdmamesh RDMAMESH_RESULTS="$tmp/results" RDMAMESH_ARGS="-Q 1 --warmup 0.3 --bind none" \
      sbatch --parsable --wait -N 6 -o "$tmp/port-%j.out" jobs/healthcheck.sbatch)
    rc=$?
    job=${job%%;*}
    grep -E "^# (pattern|slow|healthy|judged|verdict)|^#   |rdmamesh: error|^rdmamesh job" "$tmp/port-$job.out" | sed 's/^/    /'
    left=$((left - 1))
    [ "$rc" = 0 ] && [ "$left" -gt 0 ] || break
    missed port
  done
  root_tc -s qdisc show dev roce5 | sed -n '1,2p' | sed 's/^/    tc: /'
  root_tc qdisc del dev roce5 root
  grep -q "6 nodes, above RDMAMESH_SPREAD_ABOVE=5: --pattern spread --partners 4" "$tmp/port-$job.out" ||
    fail "port: the health job did not say it runs spread above RDMAMESH_SPREAD_ABOVE"
  if [ "$rc" = 1 ] && failed_at "$tmp/port-$job.out" 4; then
    echo "   port: pair(s) $(sed -n 's/^# failed pairs: //p' "$tmp/port-$job.out") failed at node5"
  else
    [ "$rc" = 5 ] || fail "port: the health job exited $rc, expected 5 (degraded)"
  fi
  sinfo -N -o "%N %T %E" | sed 's/^/    /'
  [ "$(drained)" = "node5 " ] || fail "port: drained '$(drained)', expected node5 alone"
  sinfo -h -n node5 -o "%E" | grep -q "^rdmamesh: " || fail "port: node5's drain reason is not rdmamesh's"
  for n in $(drained); do scontrol update NodeName="$n" State=RESUME; done
  later "port: the spread run's verdict counts node5 alone, and drains it" "$here/check_verdict.py" \
    "$tmp/results/rdmamesh-$job.h5" "$tmp/results/rdmamesh-$job.verdict.json" --node node5
else
  fail "port: no tc shaping ($kbit kbit/s)"
fi
finish
