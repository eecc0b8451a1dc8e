"""A node_exporter textfile per node from a results file: when the node was last checked, what the
verdict said of it, and each of its NICs' sends and receives against their class.

    analysis/exporter FILE.h5 -o DIR      writes DIR/NODE/rdmamesh.prom for every node tested

Point each node's node_exporter at its own folder (--collector.textfile.directory=DIR/$(hostname -s)).
Each file is written whole and renamed into place, so the collector never reads half of one.
"""
import argparse
import calendar
import os
import sys
import time

import numpy as np

from .results import load, text

STATUSES = ("healthy", "unjudged", "degraded", "failed")


def epoch(iso):
    try:
        return float(calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ")))
    except (TypeError, ValueError):
        return float("nan")


def label(v):
    return str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def nic_ratios(res):
    """Per (node, device): the median of its ranks' pairs across nodes over the class median,
    sends and receives, over the job's bandwidth runs (median of the runs' figures)."""
    hosts = [text(h) for h in res.ranks.get("hostname", [])]
    devs = [text(d) for d in res.ranks.get("device", [""] * len(hosts))]
    node = np.asarray(res.ranks.get("node", range(len(hosts))))
    per = {}
    for run in res.bw_runs():
        bw = run.data.get("tx_bw")
        if bw is None or bw.shape[0] != len(hosts):
            continue
        across = np.isfinite(bw) & (bw > 0) & (node[:, None] != node[None, :])
        if not across.any():
            continue
        mid = float(np.median(bw[across]))
        for key in sorted(set(zip(hosts, devs))):
            mine = np.array([(h, d) == key for h, d in zip(hosts, devs)])
            out_ = bw[mine][:, ~mine][across[mine][:, ~mine]]
            in_ = bw[~mine][:, mine][across[~mine][:, mine]]
            r = per.setdefault(key, ([], []))
            if out_.size:
                r[0].append(float(np.median(out_)) / mid)
            if in_.size:
                r[1].append(float(np.median(in_)) / mid)
    return {k: (float(np.median(s)) if s else None, float(np.median(r)) if r else None) for k, (s, r) in per.items()}


def write(res, outdir):
    v = res.verdict or {}
    status = v.get("status", "unjudged")
    when = epoch(v.get("written") or text(res.attrs.get("finished", "")))
    named = {}  # node -> [(kind, device, reason)]
    for c in v.get("causes", []):
        if c.get("counted") and c.get("kind") in ("node", "rank", "nic", "config"):
            for n in c.get("nodes", []):
                dev = (c.get("devices") or [""])[0] if c.get("kind") in ("nic", "config") else ""
                named.setdefault(n, []).append((c["kind"], dev, c.get("text", "")))
    ratios = nic_ratios(res)
    nodes = sorted({text(h) for h in res.ranks.get("hostname", [])})
    for node in nodes:
        lines = [
            "# HELP rdmamesh_check_timestamp_seconds When the last rdmamesh check that tested this node wrote its verdict.",
            "# TYPE rdmamesh_check_timestamp_seconds gauge",
            f'rdmamesh_check_timestamp_seconds{{node="{label(node)}"}} {when:.0f}',
            "# HELP rdmamesh_check_status The job's verdict (1 for the status it had).",
            "# TYPE rdmamesh_check_status gauge",
        ]
        lines += [f'rdmamesh_check_status{{node="{label(node)}",status="{s}"}} {int(s == status)}' for s in STATUSES]
        lines += ["# HELP rdmamesh_node_named 1 when the verdict counted a cause on this node (what drains it).",
                  "# TYPE rdmamesh_node_named gauge",
                  f'rdmamesh_node_named{{node="{label(node)}"}} {int(node in named)}',
                  "# HELP rdmamesh_node_cause_info One per counted cause on this node: its kind, NIC and sentence.",
                  "# TYPE rdmamesh_node_cause_info gauge"]
        lines += [f'rdmamesh_node_cause_info{{node="{label(node)}",kind="{k}",device="{label(d)}",'
                  f'text="{label(t)}"}} 1' for k, d, t in named.get(node, [])]
        lines += ["# HELP rdmamesh_nic_ratio A NIC's pairs across nodes: its median over the class median.",
                  "# TYPE rdmamesh_nic_ratio gauge"]
        for (n, dev), (send, recv) in sorted(ratios.items()):
            if n != node:
                continue
            for way, r in (("send", send), ("recv", recv)):
                if r is not None:
                    lines.append(f'rdmamesh_nic_ratio{{node="{label(n)}",device="{label(dev)}",way="{way}"}} {r:.4f}')
        folder = os.path.join(outdir, node)
        os.makedirs(folder, exist_ok=True)
        tmp = os.path.join(folder, f".rdmamesh.prom.{os.getpid()}")
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, os.path.join(folder, "rdmamesh.prom"))
    return nodes


def main(argv=None):
    ap = argparse.ArgumentParser(prog="analysis/exporter", description=__doc__.splitlines()[0])
    ap.add_argument("file", help="an rdmamesh results file")
    ap.add_argument("-o", "--outdir", required=True, help="the textfile folder; one subfolder per node")
    a = ap.parse_args(argv)
    try:
        res = load(a.file)
    except (OSError, ValueError) as e:
        sys.exit(f"analysis/exporter: error: {a.file}: {e}")
    nodes = write(res, a.outdir)
    print(f"exporter: {len(nodes)} node file(s) under {a.outdir}")
