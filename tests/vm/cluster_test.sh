#!/usr/bin/env bash
# On the emulated 3-node RoCE cluster (tools/softroce-vm --nodes 3; this runs on node1): every
# rank on the node mpirun put it on, with that node's hostname and device; every pair moves
# data across the bridge; pairs/shift with ranks interleaved over the nodes; latency across
# nodes; the report's heatmap draws node lines where /ranks/node says. Every run of these healthy
# jobs (mesh, pairs, shift, spread; 4 KiB and 64 KiB; ranks in blocks and interleaved) reads healthy. (--scaling across the
# nodes runs in vm.slurm's scaling job.)
source "$(dirname "$0")/lib.sh"
[ "${RDMAMESH_VM_NODES:-0}" = 3 ] || { echo "cluster_test: run me with tools/softroce-vm --nodes 3"; exit 2; }
[ "$(hostname)" = node1 ] || fail "the command runs on $(hostname), not node1"
block=(--host "node1:2,node2:2,node3:2")
cyclic=(--host "node1:2,node2:2,node3:2" --map-by node)

# run NAME CHECK_CLUSTER_ARGS CHECK_RESULTS_ARGS -- MPIRUN_ARGS -- RDMAMESH_ARGS
run() {
  local name=$1 cc=$2 cr=$3 launch=()
  shift 4
  while [ "$1" != -- ]; do launch+=("$1"); shift; done
  shift
  echo "== $name: mpirun ${launch[*]} rdmamesh $* -o $tmp/$name.h5"
  if ! mpirun "${launch[@]}" "$bin" "$@" -o "$tmp/$name.h5" >"$tmp/$name.txt" 2>&1; then
    cat "$tmp/$name.txt"; fail "$name: rdmamesh exited non-zero"; return 1
  fi
  cat "$tmp/$name.txt"
  # a healthy cluster reads healthy (exit 0 above; the verdict file below): no pair below
  # --expect, and a part one run named (as often as its '# false alarms:' line says) is one the
  # verdict lists as seen, not counted
  grep -q "^# below" "$tmp/$name.txt" && fail "$name: a pair below --expect on a healthy cluster"
  not_counted "$name" "$tmp/$name.txt"
  case " $* " in
    *" --mode lat "*) ;;  # latency runs are not judged
    *) later "$name: the verdict file and /outliers say healthy" "$here/check_verdict.py" "$tmp/$name.h5" \
         "$tmp/$name.verdict.json" --healthy ;;
  esac
  # shellcheck disable=SC2086
  [ -z "$cr" ] || later "$name: results file" "$here/check_results.py" "$tmp/$name.h5" --ranks 6 $cr
  # shellcheck disable=SC2086
  later "$name: ranks and nodes" "$here/check_cluster.py" "$tmp/$name.h5" --nodes 3 --per-node 2 $cc
}

run mesh "--map block" "--op write_imm --sizes 4096,65536 --verify" -- "${block[@]}" -- \
  --sizes 4K,64K -D 0.5 --warmup 0.2 --verify
grep -q "# ranks 6  hosts 3: node1 (2 ranks), node2 (2 ranks), node3 (2 ranks)" "$tmp/mesh.txt" ||
  fail "mesh: the header does not list the three nodes"

# spread rides along: 6 ranks, 2 per node, no tree: offsets 2..4 take every rank off its node,
# three rounds of one partner each way (check_results checks the plan's pairs, and only they ran).
# One size, the smaller: what is checked here is the patterns' 18 rounds (a round ends when its
# messages in flight land, a 64 KiB window of them takes the emulator most of a second), and
# larger messages across nodes are the mesh's.
run pairs-shift "--map cyclic" "--op write --patterns pairs,shift,spread --sizes 4096 --verify" -- \
  "${cyclic[@]}" -- --op write --pattern pairs,shift,spread -s 4K -D 0.3 --warmup 0.1 --verify
grep -q "^# spread: 3 round(s), seed 1: every rank meets 3 partner(s) each way, on other nodes$" "$tmp/pairs-shift.txt" ||
  fail "pairs-shift: no '# spread:' header line with 3 partners each way on other nodes"


# 30 round trips a pair: six ranks that poll on the VM's 2 vCPUs leave a third of the pairs
# waiting a scheduler tick (12 ms) for each reply, pinned or not
run lat "--map cyclic" "--op write --mode lat --patterns pairs --sizes 64 --iters 30 --verify" -- "${cyclic[@]}" -- \
  --mode lat --op write --pattern pairs -s 64 -n 30 --verify

