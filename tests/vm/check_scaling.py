#!/usr/bin/python3
"""Checks a --scaling results file written on one node.

  check_scaling.py steps FILE NP   one point per active-ranks-per-node step (2 and NP), for mesh
                                   and pairs, with per-node and per-rank bandwidth; the active
                                   pairs sent, the inactive ones did not
  check_scaling.py plot FILE [SIZES [REPORT]]  analysis/plot_scaling.py draws one row per size (SIZES:
                                   the bytes expected, comma-separated) and the points, ideal,
                                   efficiency and knee it prints are those derived here from the
                                   file; the file's port/loopback split adds up to each node's sends;
                                   REPORT: analysis/report's folder carries the same verdict lines
                                   and a drawn figure"""
import os
import subprocess
import sys
import tempfile

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../analysis"))
from rdmamesh_analysis import results  # noqa: E402


def steps(path, n):
    f = h5py.File(path, "r")
    want = [2, n]
    for p in ("mesh", "pairs"):
        g = f[f"scaling/{p}"]
        got = list(g["active_per_node"][()])
        assert got == want, f"{p}: steps {got}, expected {want}"
        nb = g["node_bw"][()]
        assert nb.shape == (1, len(want), 1), f"{p}: node_bw {nb}"
        # a point for every active rank (>= 0: a rank a busy CPU starves may count nothing in 0.5 s)
        # unless it measured 0 s (no CPU for its whole window: NaN, its run's tx_s says so)
        rank_bw = g["rank_bw"][()][0]
        for i, (k, run) in enumerate(zip(want, g["runs"][()][0])):
            r = f[f"runs/{int(run):04}"]
            active = r["active"][()]
            assert r.attrs["active_per_node"] == k and active.sum() == k, f"{p}: run {run} active set"
            sent = np.any(r["tx_s"][()] > 0, axis=1)
            act = active.astype(bool)
            assert np.isnan(rank_bw[i, ~act]).all(), f"{p}: step {k}: an inactive rank has a point: {rank_bw[i]}"
            assert (rank_bw[i, act & sent] >= 0).all() and np.isnan(rank_bw[i, act & ~sent]).all(), \
                f"{p}: step {k} rank_bw {rank_bw[i]} (measured > 0 s: {sent})"
            # the node's point: > 0, or NaN when none of its ranks measured (the same 0 s)
            assert nb[0, i, 0] > 0 or (np.isnan(nb[0, i, 0]) and not sent[act].any()), f"{p}: node_bw {nb}"
            on = ~np.eye(n, dtype=bool) & np.outer(active, active).astype(bool)
            total = r["tx_total"][()]
            assert (total[on] > 0).all(), f"{p} step {k}: an active pair sent nothing in its round"
            assert (total[~on] == 0).all(), f"{p} step {k}: an inactive pair sent"
    assert "contention" in f[f"runs/{int(f['scaling/mesh/runs'][()][0][0]):04}"], "no contention per step"
    print(f"scaling {n} ranks: steps {want} for mesh and pairs, per-node and per-rank bandwidth present")


def close(printed, value, tol):
    """A printed figure against the one derived here; NaN (a step no rank measured) prints nan."""
    p = float(printed)
    return (np.isnan(p) and np.isnan(value)) or abs(p - value) <= tol * max(1.0, abs(value))


def expected(path):
    """From the file alone: per (pattern, size) the steps, the per-node mean on the scaled side
    (through the port on several nodes, all sends on one), ideal, efficiency and knee."""
    f = h5py.File(path, "r")
    nodes = len(set(f["ranks/node"][()].tolist()))
    out = {}
    for p, g in f["scaling"].items():
        steps = list(g["active_per_node"][()])
        total, port, loop = g["node_bw"][()], g["node_port_bw"][()], g["node_loopback_bw"][()]
        rate = g["node_port_msg_rate"][()]
        for si, size in enumerate(g["msg_size"][()]):
            # the split adds up: what crossed the port and what stayed inside are the node's sends
            both = np.isfinite(port[si]) & np.isfinite(loop[si])
            assert np.allclose(port[si][both] + loop[si][both], total[si][both], rtol=1e-9), f"{p}: split"
            only = np.isfinite(port[si]) & ~np.isfinite(loop[si])
            assert np.allclose(port[si][only], total[si][only], rtol=1e-9), f"{p}: port without loopback"
            # bytes/s = messages/s x size: both from the same counts
            fin = np.isfinite(port[si])
            assert np.allclose(rate[si][fin] * size, port[si][fin], rtol=1e-6), f"{p}: message rate vs bandwidth"
            if nodes > 1 and steps[0] == 1:  # one active rank per node: no pair inside a node
                assert not np.isfinite(loop[si][0]).any(), f"{p}: loopback at one rank per node {loop[si][0]}"
            scaled = (port if nodes > 1 else total)[si] * 8 / 1e9
            mean = np.array([np.mean(r[np.isfinite(r)]) if np.isfinite(r).any() else np.nan for r in scaled])
            ideal = mean[0] * np.array(steps) / steps[0]
            eff = mean / ideal
            knee = next((k for i, k in enumerate(steps) if i > 0 and eff[i] < 0.8), None)
            out[(p, int(size))] = (steps, mean, ideal, eff, knee)
    return nodes, out


