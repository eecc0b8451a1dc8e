#!/usr/bin/python3
"""analysis/compare names what got worse first, and a cause is 'newly named' against what the
before file's verdict named: results files written here in rdmamesh's schema (6 ranks, 3 nodes,
one mesh run each), node n0001's sends at 60 % of the median before and at 20 % after.

1. The before file's --retest showed n0001 fine alone (its verdict: cleared, healthy): compare's
   first cause is n0001 newly named, and nothing is 'no longer named'.
2. The before file's verdict counted n0001 (named, not cleared): compare does not call it newly
   named; it still names it first, as slower against the median pair's change.
3. Before names rank 4 alone, cleared by its retest; after names nothing: no line says rank 4 is
   no longer named (it never was, by the verdict).
4. After's run names nothing (its noise hid n0001 at 60 %) and its retest counted n0001 alone:
   compare's first cause is n0001 newly named, as the after file's verdict says.
usage: compare_test.py RDMAMESH_SIM
"""
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
compare = os.path.join(here, "../../analysis/compare")
errors = []
N, PER_NODE = 6, 2


def check(cond, what):
    if not cond:
        errors.append(what)
        print(f"FAIL {what}")


def write(path, slow_node=None, factor=1.0, slow_rank=None, cleared=False, seed=1, hidden=False):
    """A one-run results file: ranks 2 a node; `slow_node`'s sends (or `slow_rank`'s) at `factor`,
    named in /outliers as rank 0 would, and in /verdict counted or cleared by a retest. `hidden`:
    the run's noise hid it (nothing in /outliers) and the retest counted it (basis retest)."""
    s = h5py.string_dtype()
    hosts = [f"n{r // PER_NODE:04d}" for r in range(N)]
    node_of = np.arange(N) // PER_NODE
    bw = 1.0e9 * np.exp(np.random.default_rng(seed).normal(0, 0.02, (N, N)))
    np.fill_diagonal(bw, np.nan)
    ranks = (list(np.flatnonzero(node_of == slow_node)) if slow_node is not None
             else [slow_rank] if slow_rank is not None else [])
    for r in ranks:
        bw[r, node_of != node_of[r]] *= factor
    with h5py.File(path, "w") as f:
        f.attrs.update({"schema": "rdmamesh/2", "n_ranks": N, "n_nodes": N // PER_NODE, "status": "ok",
                        "finished": 1, "created": "2026-11-28T00:00:00Z", "tool_version": "synthetic",
                        "command_line": "rdmamesh -s 4K (written by a test)"})
        f.create_group("config").attrs.update({"slow": 90.0})
        g = f.create_group("ranks")
        g["hostname"] = np.array(hosts, dtype=object).astype(s)
        g["node"] = node_of.astype(np.int32)
        g["device"] = np.array([f"rxe_{h}" for h in hosts], dtype=object).astype(s)
        g["local_rank"] = (np.arange(N) % PER_NODE).astype(np.int32)
        r = f.create_group("runs/0000")
        r.attrs.update({"pattern": "mesh", "op": "write", "mode": "bw", "size": 4096, "rounds": N - 1,
                        "rounds_done": N - 1, "interrupted": 0, "duration_s": 2.0, "iters": 0})
        r["tx_bw"], r["rx_bw"], r["tx_rate"] = bw, bw, bw / 4096
        r["round"] = ((np.arange(N)[None, :] - np.arange(N)[:, None]) % N - 1).astype(np.int32)
        o = r.create_group("outliers")
        o.attrs.update({"slow_pct": 90.0, "median_bw": float(np.nanmedian(bw)), "noise": 0.03})
        causes = []
        if ranks and hidden:
            o.attrs["verdict"] = "# healthy: no pair beyond the run's noise"
            causes.append({"kind": "node", "basis": "retest", "counted": True, "cleared": False,
                           "text": f"node {hosts[ranks[0]]}: its sends at {100 * factor:.0f} % of the control pairs",
                           "runs": [0], "run_labels": ["mesh 4K"], "pairs": 4, "fine": 0,
                           "ranks": [int(x) for x in ranks], "nodes": [hosts[ranks[0]]], "devices": [],
                           "send_pct": [100 * factor] * 2, "recv_pct": None})
        elif ranks:
            kind = "node" if slow_node is not None else "rank"
            who = f"node {hosts[ranks[0]]}" if kind == "node" else f"rank {ranks[0]} ({hosts[ranks[0]]}, rxe)"
            text = f"{who}: its sends at {100 * factor:.0f} % of the median"
            o.attrs["verdict"] = f"# slow: {text}"
            for k, v in (("kind", kind), ("basis", "noise"), ("text", text)):
                o.create_dataset(k, data=np.array([v], dtype=object), dtype=s)
            for k, v in (("node", int(node_of[ranks[0]])), ("rank", -1 if kind == "node" else ranks[0]),
                         ("peer", -1), ("pairs", 4 * len(ranks)), ("fine", 0)):
                o[k] = np.array([v], dtype=np.int32)
            o["send_pct"], o["recv_pct"] = np.array([100 * factor]), np.array([np.nan])
            causes.append({"kind": kind, "basis": "noise", "counted": not cleared, "cleared": cleared,
                           "text": text, "runs": [0], "run_labels": ["mesh 4K"], "pairs": 4 * len(ranks),
                           "fine": 0, "ranks": [int(x) for x in ranks], "nodes": [hosts[ranks[0]]],
                           "devices": [], "send_pct": [100 * factor] * 2, "recv_pct": None})
        else:
            o.attrs["verdict"] = "# healthy: no pair beyond the run's noise"
        doc = {"schema": "rdmamesh-verdict/2", "complete": True, "ended": "ok",
               "status": "degraded" if any(c["counted"] for c in causes) else "healthy",
               "runs": {"bandwidth": 1, "judged": 1}, "causes": causes, "drain": []}
        f.create_dataset("verdict", data=np.array([json.dumps(doc)], dtype=object), dtype=s)


