#!/usr/bin/python3
"""Checks a --scaling results file written on one node.

  check_scaling.py steps FILE NP   one point per active-ranks-per-node step (2 and NP), for mesh
                                   and pairs, with per-node and per-rank bandwidth; the active
                                   pairs sent, the inactive ones did not
  check_scaling.py plot FILE       analysis/plot_scaling.py draws the file's curve and the
                                   points it prints are the file's /scaling/mesh points"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np


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


def plot(path):
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../analysis/plot_scaling.py")
    with tempfile.TemporaryDirectory() as d:
        png = os.path.join(d, "scaling.png")
        res = subprocess.run([tool, path, "-o", png], capture_output=True, text=True, check=False)
        assert res.returncode == 0, f"plot_scaling exited {res.returncode}: {res.stderr}"
        assert os.path.exists(png) and os.path.getsize(png) > 10000, "plot_scaling drew no PNG"
    g = h5py.File(path, "r")["scaling/mesh"]
    rows = [line.split() for line in res.stdout.splitlines() if line.split()[:1] == ["mesh"]]
    assert [int(r[2]) for r in rows] == list(g["active_per_node"][()]), rows
    for i, r in enumerate(rows):
        node_mean = float(np.nanmean(g["node_bw"][()][0][i])) * 8 / 1e9
        rank_mean = float(np.nanmean(g["rank_bw"][()][0][i])) * 8 / 1e9
        assert abs(float(r[3]) - node_mean) < 6e-4 and abs(float(r[6]) - rank_mean) < 6e-4, (r, node_mean, rank_mean)
    print("plot_scaling: printed points match /scaling/mesh")


def main():
    try:
        if sys.argv[1:2] == ["steps"] and len(sys.argv) == 4:
            steps(sys.argv[2], int(sys.argv[3]))
        elif sys.argv[1:2] == ["plot"] and len(sys.argv) == 3:
            plot(sys.argv[2])
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except AssertionError as e:
        print(f"check_scaling: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
