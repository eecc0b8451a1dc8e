"""analysis/report FILE.h5 [-o DIR]: the answer first (which node, rank or link is slow or
failed, in how many runs), then every run's figures and numbers, then the metadata. Writes
summary.md, a self-contained report.html and the PNGs into DIR."""
import argparse
import os
import sys

import numpy as np

from . import figures, findings, scaling
from .doc import Doc
from .results import human_size, load

GB = figures.GB
MAX_HEATMAPS = 16


def retest_word(t, i):
    """A retested pair's verdict: its link's only where the job's test counted it."""
    if not t["still_slow"][i]:
        # files before the fine column: every pair not still slow read fine
        return "fine alone" if "fine" not in t or t["fine"][i] else "undecided alone"
    if "counted" in t:  # the verdict model's reading (files before it: the bounds' columns)
        if t["counted"][i]:
            return "still slow alone (its link or NIC)"
        if t["named_link"][i]:
            return "still slow alone, not at the job's false-alarm level"
        return "still slow alone (the run named no link here: its part's retest decides)"
    if "beyond_spread" in t and not t["beyond_spread"][i]:
        return f"still slow alone (as a lone link below {float(t['link_bound_pct'][i]):.0f} %)"
    if "named_link" in t and not t["named_link"][i]:
        return "still slow alone (the run named no link here: no cause of its own)"
    return "still slow alone"


def fmt(x, digits=3):
    return "—" if x is None or not np.isfinite(x) else f"{x:.{digits}g}"


def bw_row(run):
    """(median, min, max pair Gb/s, aggregate Gb/s, median Mmsg/s) of a bandwidth run. The
    aggregate is each round's pairs summed, averaged over rounds, as the console prints it."""
    bw = run.pair_bw()
    v = bw[np.isfinite(bw)] * GB
    rate = run.data["tx_rate"].astype(float)[run.measured()]
    rate = rate[np.isfinite(rate)] / 1e6
    rounds = run.data["round"][run.measured()] if "round" in run.data else np.zeros(v.size, dtype=int)
    flat = bw[run.measured()]
    per_round = [np.nansum(flat[rounds == k]) for k in np.unique(rounds)]
    agg = float(np.mean(per_round)) * GB if per_round else np.nan
    if v.size == 0:
        return (np.nan,) * 4 + (np.nan,)
    return float(np.median(v)), float(v.min()), float(v.max()), agg, float(np.median(rate)) if rate.size else np.nan


def heatmap_runs(res):
    """Every bandwidth run, or for big files each pattern's smallest and largest size plus every
    run that named a cause."""
    # a run whose every window was empty (no CPU when it opened: its figures NaN) has nothing to draw
    runs = [r for r in res.bw_runs() if np.isfinite(r.data["tx_bw"][r.measured()].astype(float)).any()]
    if len(runs) <= MAX_HEATMAPS:
        return runs
    keep = set()
    for p in {r.pattern for r in runs}:
        mine = [r for r in runs if r.pattern == p]
        keep |= {min(mine, key=lambda r: r.size).index, max(mine, key=lambda r: r.size).index}
    keep |= {r.index for r in runs if r.causes}
    return [r for r in runs if r.index in keep][:MAX_HEATMAPS * 2]


def fabric_marks(res):
    """What the tree picture marks: the uplinks and nodes the verdict counted (without a
    verdict, what the runs named)."""
    marks = {"uplinks": set(), "nodes": set()}
    if res.verdict is not None:
        for c in res.verdict.get("causes", []):
            if not c.get("counted"):
                continue
            if c["kind"] == "uplink":
                marks["uplinks"] |= {sw for sw, _ in res.uplinks() if res.uplink_name(sw) in c.get("uplink", "")}
            elif c["kind"] in ("node", "rank", "nic", "config"):
                marks["nodes"] |= {h.split(".")[0] for h in c.get("nodes", [])}
        return marks
    for r in res.bw_runs():
        for c in r.causes:
            if c.kind == "uplink":
                marks["uplinks"].add(c.node)
            elif c.kind in ("node", "nic"):
                marks["nodes"].add(str(res.node_name(c.node)).split(".")[0])
            elif c.kind == "rank":
                marks["nodes"].add(str(res.ranks["hostname"][c.rank]).split(".")[0])
    return marks


