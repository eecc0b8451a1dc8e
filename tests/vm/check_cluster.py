#!/usr/bin/python3
"""Checks a results file from the emulated cluster (tools/softroce-vm --nodes K) against what
the launch asked for: which node every rank ran on, which device it used, and that every pair
that crossed (or stayed inside) a node moved data (failed pairs apart).

  check_cluster.py FILE --nodes 3 --per-node 2 --map block|cyclic [--scaling] [--report]
                   [--slurm-job ID]

--map block: mpirun --host node1:2,… (ranks 0,1 on node1); cyclic: --map-by node (rank r on
node r mod K). --report: runs analysis/report on FILE, which must say how many ranks on how
many nodes and draw its first heatmap's node lines (recorded in the PNG) where /ranks/node
changes. --slurm-job: the root carries
that Slurm job's context (id, node count and list) and srun's binding was kept."""
import argparse
import os
import subprocess
import sys
import tempfile
import zlib

import h5py
import numpy as np

errors = []


def check(ok, msg):
    if not ok:
        errors.append(msg)
        print(f"check_cluster: {msg}", file=sys.stderr)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def png_text(path):
    """The PNG's tEXt/zTXt chunks as a dict."""
    out = {}
    with open(path, "rb") as f:
        data = f.read()
    pos = 8
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"tEXt":
            k, _, v = body.partition(b"\0")
            out[k.decode("latin-1")] = v.decode("latin-1")
        elif kind == b"zTXt":
            k, _, v = body.partition(b"\0")
            out[k.decode("latin-1")] = zlib.decompress(v[1:]).decode("latin-1")
        pos += 12 + length
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--per-node", type=int, required=True)
    ap.add_argument("--map", choices=["block", "cyclic"], required=True)
    ap.add_argument("--scaling", action="store_true", help="/scaling has a point per node at 1 … per-node ranks")
    ap.add_argument("--report", action="store_true", help="run analysis/report and check its heatmap")
    ap.add_argument("--slurm-job", help="the Slurm job id the root must carry")
    a = ap.parse_args()
    k, per = a.nodes, a.per_node
    n = k * per
    with h5py.File(a.file, "r") as f:
        r = f["ranks"]
        check(r["hostname"].shape == (n,), f"/ranks has {r['hostname'].shape[0]} ranks, launched {n}")
        if errors:
            return 1
        host = [text(x) for x in r["hostname"][()]]
        dev = [text(x) for x in r["device"][()]]
        gid = [text(x) for x in r["gid"][()]]
        node, local = r["node"][()], r["local_rank"][()]
        for rank in range(n):
            i = rank // per if a.map == "block" else rank % k  # 0-based node, also its index by lowest rank
            lr = rank % per if a.map == "block" else rank // k
            want = f"node{i + 1}"
            check(host[rank] == want, f"rank {rank}: hostname {host[rank]}, launched on {want}")
            check(dev[rank] == f"rxe_node{i + 1}", f"rank {rank}: device {dev[rank]}, {want}'s is rxe_node{i + 1}")
            check(gid[rank] == f"::ffff:10.10.0.{i + 1}", f"rank {rank}: GID {gid[rank]}, not {want}'s address")
            check(node[rank] == i, f"rank {rank}: /ranks/node {node[rank]}, expected {i}")
            check(local[rank] == lr, f"rank {rank}: /ranks/local_rank {local[rank]}, expected {lr}")
        check(int(f.attrs["n_nodes"]) == k, f"n_nodes {f.attrs['n_nodes']}, expected {k}")
        cross, moved = 0, {}
        for name, g in f["runs"].items():
            if g.attrs["mode"] != "bw":  # lat --pattern pairs: every ordered pair pinged
                m = ~np.eye(n, dtype=bool)
                cnt, p50 = g["lat_count"][()], g["lat_p50_us"][()]
                check(np.all((cnt[m] > 0) & (p50[m] > 0)), f"run {name}: pairs without latency samples: "
                                                           f"{np.argwhere(m & ~(cnt > 0)).tolist()[:6]}")
                cross += int((m & (node[:, None] != node[None, :])).sum())
                continue
            m = ~np.eye(n, dtype=bool) & (g["round"][()] >= 0)
            if "flags" in g:  # a failed pair (the Slurm failed-pair job) moved what it could
                m &= g["flags"][()] == 0
            if "active" in g:
                act = g["active"][()].astype(bool)
                m &= act[:, None] & act[None, :]
            check(m.any(), f"run {name}: no pair measured")
            # every measured pair moved data over its whole round (warm-up and drain too): a pair a
            # busy CPU starves can see nothing inside a short interval, an honest 0 there
            # a figure is NaN exactly where its rank measured 0 s (no CPU for its whole window)
            for what, bw, secs in (("tx_total", "tx_bw", "tx_s"), ("rx_total", "rx_bw", "rx_s")):
                if what == "rx_total" and np.isnan(g[secs][()][m]).all():
                    continue  # the receiver cannot see one-sided traffic
                v = g[what][()]
                bad = np.argwhere(m & ~(v > 0))
                check(len(bad) == 0, f"run {name}: {what} not > 0 for pairs {bad.tolist()[:6]}")
                b, t = g[bw][()][m], g[secs][()][m]
                check(np.all(np.isfinite(t) & (t >= 0)), f"run {name}: {secs} {t.tolist()[:6]}")
                check(np.all(np.isfinite(b) == (t > 0)) and np.all(b[t > 0] >= 0),
                      f"run {name}: {bw} {b.tolist()[:6]} over {secs} {t.tolist()[:6]}")
                moved[bw] = moved.get(bw, False) or bool(np.any(b[t > 0] > 0))
            cross += int((m & (node[:, None] != node[None, :])).sum())
        # some run measured traffic; not every one: a 0.5 s window with CQ moderation on a
        # starved VM can honestly count no signaled completion
        check(all(moved.values()), f"no run measured traffic: {moved}")
        check(cross > 0, "no measured pair crossed nodes")
        if a.scaling:
            for p, g in f["scaling"].items():
                steps = list(g["active_per_node"][()])
                want = sorted({min(2 ** j, per) for j in range(per.bit_length() + 1)})
                check(steps == want, f"/scaling/{p}: steps {steps}, expected {want}")
                nb = g["node_bw"][()]
                check(nb.shape[2] == k, f"/scaling/{p}/node_bw has {nb.shape[2]} nodes, expected {k}")
                # a point per node and step, unless every active rank of that node measured 0 s
                # (its run's tx_s); a node's ranks may all be starved to 0 in one short interval
                starved = np.zeros(nb.shape, dtype=bool)
                for (si, ki), r in np.ndenumerate(g["runs"][()]):
                    run = f["runs"][f"{int(r):04d}"]
                    act = run["active"][()].astype(bool) if "active" in run else np.ones(n, dtype=bool)
                    sent = np.any(run["tx_s"][()] > 0, axis=1)  # NaN (diagonal, idle pairs) is not > 0
                    for j in range(k):
                        mine = act & (node == j)
                        starved[si, ki, j] = mine.any() and not sent[mine].any()
                # (every node of a step starved: its run measured no window at all, and says so;
                # that step has no point, the others still must)
                fed = ~starved.all(axis=2)
                check(np.all(np.isfinite(nb) | starved) and np.all(nb[np.isfinite(nb)] >= 0) and fed.any() and
                      np.all(np.nanmax(np.where(starved, np.nan, nb), axis=2, initial=-1)[fed] > 0),
                      f"/scaling/{p}: a node without a point: {nb.tolist()}")
        want = ",".join(str(i) for i in range(1, n) if node[i] != node[i - 1])
        if a.report:
            report = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../analysis/report")
            with tempfile.TemporaryDirectory() as d:
                res = subprocess.run([report, a.file, "-o", d], capture_output=True, text=True, check=False)
                check(res.returncode == 0, f"analysis/report exited {res.returncode}: {res.stdout}{res.stderr}")
                check(f"{n} ranks on {k} node(s)" in res.stdout, f"the report does not say {n} ranks on {k} node(s)")
                png = os.path.join(d, "heatmap-0000.png")
                got = png_text(png).get("rdmamesh:node_boundaries") if os.path.exists(png) else None
                check(got == want, f"report heatmap: node lines before ranks '{got}', /ranks/node says '{want}'")
        if a.slurm_job:
            attrs = {key: text(v) for key, v in f.attrs.items()}
            want_attrs = {"SLURM_JOB_ID": a.slurm_job, "SLURM_NNODES": str(k),
                          "SLURM_JOB_NODELIST": f"node[1-{k}]"}
            bad = {key: attrs.get(key) for key, v in want_attrs.items() if attrs.get(key) != v}
            check(not bad, f"root attributes {bad}, expected {want_attrs}")
            # srun --cpu-bind=cores (or mpirun inside the allocation) bound the ranks; rdmamesh kept it
            bound = {text(x) for x in f["ranks/bound_by"][()]}
            check(bound == {"launcher"}, f"/ranks/bound_by {bound}, the launcher bound them")
    if not errors:
        print(f"check_cluster: {a.file}: ok ({n} ranks on {k} nodes, {a.map}, {cross} cross-node pair-runs)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
