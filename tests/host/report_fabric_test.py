#!/usr/bin/python3
"""analysis/report on fabrics no VM can hold: results files written here in rdmamesh's schema.

1. 1 024 nodes under 32 leaves and one spine, one rank each, leaf08's uplink at half: the report
   finishes, its heatmap is one cell per leaf pair (32 x 32, not 10^6 rank cells) with leaf08's
   row outlined and nothing else, and its tree picture marks that uplink alone. The seconds it
   took are printed (a ratio-free figure for docs/analysis.md, not a pass/fail clock).
2. 8 nodes whose rank numbers alternate between two leaves: the heatmap draws them leaf by leaf
   (leaf1's ranks 0,2,4,6 first), a green line where leaf2's begin.
3. 128 ranks on 16 nodes: one cell per node pair, leaf2's nodes' sends to leaf1 outlined.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
from PIL import Image

here = os.path.dirname(os.path.abspath(__file__))
report = os.path.join(here, "../../analysis/report")
errors = []


def check(cond, what):
    if not cond:
        errors.append(what)
        print(f"FAIL {what}")


def write(path, leaf_of, slow_leaf=None, leaves=None, per_node=1):
    """A one-run results file (mesh 64 KiB): rank r on node n{r // per_node}, under leaf
    `leaf_of[r]`; the pairs out of `slow_leaf` at half; /outliers and /verdict name its uplink, as
    rank 0 would."""
    n = len(leaf_of)
    leaves = leaves or sorted(set(leaf_of))
    hosts = [f"n{r // per_node:04d}" for r in range(n)]
    rng = np.random.default_rng(7)
    bw = 1.2e9 * np.exp(rng.normal(0, 0.02, (n, n)))
    np.fill_diagonal(bw, np.nan)
    leaf_of = np.array(leaf_of)
    if slow_leaf is not None:
        out = (leaf_of[:, None] == slow_leaf) & (leaf_of[None, :] != slow_leaf)
        bw[out] *= 0.5
    switches = leaves + ["spine"]
    spine = len(leaves)
    s = h5py.string_dtype()
    with h5py.File(path, "w") as f:
        f.attrs.update({"schema": "rdmamesh/2", "n_ranks": n, "n_nodes": n // per_node, "status": "ok", "finished": 1,
                        "created": "2026-11-26T00:00:00Z", "tool_version": "synthetic",
                        "command_line": f"rdmamesh -s 64K --topology fabric.conf ({n} ranks, written by a test)"})
        f.create_group("config").attrs.update({"slow": 90.0, "topology": "fabric.conf"})
        g = f.create_group("ranks")
        g["hostname"] = np.array(hosts, dtype=object).astype(s)
        g["node"] = (np.arange(n) // per_node).astype(np.int32)
        g["device"] = np.array(["mlx5_0"] * n, dtype=object).astype(s)
        g["local_rank"] = np.zeros(n, dtype=np.int32)
        r = f.create_group("runs/0000")
        r.attrs.update({"pattern": "mesh", "op": "write", "mode": "bw", "size": 65536, "rounds": n - 1,
                        "rounds_done": n - 1, "interrupted": 0, "duration_s": 2.0, "iters": 0})
        r["tx_bw"] = bw
        r["rx_bw"] = bw
        r["tx_rate"] = bw / 65536
        rounds = (np.arange(n)[None, :] - np.arange(n)[:, None]) % n - 1
        r["round"] = rounds.astype(np.int32)
        o = r.create_group("outliers")
        o.attrs.update({"slow_pct": 90.0, "median_bw": float(np.nanmedian(bw))})
        cause = None
        if slow_leaf is not None:
            sw = leaves.index(slow_leaf)
            under = list(dict.fromkeys(h for h, l in zip(hosts, leaf_of) if l == slow_leaf))
            # as rank 0 names it: a few nodes by name, more as Slurm's host list (contiguous here)
            name = f"{slow_leaf}-spine ({','.join(under) if len(under) <= 4 else f'n[{under[0][1:]}-{under[-1][1:]}]'})"
            text = f"uplink {name}: up at 50 % of the median; {int(out.sum())} slow pair(s)"
            o.attrs["verdict"] = f"# slow: {text}"
            for k, v, t in (("kind", ["uplink"], s), ("basis", ["noise"], s), ("text", [text], s)):
                o.create_dataset(k, data=np.array(v, dtype=object), dtype=t)
            for k, v in (("node", sw), ("rank", -1), ("peer", -1), ("pairs", int(out.sum())), ("fine", 0)):
                o[k] = np.array([v], dtype=np.int32)
            o["send_pct"] = np.array([50.0])
            o["recv_pct"] = np.array([np.nan])
            cause = {"kind": "uplink", "basis": "noise", "counted": True, "cleared": False, "text": text,
                     "uplink": name, "runs": [0], "run_labels": ["mesh 64K"], "pairs": int(out.sum()), "fine": 0,
                     "ranks": [], "nodes": [], "devices": [], "send_pct": [50, 50], "recv_pct": None}
        else:
            o.attrs["verdict"] = "# healthy: no pair beyond the run's noise"
        t = f.create_group("topology")
        t.attrs["source"] = "fabric.conf"
        t["switch"] = np.array(switches, dtype=object).astype(s)
        t["parent"] = np.array([spine] * len(leaves) + [-1], dtype=np.int32)
        t["leaf"] = np.array([1] * len(leaves) + [0], dtype=np.uint8)
        t["node"] = np.array(hosts[::per_node], dtype=object).astype(s)
        t["node_leaf"] = np.array([leaves.index(l) for l in leaf_of[::per_node]], dtype=np.int32)
        doc = {"schema": "rdmamesh-verdict/1", "status": "degraded" if cause else "healthy", "complete": True,
               "ended": "ok", "runs": {"bandwidth": 1, "judged": 1}, "causes": [cause] if cause else [], "drain": []}
        if cause:  # a newer file states the level its runs were judged at; an older one has no key
            doc["false_alarm_pct"] = 0.1
        f.create_dataset("verdict", data=np.array([json.dumps(doc)], dtype=object), dtype=s)


def run_report(path, out):
    t0 = time.monotonic()
    p = subprocess.run([report, path, "-o", out], capture_output=True, text=True)
    check(p.returncode == 0, f"report {os.path.basename(path)} exited {p.returncode}: {p.stderr[-2000:]}")
    return time.monotonic() - t0


def meta(png):
    return dict(Image.open(png).text) if os.path.exists(png) else {}


with tempfile.TemporaryDirectory() as tmp:
    # 1. 1 024 nodes, 32 leaves of 32
    leaves = [f"leaf{i:02d}" for i in range(1, 33)]
    leaf_of = [leaves[r // 32] for r in range(1024)]
    big = os.path.join(tmp, "fabric1024.h5")
    write(big, leaf_of, slow_leaf="leaf08", leaves=leaves)
    out = os.path.join(tmp, "big")
    took = run_report(big, out)
    print(f"== analysis/report on 1 024 nodes under 32 leaves: {took:.1f} s")
    heat = meta(os.path.join(out, "heatmap-0000.png"))
    check(heat.get("rdmamesh:view") == "leaf 32", f"1024: heatmap view {heat.get('rdmamesh:view')!r}, expected leaf 32")
    want = ";".join(f"7,{j}" for j in range(32) if j != 7)
    check(heat.get("rdmamesh:outlined") == want,
          f"1024: outlined cells {heat.get('rdmamesh:outlined', '')[:120]!r}, expected leaf08's row (7,j)")
    tree = meta(os.path.join(out, "fabric.png"))
    check(tree.get("rdmamesh:marked") == "uplink:leaf08-spine", f"1024: tree marks {tree.get('rdmamesh:marked')!r}")
    page = open(os.path.join(out, "report.html")).read() if os.path.exists(os.path.join(out, "report.html")) else ""
    check("<h2>Fabric</h2>" in page and "alt='the fabric" in page, "1024: report.html has no Fabric section with the tree")
    check("red: leaf08-spine" in page, "1024: the Fabric section does not name leaf08-spine")
    check("uplink leaf08-spine (n[0224-0255]): up at 50 %" in page, "1024: the verdict does not name leaf08's uplink")
    check(">leaf08-spine (n[0224-0255])<" in page, "1024: the outlier table does not name leaf08-spine (n[0224-0255])")
    check("each run at a false-alarm level of 0.1 %" in page, "1024: the verdict does not say the level it was judged at")

    # 2. ranks alternate between two leaves: drawn leaf by leaf
    small = os.path.join(tmp, "alternate.h5")
    write(small, ["leaf1" if r % 2 == 0 else "leaf2" for r in range(8)], leaves=["leaf1", "leaf2"])
    run_report(small, os.path.join(tmp, "small"))
    heat = meta(os.path.join(tmp, "small", "heatmap-0000.png"))
    page = open(os.path.join(tmp, "small", "report.html")).read()
    check("false-alarm level" not in page, "alternate: a file that states no level is said to have one")
    check(heat.get("rdmamesh:view") == "rank 8", f"alternate: view {heat.get('rdmamesh:view')!r}")
    check(heat.get("rdmamesh:leaf_boundaries") == "4", f"alternate: leaf lines {heat.get('rdmamesh:leaf_boundaries')!r}")
    check(heat.get("rdmamesh:order") == "0,2,4,6,1,3,5,7", f"alternate: rank order {heat.get('rdmamesh:order')!r}")
    tree = meta(os.path.join(tmp, "small", "fabric.png"))
    check(tree.get("rdmamesh:marked") == "", f"alternate: a healthy fabric's tree marks {tree.get('rdmamesh:marked')!r}")

    # 3. 128 ranks on 16 nodes (8 each) under two leaves, leaf2's uplink slow: one cell per node pair
    mid = os.path.join(tmp, "nodes.h5")
    write(mid, ["leaf1" if r < 64 else "leaf2" for r in range(128)], slow_leaf="leaf2", leaves=["leaf1", "leaf2"],
          per_node=8)
    run_report(mid, os.path.join(tmp, "mid"))
    heat = meta(os.path.join(tmp, "mid", "heatmap-0000.png"))
    check(heat.get("rdmamesh:view") == "node 16", f"nodes: view {heat.get('rdmamesh:view')!r}")
    check(heat.get("rdmamesh:leaf_boundaries") == "8", f"nodes: leaf lines {heat.get('rdmamesh:leaf_boundaries')!r}")
    want = ";".join(f"{a},{b}" for a in range(8, 16) for b in range(8))
    check(heat.get("rdmamesh:outlined") == want, f"nodes: outlined {heat.get('rdmamesh:outlined', '')[:80]!r}, "
                                                 "expected leaf2's nodes to leaf1's")

    # 4. a run whose every window was empty (no CPU when it opened, on a starved host: its pairs
    # scheduled, its figures NaN) is listed, with no heatmap to draw, and the report still writes
    empty = os.path.join(tmp, "empty.h5")
    write(empty, ["leaf1"] * 4 + ["leaf2"] * 4, leaves=["leaf1", "leaf2"])
    with h5py.File(empty, "a") as f:
        for k in ("tx_bw", "rx_bw", "tx_rate"):
            f["runs/0000"][k][...] = np.nan
    run_report(empty, os.path.join(tmp, "empty"))
    check(os.path.exists(os.path.join(tmp, "empty", "report.html")), "empty run: no report.html")
    check(not os.path.exists(os.path.join(tmp, "empty", "heatmap-0000.png")), "empty run: a heatmap of nothing")

print(f"report_fabric_test: {len(errors)} failure(s)")
sys.exit(1 if errors else 0)