def nic_table(res, run):
    """One row per NIC of the nodes that drive several: its ranks' send and receive aggregate in
    `run`, its measured pairs (an end on it), and whether the verdict (or the runs) named it."""
    rails = res.rails
    measured = run.measured()
    tx = np.where(measured, run.data["tx_bw"].astype(float), np.nan)
    rx = np.where(measured, run.data["rx_bw"].astype(float), np.nan) if "rx_bw" in run.data else tx
    counted, cleared = {}, set()
    for c in (res.verdict or {}).get("causes", []):
        if c.get("counted") and c["kind"] in ("nic", "node"):
            for h in c.get("nodes", []):
                counted.setdefault(h, []).append(("nic", c.get("rail")) if c["kind"] == "nic" else ("node", None))
        if c.get("cleared") and c["kind"] == "nic":
            cleared |= {(h, c.get("rail")) for h in c.get("nodes", [])}
    rows = []
    for node in sorted(set(res.nodes.tolist()), key=lambda k: np.flatnonzero(res.nodes == k)[0]):
        mine = sorted(set(rails[res.nodes == node].tolist()) - {-1})
        if len(mine) < 2:
            continue
        host = str(res.node_name(node))
        for rail in mine:
            on = res.nic_ranks(node, rail)
            pairs = int(measured[on, :].sum() + measured[:, on].sum() - measured[np.ix_(on, on)].sum())
            named = [r.name for r in res.bw_runs() for c in r.causes
                     if c.kind == "nic" and c.node == node and c.peer == rail]
            said = counted.get(host, [])
            what = (f"counted: drain {host}" if ("nic", rail) in said else
                    "its node counted" if ("node", None) in said else
                    f"named in {len(named)} run(s), cleared by the retest (fine alone)" if named and (host, rail) in cleared
                    else f"named in {len(named)} run(s)" if named else "")
            rows.append([host, res.ranks["device"][on[0]], rail, ",".join(map(str, on)),
                         fmt(np.nansum(tx[on, :]) * GB), fmt(np.nansum(rx[:, on]) * GB), pairs, what])
    return rows


