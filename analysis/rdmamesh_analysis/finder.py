"""Rank 0's finder on per-pair figures analysis computes (compare's after ÷ before), through
`rdmamesh-sim judge`: the causes are named by the code that names them in a run, not by a copy
of it in Python that can drift."""
import json
import os
import shutil
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def simulator():
    """rdmamesh-sim: $RDMAMESH_SIM, else on PATH, else beside this checkout's build or this install."""
    for path in (os.environ.get("RDMAMESH_SIM"), shutil.which("rdmamesh-sim"),
                 os.path.join(HERE, "..", "..", "build", "rdmamesh-sim"),  # a checkout: analysis/../build
                 os.path.join(HERE, "..", "..", "..", "..", "bin", "rdmamesh-sim")):  # share/rdmamesh/analysis
        if path and os.access(path, os.X_OK) and os.path.isfile(path):
            return path
    raise ValueError("rdmamesh-sim not found (it judges per-pair figures by rank 0's rule): build rdmamesh with "
                     "tools/build, install it, or set RDMAMESH_SIM to the binary")


def _pct(v):
    return float("nan") if v is None else v / 100


def judge(values, judged, nodes, rounds, slow_pct, uplinks=(), rails=None, label=""):
    """The causes rank 0's finder names in `values` (a positive figure per ordered pair, judged
    where `judged`; `rounds` the round that measured each pair), at --slow `slow_pct`: dicts with
    kind, node, rank, peer, send and recv (the named side's median over its cohort's, NaN where not
    named), pairs, fine. `uplinks`: (switch, ranks under it); `rails`: each rank's rail, where
    nodes drive several NICs."""
    n = values.shape[0]
    ok = judged & np.isfinite(values) & (values > 0)
    doc = dict(ranks=n, node=[int(x) for x in nodes], slow_pct=float(slow_pct),
               uplinks=[[int(sw), [int(r) for r in under]] for sw, under in uplinks],
               runs=[dict(label=label, value=np.where(ok, values, 0.0).ravel().tolist(),
                          round=np.where(ok, rounds, -1).astype(int).ravel().tolist())])
    if rails is not None:
        doc["rail"] = [int(r) for r in rails]
    done = subprocess.run([simulator(), "judge"], input=json.dumps(doc), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ValueError(f"rdmamesh-sim judge failed: {done.stderr.strip()}")
    return [dict(kind=c["kind"], node=c["node"], rank=c["rank"], peer=c["peer"], send=_pct(c["send_pct"]),
                 recv=_pct(c["recv_pct"]), pairs=c["pairs"], fine=c["fine"])
            for c in json.loads(done.stdout)["runs"][0]["causes"]]