def causes(before, after, out):
    p = subprocess.run([compare, before, after, "-o", out], capture_output=True, text=True)
    check(p.returncode == 0, f"compare exited {p.returncode}: {p.stderr[-2000:]}")
    return [x[2:] for x in p.stdout.splitlines() if x.startswith("- ")]


with tempfile.TemporaryDirectory() as tmp:
    os.environ["RDMAMESH_SIM"] = sys.argv[1]
    f = lambda name: os.path.join(tmp, name)  # noqa: E731
    write(f("after.h5"), slow_node=1, factor=0.2, seed=2)

    # 1. a clean run's noise pick, cleared by its retest, then the node sick
    write(f("clean.h5"), slow_node=1, factor=0.6, cleared=True)
    got = causes(f("clean.h5"), f("after.h5"), f("c1"))
    check(bool(got) and got[0].startswith("node n0001: newly named in 1 of 1"), f"cleared before: causes {got[:3]}")
    check(not any("no longer named" in c for c in got), f"cleared before: {got}")

    # 2. the before file's verdict counted it: not new, still first as slower
    write(f("named.h5"), slow_node=1, factor=0.6, cleared=False)
    got = causes(f("named.h5"), f("after.h5"), f("c2"))
    check(not any("newly named" in c for c in got), f"counted before: {got}")
    check(bool(got) and got[0].startswith("node n0001: slower in 1 of 1"), f"counted before: causes {got[:3]}")

    # 3. a cleared rank and a clean after file: nothing was named, so nothing is 'no longer'
    write(f("rank.h5"), slow_rank=4, factor=0.6, cleared=True)
    write(f("healthy.h5"), seed=3)
    got = causes(f("rank.h5"), f("healthy.h5"), f("c3"))
    check(not any("no longer named" in c for c in got), f"cleared rank before, healthy after: {got}")

    # 4. the sick run's noise hid the node; its retest counted it: newly named, first
    write(f("hidden.h5"), slow_node=1, factor=0.6, hidden=True, seed=4)
    got = causes(f("healthy.h5"), f("hidden.h5"), f("c4"))
    check(bool(got) and got[0].startswith("node n0001: newly named in 1 of 1"), f"found by the retest: {got[:3]}")

print(f"compare_test: {len(errors)} failure(s)")
sys.exit(1 if errors else 0)