def build(res, outdir):
    """Writes the PNGs and returns the Doc."""
    name = os.path.basename(res.path)
    doc = Doc(f"rdmamesh report: {name}")
    a = res.attrs
    hosts = len(set(res.ranks.get("hostname", [])))
    doc.para(f"{res.n} ranks on {hosts} node(s) · status {a.get('status', '?')} · created {a.get('created', '?')} · "
             f"{a.get('tool_version', '?')} · schema {a.get('schema', '?')}")

    bw_runs = res.bw_runs()
    doc.h2("Verdict")
    lines = []
    if not str(a.get("status", "ok")).startswith(("ok",)):
        lines.append(f"the job did not end cleanly: {a.get('status')}")
    if res.verdict is not None:
        # rank 0's verdict, as its console and --verdict JSON said it: one rule, not re-derived here
        v = res.verdict
        runs = v.get("runs", {})
        causes = v.get("causes", [])
        counted = [c for c in causes if c.get("counted")]
        head = f"{v['status']}: " + (f"{len(counted)} cause(s) over {runs.get('judged', 0)} judged bandwidth run(s)"
                                     if counted else
                                     f"none of the {runs.get('bandwidth', 0)} bandwidth run(s) could be judged"
                                     if v["status"] == "unjudged" else
                                     f"{runs.get('judged', 0)} of {runs.get('bandwidth', 0)} "
                                     "bandwidth run(s) judged, no cause beyond their noise")
        if v.get("false_alarm_pct") and v["status"] != "unjudged":  # files before it was stated have none
            head += f" (each run at a false-alarm level of {v['false_alarm_pct']:g} %)"
        lines.append(head)
        if v.get("retest"):  # --false-alarm: the verdict model's retest, at its stated level
            lines.append(f"retest: {v['retest']['parts_retested']} part(s) measured alone, each counted only below "
                         f"--slow beyond chance at a false-alarm level of {v['retest']['false_alarm_pct']:g} %"
                         + (f" ({v['retest']['false_alarm_pct'] / v['retest']['runs_sharing']:g} % in each of its "
                            f"{v['retest']['runs_sharing']} runs that go to the retest)"
                            if v['retest'].get('runs_sharing', 1) > 1 else ""))

        def alone(c):  # the model's evidence under a cause it judged (rdmamesh's "pooled:" and "alone:")
            p, a = c.get("pooled"), c.get("alone")
            return ((f"; pooled: its {p['runs']} runs as one fit: {fmt(p['pct'])} % of the median, p {p['p']:.2g}"
                     if p else "") +
                    (f"; alone: {fmt(a['pct'])} % of the controls ({fmt(a['interval_pct'][0])}–"
                     f"{fmt(a['interval_pct'][1])} %), {a['pairs']} pair(s), p {a['p_slow']:.2g}" if a else ""))

        # each counted cause with its category and the evidence behind it (rdmamesh's "why:")
        lines += [c["text"] + alone(c) + (f" — {c['category']}: {c['evidence']['text']}"
                                          if c.get("category", "unknown") != "unknown" and c.get("evidence") else "")
                  for c in counted]
        lines += [("seen, cleared by the retest (fine alone): " if c.get("cleared") else
                   ("seen, narrowed by the retest to the node(s) under it slow alone (without their pairs it is fine alone): "
                    if c["kind"] == "uplink" else
                    "seen, narrowed by the retest to its NIC (the others fine alone): ") if c.get("narrowed") else
                   "seen, part of its node's counted cause: " if c.get("within") else
                   "seen, not counted by the retest (alone it is slow only toward a counted part of the other "
                   "side: that part's evidence): " if c.get("explained") else
                   "seen, undecided by the retest: " if c.get("undecided") else
                   f"seen, not counted on its {c['pooled']['runs']} runs pooled: " if c.get("pooled") else
                   "seen, not counted: ") + c["text"] + alone(c) for c in causes if not c.get("counted")]
        lines += [f"drain {d['node']}: {d['reason']}" for d in v.get("drain", [])]
        verdict = counted
    else:
        verdict = findings.verdict(res)
        lines += [f.line(res, len(bw_runs)) for f in verdict]
    retests = [(r, i) for r in res.retest_runs() for i in range(len(r.retest.get("src", [])))]
    folded = {}  # (src, dst) -> [(still slow, fine, pct, retested run)]
    for r, i in retests:
        t = r.retest
        fine = bool(t["fine"][i]) if "fine" in t else not t["still_slow"][i]
        folded.setdefault((int(t["src"][i]), int(t["dst"][i])), []).append(
            (bool(t["still_slow"][i]), fine, float(t["pct"][i]), f"{int(r.retest_of):04d}"))
    # the pairs alone are the verdict's evidence, not causes of their own: one line for them all,
    # naming the pairs most of whose retests found them still slow (a link's or its NIC's)
    if folded:
        still = [k for k, seen in folded.items() if 2 * sum(x[0] for x in seen) > len(seen)]
        fine = [k for k, seen in folded.items() if k not in still and any(x[1] for x in seen)]
        named = "ranks " + ", ".join(f"{a}->{b}" for a, b in still[:8])
        more = f" and {len(still) - 8} more" if len(still) > 8 else ""
        lines.append(f"retest: {len(folded)} pair(s) alone over {len({x[3] for v in folded.values() for x in v})} "
                     f"run(s): {len(still)} still slow alone{' (' + named + more + ')' if still else ''}, "
                     f"{len(fine)} fine, {len(folded) - len(still) - len(fine)} undecided")
    lines += findings.short_windows(res)
    odd = findings.odd_ones(res)
    lines += odd
    if not verdict and bw_runs and res.verdict is None:
        recorded = [r for r in bw_runs if np.isfinite(r.slow_pct)]
        if recorded:
            pct = sorted({int(r.slow_pct) for r in recorded})
            lines.append(f"no outliers: in every bandwidth run every pair is at or above {'/'.join(map(str, pct))} % "
                         f"of its run's median pair (--slow)")
        else:
            lines.append("no outliers recorded (this file predates /runs/NNNN/outliers)")
    if not bw_runs:
        lines.append("no bandwidth runs; latency only")
    if res.scaling:  # the scaling answer at the largest size leads; the section has every size
        cs = scaling.curves(res.scaling, res.n_nodes)
        big = max(c.size for c in cs)
        lines += [f"scaling: {x}" for x in scaling.verdict([c for c in cs if c.size == big],
                                                            scaling.ceiling(res.ranks)[0] if res.n_nodes > 1 else None)]
    doc.items(lines, strong=True)

    measured_bw = [r for r in bw_runs if r.measured().any()]
    if res.multi_nic() and measured_bw:
        run = max(measured_bw, key=lambda r: int(r.measured().sum()))
        doc.h2("NICs")
        doc.para(f"nodes with several NICs ({res.config.get('ib-dev', '?')}, rails {res.config.get('rails', 'all')}): "
                 f"each NIC's ranks in run {run.name} ({run.label}); a NIC is named where its pairs are slow and its "
                 "node's other NICs' are not. The heatmaps group each node's ranks rail by rail (dotted lines).")
        doc.table(["node", "NIC", "rail", "ranks", "send Gb/s", "receive Gb/s", "pairs", "verdict"],
                  nic_table(res, run))

    if res.topology:
        doc.h2("Fabric")
        path = os.path.join(outdir, "fabric.png")
        drawn = figures.tree_figure(res, fabric_marks(res), path)
        t = res.topology
        leaves = [i for i, l in enumerate(t["leaf"]) if int(l)]
        doc.para(f"{len(t['switch'])} switch(es), {len(leaves)} leaves, from {t.get('source', '?')}; "
                 f"{'red: ' + ', '.join(d.split(':', 1)[1] for d in drawn) if drawn else 'no switch or node counted'}"
                 "; the heatmaps below order the ranks leaf by leaf (green lines between leaves)")
        doc.image(path, "the fabric's tree: spines, leaves, nodes; what the verdict counted in red")
        doc.table(["switch", "parent", "leaf", "nodes under it", "ranks under it"],
                  [[t["switch"][sw], t["switch"][int(p)] if int(p) >= 0 else "—", "yes" if int(t["leaf"][sw]) else "",
                    sum(1 for i in range(len(t["node"])) if res._under(int(t["node_leaf"][i]), sw)),
                    len(res.ranks_under(sw))] for sw, p in enumerate(t["parent"])])

    if bw_runs:
        doc.h2("Bandwidth runs")
        rows = []
        for r in bw_runs:
            med, lo, hi, agg, rate = bw_row(r)
            rows.append([r.name, r.pattern, r.attrs["op"], human_size(r.size), int(r.measured().sum()), fmt(lo),
                         fmt(med), fmt(hi), fmt(agg), fmt(rate), len(r.causes)])
        doc.table(["run", "pattern", "op", "size", "pairs", "min Gb/s", "median Gb/s", "max Gb/s", "aggregate Gb/s",
                   "median Mmsg/s", "causes"], rows)
        for r in heatmap_runs(res):
            path = os.path.join(outdir, f"heatmap-{r.name}.png")
            figures.run_heatmaps(res, r, path)
            doc.image(path, f"run {r.name}: {r.label}, per pair relative to the median pair")

    for pattern in res.sweeps:
        if not any(res.runs[int(k)].mode == "bw" for k in res.sweeps[pattern]["runs"] if int(k) < len(res.runs)):
            continue
        doc.h2(f"Sweep: {pattern}")
        path = os.path.join(outdir, f"sweep-{pattern}.png")
        rows = figures.sweep_figure(res, pattern, path)
        doc.table(["size", "median Gb/s", "min Gb/s", "max Gb/s", "median Mmsg/s"],
                  [[human_size(s), fmt(m), fmt(lo), fmt(hi), fmt(q)] for s, m, lo, hi, q in rows])
        doc.image(path, f"{pattern}: bandwidth and message rate against size")

    lat = res.lat_runs()
    if lat:
        doc.h2("Latency")
        path = os.path.join(outdir, "latency.png")
        rows = figures.latency_figure(res, lat, path)
        doc.table(["pattern", "size", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs"],
                  [[p, human_size(s), *[fmt(x, 4) for x in v]] for p, s, *v in rows])
        doc.image(path, "latency percentiles over all pairs against size, and their CDF")

    series = [r for r in bw_runs if "tx_bw_t" in r.data and r.data["t_s"].size > 1]
    if series:
        doc.h2("Bandwidth over time")
        flap = []
        for r in series:
            path = os.path.join(outdir, f"timeseries-{r.name}.png")
            rows = figures.timeseries_figure(res, r, path)
            doc.image(path, f"run {r.name}: {r.label}, the pairs with the deepest dips")
            limit = (r.slow_pct if np.isfinite(r.slow_pct) else float(res.config.get("slow", 90))) / 100
            flap += [f"{r.label}: {res.who(a_)} -> {res.who(b)} dipped to {low / mean * 100:.0f} % of its own "
                     f"mean ({fmt(low)} of {fmt(mean)} Gb/s)" for a_, b, mean, low in rows
                     if mean > 0 and low < limit * mean]
        doc.items(flap or ["no pair dipped below --slow % of its own mean in any interval"])

    if res.scaling:
        doc.h2("Scaling")
        path = os.path.join(outdir, "scaling.png")
        cs, cap, note = scaling.figure(res.scaling, f"rdmamesh scaling: {a.get('command_line', '')}", path,
                                       res.ranks, res.n_nodes)
        doc.items(scaling.verdict(cs, cap) + [note])
        side = "through its port" if res.n_nodes > 1 else "within the node"
        doc.table(["pattern", "size", "ranks/node", f"per node Gb/s ({side})", "min", "max", "loopback Gb/s",
                   "Mmsg/s", "ideal Gb/s", "efficiency %", "per rank Gb/s", ""],
                  [[p, human_size(s), k, *[fmt(x) for x in v[:-1]], v[-1]] for p, s, k, *v in scaling.table(cs)])
        doc.image(path, "bandwidth per node against active ranks per node, with the ideal line and the efficiency")

    causes = [(r, c) for r in bw_runs for c in r.causes]
    if causes:
        doc.h2("Outliers, run by run")
        # an uplink's node is its switch, its peer the other subtree's (two leaves): named as the console
        doc.table(["run", "pattern", "size", "kind", "rank", "peer", "node or switch", "send %", "recv %", "pairs"],
                  [[r.name, r.pattern, human_size(r.size), c.kind, c.rank,
                    res.uplink_name(c.peer) if c.kind == "uplink" and c.peer >= 0 else c.peer,
                    res.uplink_name(c.node) if c.kind == "uplink" else c.node, fmt(c.send_pct),
                    fmt(c.recv_pct), c.pairs] for r, c in causes])
    if retests:
        doc.h2("Retests: slow pairs alone")
        doc.table(["run", "retest of", "src", "dst", "in the run Gb/s", "alone Gb/s", "% of controls alone",
                   "verdict"],
                  [[r.name, f"{int(r.retest_of):04d}", int(r.retest["src"][i]), int(r.retest["dst"][i]),
                    fmt(r.retest["before_bw"][i] * 8e-9), fmt(r.retest["alone_bw"][i] * 8e-9), fmt(r.retest["pct"][i]),
                    retest_word(r.retest, i)] for r, i in retests])
    events = [(r.name, e) for r in res.runs for e in r.data.get("events", [])]
    if events:
        doc.h2("Events")
        doc.items([f"run {n}: {e}" for n, e in events[:50]] +
                  ([f"… and {len(events) - 50} more in /runs/*/events"] if len(events) > 50 else []))

    doc.h2("Metadata")
    skip = {"command_line"}
    doc.table(["attribute", "value"], [["command_line", f"{a.get('command_line', '')}"]] +
              [[k, v] for k, v in sorted(a.items()) if k not in skip])
    doc.table(["option", "value"], sorted([k, v] for k, v in res.config.items()))
    cols = [c for c in ("hostname", "node", "local_rank", "device", "rail", "nic_chosen", "port", "gid", "mtu",
                        "line_rate_bps", "fw_ver", "board_id", "core", "cpus", "numa", "bound_by") if c in res.ranks]
    doc.table(["rank"] + cols, [[i] + [res.ranks[c][i] for c in cols] for i in range(res.n)])
    return doc


def main(argv=None):
    ap = argparse.ArgumentParser(prog="analysis/report", description=__doc__.splitlines()[0])
    ap.add_argument("file", help="an rdmamesh results file (-o)")
    ap.add_argument("-o", "--outdir", help="folder for summary.md, report.html and the PNGs (default: FILE's name "
                                           "without .h5, plus -report)")
    a = ap.parse_args(argv)
    outdir = a.outdir or os.path.splitext(a.file)[0] + "-report"
    try:
        res = load(a.file)
    except (OSError, ValueError) as e:
        sys.exit(f"report: cannot read {a.file}: {e}")
    os.makedirs(outdir, exist_ok=True)
    md, page = build(res, outdir).write(outdir, "summary.md", "report.html")
    with open(md) as f:
        head = f.read().split("\n## ", 3)
    print("\n## ".join(head[:2]).strip())
    print(f"\nreport: wrote {page}, {md} and the PNGs in {outdir}")