# --preflight: the NICs' settings compared before any traffic, nothing connected. Agreeing: exit
# 0. node3's port MTU lowered by the kernel (rxe then offers 1024 where the others offer 4096 on
# the fabric's jumbo MTU, tools/softroce-cluster):
# node3's NIC named with both figures, exit 5, and its verdict drains node3 for it
root_ip() { nsenter --net=/proc/1/ns/net ip "$@"; }
preflight() {
  local name=$1 want=$2 rc
  echo "== $name: mpirun --host node1:1,node2:1,node3:1 rdmamesh --preflight"
  mpirun --host node1:1,node2:1,node3:1 "$bin" --preflight -o "$tmp/$name.h5" >"$tmp/$name.txt" 2>&1
  rc=$?
  grep -E "^# (config|verdict|setup)|^#   |rdmamesh: error" "$tmp/$name.txt" | sed 's/^/    /'
  [ "$rc" = "$want" ] || { cat "$tmp/$name.txt"; fail "$name: exit $rc, expected $want"; }
}
preflight preflight-ok 0
grep -q "^# config: the job's NICs agree (link layer, MTU, rate, PCIe link, firmware)$" "$tmp/preflight-ok.txt" ||
  fail "preflight-ok: no line saying the NICs agree"
grep -q "^# verdict: healthy (no bandwidth run; the NICs' settings agree)$" "$tmp/preflight-ok.txt" ||
  fail "preflight-ok: the verdict is not healthy"
grep -q "connect 0/0" "$tmp/preflight-ok.txt" || fail "preflight-ok: QPs were connected"
root_ip link set roce3 mtu 1500
preflight preflight-mtu 5
root_ip link set roce3 mtu 9000
grep -q "^# config: NIC rxe_node3 of node3: MTU 1024, where 2 of 3 NICs have 4096$" "$tmp/preflight-mtu.txt" ||
  fail "preflight-mtu: node3's NIC not named by its MTU"
/usr/bin/python3 - "$tmp/preflight-mtu.verdict.json" <<'PY' || fail "preflight-mtu: the verdict file"
import json, sys
doc = json.load(open(sys.argv[1]))
counted = [(c["kind"], c["nodes"]) for c in doc["causes"] if c["counted"]]
assert doc["status"] == "degraded", doc["status"]
assert counted == [("config", ["node3"])], counted
assert [d["node"] for d in doc["drain"]] == ["node3"], doc["drain"]
assert doc["drain"][0]["reason"].startswith("rdmamesh: config: NIC rxe_node3 of node3: MTU 1024"), doc["drain"]
PY

# A path that fails while both ends live is a failed pair, not a dead rank: the wire from node2's
# RoCE port drops every packet to node3 (rxe's UDP port only; MPI's TCP is untouched; dropped at
# the bridge's side, as a cable would: a drop at the port itself is an error rxe's sender sees and
# retries at once, forever, which no wire does), so both QPs
# between them run out of retries, and rank 0 is stopped for 6 s (far under --timeout) while
# the others wait for it at the round's count exchange, as ranks wait behind a rank that
# drains its sends through a slow port. The job goes on: exit 1, that pair alone failed, no
# rank named as silent, every run written.
root_tc() { nsenter --net=/proc/1/ns/net tc "$@"; }
echo "== cut-path: node2 -> node3 RoCE dropped, rank 0 stopped 6 s mid-run"
root_tc qdisc add dev roce2p clsact &&
  root_tc filter add dev roce2p ingress protocol ip u32 match ip dst 10.10.0.3/32 match ip dport 4791 0xffff \
    action drop || fail "cut-path: tc filter on roce2p"
timeout 300 mpirun --host node1:1,node2:1,node3:1 "$bin" --op write -s 1K -D 3 --warmup 0.2 --qp-timeout 14 \
  -o "$tmp/cut-path.h5" >"$tmp/cut-path.txt" 2>&1 &
launcher=$!
for _ in $(seq 600); do grep -q '^#pattern' "$tmp/cut-path.txt" && break; sleep 0.2; done
sleep 1
stopped_pid=$(rank_pid 0)
kill -STOP $stopped_pid
sleep 6
kill -CONT $stopped_pid
wait $launcher
rc=$?
root_tc qdisc del dev roce2p clsact
grep -E "^# (failed|slow|verdict|event)|rdmamesh: error" "$tmp/cut-path.txt" | cut -c1-200 | sed 's/^/    /'
[ "$rc" = 1 ] || { cat "$tmp/cut-path.txt"; fail "cut-path: exit $rc, expected 1 (a failed pair)"; }
grep -qx "# failed pairs: 1->2 2->1" "$tmp/cut-path.txt" || fail "cut-path: not the pair 1<->2 alone failed"
grep -q "stopped answering" "$tmp/cut-path.txt" && fail "cut-path: a live rank named as silent"
later "cut-path: the rest of the mesh measured, that pair failed by retries" "$here/check_faults.py" \
  "$tmp/cut-path.h5" pair-failed 1 2 "retry counter exceeded"

# the report says 6 ranks on 3 nodes, and its heatmap draws its node lines where /ranks/node changes
later "report: heatmap node lines" "$here/check_cluster.py" "$tmp/mesh.h5" --nodes 3 --per-node 2 --map block --report
finish