def drawn(png, rows):
    """A PNG with one row of panels per size and ink on a good part of it."""
    img = mpimg.imread(png)
    assert img.shape[0] > 280 * rows, f"{png} is {img.shape} for {rows} sizes"
    ink = (img[:, :, :3].mean(axis=2) < 0.9).mean()
    assert ink > 0.03, f"{png} is nearly blank ({ink:.3f} of its pixels drawn)"


def plot(path, want_sizes, report=None):
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../analysis/plot_scaling.py")
    nodes, want = expected(path)
    sizes = sorted({s for _, s in want})
    if want_sizes:
        assert sizes == want_sizes, f"sizes in /scaling {sizes}, expected {want_sizes}"
    with tempfile.TemporaryDirectory() as d:
        png = os.path.join(d, "scaling.png")
        res = subprocess.run([tool, path, "-o", png], capture_output=True, text=True, check=False)
        assert res.returncode == 0, f"plot_scaling exited {res.returncode}: {res.stderr}"
        drawn(png, len(sizes))
    side = "through its port" if nodes > 1 else "within the node"
    assert side in res.stdout.splitlines()[0], f"table header does not say what it scales: {res.stdout[:200]}"
    rows = [line.split() for line in res.stdout.splitlines() if line.split()[:1] and line.split()[0] in
            {p for p, _ in want}]
    got = {}
    for r in rows:
        got.setdefault((r[0], r[1]), []).append(r)
    for (p, size), (steps, mean, ideal, eff, knee) in want.items():
        key = (p, results.human_size(size).replace(" ", ""))
        assert key in got, f"no rows for {key}: {sorted(got)}"
        printed = got[key]
        assert [int(r[2]) for r in printed] == steps, (printed, steps)
        for i, r in enumerate(printed):
            assert close(r[3], mean[i], 1e-4) and close(r[8], ideal[i], 1e-4), (r, mean[i], ideal[i])
            assert close(r[9], eff[i] * 100, 0.06), (r, eff[i])
            assert (r[-1] == "knee") == (steps[i] == knee), f"{key} step {steps[i]}: knee {knee}, printed {r}"
        line = [x for x in res.stdout.splitlines() if x.startswith(f"# {p} {results.human_size(size)}:")]
        assert len(line) == 1, f"no verdict line for {p} {size}"
        assert (f"knee at {knee} ranks per node" in line[0]) if knee else ("scales to" in line[0]), line[0]
    if report:  # the report's scaling section: the same verdict lines, the same figure drawn
        md = open(os.path.join(report, "summary.md")).read()
        verdicts = [x[2:] for x in res.stdout.splitlines() if x.startswith("# ") and ": knee at " in x or
                    x.startswith("# ") and ": scales to " in x]
        assert "Scaling" in md and all(v in md for v in verdicts), f"report lacks the scaling verdict {verdicts}"
        drawn(os.path.join(report, "scaling.png"), len(sizes))
    print(f"plot_scaling: {len(want)} curve(s) on {nodes} node(s): points, ideal, efficiency and knee match the file"
          + (", the report says the same" if report else ""))


def main():
    try:
        if sys.argv[1:2] == ["steps"] and len(sys.argv) == 4:
            steps(sys.argv[2], int(sys.argv[3]))
        elif sys.argv[1:2] == ["plot"] and len(sys.argv) in (3, 4, 5):
            plot(sys.argv[2], [int(x) for x in sys.argv[3].split(",")] if len(sys.argv) >= 4 else None,
                 sys.argv[4] if len(sys.argv) == 5 else None)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except AssertionError as e:
        print(f"check_scaling: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
