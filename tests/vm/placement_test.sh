#!/usr/bin/env bash
# Inside the SoftRoCE VM (2 vCPUs): each rank's recorded core and CPUs match the affinity the
# kernel reports for its process; a launcher's binding is kept and recorded as such; CPU
# sharing is warned about once; --scaling yields one point per active-ranks-per-node count.
source "$(dirname "$0")/lib.sh"

# run NAME SAMPLES -- MPIRUN ARGS: run rdmamesh, sampling every rank's affinity while it runs
sampled() {
  local name=$1 samples=$2
  shift 3
  : >"$samples"
  mpirun "$@" -o "$tmp/$name.h5" >"$tmp/$name.txt" 2>&1 &
  local job=$!
  while kill -0 "$job" 2>/dev/null; do
    for pid in $(pgrep -x rdmamesh); do
      c=$(awk '/^Cpus_allowed_list/ {print $2}' "/proc/$pid/status" 2>/dev/null) && [ -n "$c" ] && echo "$pid $c" >>"$samples"
    done
    sleep 0.2
  done
  wait "$job" || { cat "$tmp/$name.txt"; fail "$name: rdmamesh exited non-zero"; return 1; }
}

# more ranks than vCPUs: mpirun leaves them unbound, rdmamesh pins them, and says they share
sampled four "$tmp/four.samples" -- -np 4 "$bin" -s 16K -D 2 --warmup 0.5
"$here/check_placement.py" "$tmp/four.h5" "$tmp/four.samples" --bound-by rdmamesh || fail "four: placement"
[ "$(grep -c 'rdmamesh: warning: on softroce-vm, ranks are pinned to shared CPUs' "$tmp/four.txt")" = 1 ] ||
  fail "four: no single warning about shared CPUs"
[ "$(grep -c '^# rank .* bound by rdmamesh' "$tmp/four.txt")" = 4 ] || fail "four: header lacks the 4 placement lines"

# as many ranks as vCPUs under mpirun's own --bind-to core: kept, and recorded as the launcher's
sampled two "$tmp/two.samples" -- -np 2 --bind-to core "$bin" -s 16K -D 2 --warmup 0.5
"$here/check_placement.py" "$tmp/two.h5" "$tmp/two.samples" --bound-by launcher --distinct || fail "two: placement"

# the launcher binds nothing: rdmamesh pins one rank per core
sampled own "$tmp/own.samples" -- -np 2 --bind-to none "$bin" -s 16K -D 2 --warmup 0.5
"$here/check_placement.py" "$tmp/own.h5" "$tmp/own.samples" --bound-by rdmamesh --distinct || fail "own: placement"
grep -q "warning" "$tmp/own.txt" && fail "own: warned although no CPU is shared"

# --scaling: one point per active-ranks-per-node count (steps that leave one rank active are skipped)
for np in 3 4; do
  mpirun -np "$np" "$bin" --scaling -s 16K -D 0.5 --warmup 0.2 --pattern mesh,pairs -o "$tmp/scale$np.h5" >"$tmp/scale$np.txt" 2>&1 ||
    { cat "$tmp/scale$np.txt"; fail "scaling $np: exit"; continue; }
  /usr/bin/python3 - "$tmp/scale$np.h5" "$np" <<'PY' || fail "scaling $np: results"
import sys, h5py, numpy as np
f, n = h5py.File(sys.argv[1]), int(sys.argv[2])
want = [2, n]
for p in ("mesh", "pairs"):
    g = f[f"scaling/{p}"]
    steps = list(g["active_per_node"][()])
    assert steps == want, f"{p}: steps {steps}, expected {want}"
    assert g["node_bw"].shape == (1, len(want), 1) and (g["node_bw"][()] > 0).all(), f"{p}: node_bw {g['node_bw'][()]}"
    # a point for every active rank (>= 0: a rank a busy CPU starves may count nothing in 0.5 s)
    rank_bw = g["rank_bw"][()][0]
    assert np.isnan(rank_bw[0, 2:]).all() and (rank_bw[0, :2] >= 0).all(), f"{p}: step 2 rank_bw {rank_bw[0]}"
    assert (rank_bw[1] >= 0).all(), f"{p}: all-ranks step rank_bw {rank_bw[1]}"
    for k, run in zip(want, g["runs"][()][0]):
        r = f[f"runs/{int(run):04}"]
        assert r.attrs["active_per_node"] == k and r["active"][()].sum() == k, f"{p}: run {run} active set"
        off = ~np.eye(n, dtype=bool) & np.outer(r["active"][()], r["active"][()]).astype(bool)
        assert (r["tx_total"][()][off] > 0).all(), f"{p} step {k}: an active pair sent nothing in its round"
        assert (r["tx_total"][()][~off] == 0).all(), f"{p} step {k}: an inactive pair sent"
assert "contention" in f[f"runs/{int(f['scaling/mesh/runs'][()][0][0]):04}"], "no contention per step"
print(f"scaling {n} ranks: steps {want} for mesh and pairs, per-node and per-rank bandwidth present")
PY
  grep -q "# scaling: 2 rank(s) per node active" "$tmp/scale$np.txt" || fail "scaling $np: console line"
done

# analysis draws the curve from the file; the points it prints are the file's
"$here/../../analysis/plot_scaling.py" "$tmp/scale4.h5" -o "$tmp/scaling.png" >"$tmp/plot.txt" || fail "plot_scaling: exit"
[ "$(stat -c %s "$tmp/scaling.png" 2>/dev/null || echo 0)" -gt 10000 ] || fail "plot_scaling: no PNG"
/usr/bin/python3 - "$tmp/scale4.h5" "$tmp/plot.txt" <<'PY' || fail "plot_scaling: printed points differ from the file"
import sys, h5py, numpy as np
g = h5py.File(sys.argv[1])["scaling/mesh"]
rows = [l.split() for l in open(sys.argv[2]) if l.split()[:1] == ["mesh"]]
assert [int(r[2]) for r in rows] == list(g["active_per_node"][()]), rows
for i, r in enumerate(rows):
    node_mean = float(np.nanmean(g["node_bw"][()][0][i])) * 8 / 1e9
    rank_mean = float(np.nanmean(g["rank_bw"][()][0][i])) * 8 / 1e9
    assert abs(float(r[3]) - node_mean) < 6e-4 and abs(float(r[6]) - rank_mean) < 6e-4, (r, node_mean, rank_mean)
print("plot_scaling: printed points match /scaling/mesh")
PY
finish
