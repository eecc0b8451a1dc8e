"""analysis/compare BEFORE.h5 AFTER.h5 [-o DIR] [--threshold PCT]: is the fabric as good as
before? For every run both files hold (same mode, pattern, op, size, QPs, direction), each
pair's bandwidth after ÷ before, as a heatmap; what got slower or faster by more than the
threshold, named as the smallest cause (node, rank, link) by the rule rdmamesh applies to a run;
first, the causes rank 0 named in the after file's runs and not in the before file's (what a file's
--retest showed fine alone counts as not named; what it counted alone, where the run's noise hid
it, as named).
Ranks are matched by (host, rank on the host) when both files have the same hosts, else by
rank number. Writes compare.md, compare.html and the PNGs into DIR."""
import argparse
import os
import sys

import numpy as np

from . import figures, finder
from .doc import Doc
from .results import human_size, load


def run_key(run):
    a = run.attrs
    return (a["mode"], a["pattern"], a["op"], int(a["size"]), int(a.get("qps", 1)), int(a.get("bidirectional", 0)),
            int(a.get("active_per_node", 0)))


def rank_map(before, after):
    """perm[i] = the rank in `before` that plays after's rank i, and how they were matched."""
    if before.n != after.n:
        raise ValueError(f"the files have {before.n} and {after.n} ranks; compare needs the same job size")

    def keys(res):
        return [(h, int(lr)) for h, lr in zip(res.ranks["hostname"], res.ranks["local_rank"])]

    kb, ka = keys(before), keys(after)
    if len(set(kb)) == before.n and set(kb) == set(ka):
        where = {k: i for i, k in enumerate(kb)}
        return np.array([where[k] for k in ka]), "by host and rank on the host"
    return np.arange(after.n), "by rank number (the files' hosts differ)"


def matched_runs(before, after):
    first = {}
    for r in before.runs:
        if r.retest_of < 0:  # a retest is a few pairs alone: nothing to match it with
            first.setdefault(run_key(r), r)
    seen, out = set(), []
    for r in after.runs:
        k = run_key(r)
        if r.retest_of >= 0:
            continue
        if k in first and k not in seen:
            seen.add(k)
            out.append((first[k], r))
    return out


def ratio_of(b_run, a_run, perm, what):
    """after ÷ before per pair, in after's rank numbering; NaN where either did not measure."""
    x = b_run.data[what].astype(float)[np.ix_(perm, perm)]
    y = a_run.data[what].astype(float)
    ok = a_run.measured() & b_run.measured()[np.ix_(perm, perm)] & (x > 0) & np.isfinite(y)
    r = np.full(y.shape, np.nan)
    r[ok] = y[ok] / x[ok]
    return r, ok


REL = "the median pair's change"  # scores are (after ÷ before) ÷ the run's median of it


def fold(found):
    """Causes per run -> one line per cause over the runs: the most persistent first."""
    by = {}
    for label, direction, c in found:
        key = (direction, c["kind"], c["node"], c["rank"], c["peer"])
        by.setdefault(key, []).append((label, c))
    def severity(kv):  # how far its worst side moved, in log scale: 0.5× and 2× weigh the same
        v = [abs(np.log(c[s])) for _, c in kv[1] for s in ("send", "recv") if np.isfinite(c[s]) and c[s] > 0]
        return -max(v, default=0)

    order = {"uplink": 0, "node": 1, "nic": 2, "rank": 3, "link": 4}
    return sorted(by.items(), key=lambda kv: (-len(kv[1]), order[kv[0][1]], kv[0][0] != "slower", severity(kv)))


def span(v):
    v = [x for x in v if np.isfinite(x)]
    lo, hi = min(v), max(v)
    return f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}–{hi:.2f}"


def describe(res, key, seen, total):
    direction, kind, node, rank, peer = key
    runs = f"{direction} in {len(seen)} of {total} matched runs ({', '.join(label for label, _ in seen)})"
    if kind == "link":
        return f"link {res.who(rank)} -> {res.who(peer)}: {runs}: {span([c['send'] for _, c in seen])}× {REL}"
    sides = []
    for side in ("send", "recv"):
        v = [c[side] for _, c in seen if np.isfinite(c[side])]
        if v:
            words = ("up", "down") if kind == "uplink" else ("its sends", "its receives")
            sides.append(f"{words[0] if side == 'send' else words[1]} at {span(v)}×")
    who = (res.who(rank) if kind == "rank" else f"uplink {res.uplink_subject(node, peer)}" if kind == "uplink"
           else res.nic_name(node, peer) if kind == "nic" else f"node {res.node_name(node)}")
    return f"{who}: {runs}: {' and '.join(sides)} {REL}"


def members(res, c):
    """A cause's ranks, as the verdict lists them: a node's or a NIC's ranks, and its own ends."""
    m = set(np.flatnonzero(res.nodes == c.node).tolist()) if c.kind == "node" else set()
    if c.kind == "nic":
        m |= set(res.nic_ranks(c.node, c.peer).tolist())
    if c.rank >= 0:
        m.add(c.rank)
    if c.kind not in ("uplink", "nic") and c.peer >= 0:  # an uplink's peer is a switch, a NIC's its rail
        m.add(c.peer)
    return frozenset(m)


def cleared_by_retest(res):
    """{(kind, ranks, run index)} of what the file's --retest showed fine alone: the verdict did
    not name it, so neither does compare (a clean run's noise pick is no cause to be 'no longer'
    or 'not newly' named)."""
    out = set()
    for c in (res.verdict or {}).get("causes", []):
        if c.get("cleared"):
            out |= {(c["kind"], frozenset(int(r) for r in c.get("ranks", [])), int(i)) for i in c.get("runs", [])}
    return out


def named_in(res, run, to_after, cleared):
    """The causes rank 0 named in `run` (its /outliers, the console's rule) and the file's retest
    did not clear (`cleared`, cleared_by_retest's), keyed in after's rank numbering:
    {(kind, node name, rank, peer): its figure}."""
    out = {}
    for c in run.causes:
        if c.kind not in ("node", "rank", "link", "uplink", "nic"):
            continue
        if (c.kind, members(res, c), run.index) in cleared:
            continue
        rank = int(to_after[c.rank]) if c.rank >= 0 else -1
        peer = int(to_after[c.peer]) if c.peer >= 0 and c.kind not in ("uplink", "nic") else c.peer
        node = (res.node_name(c.node) if c.kind == "node" else res.nic_name(c.node, c.peer) if c.kind == "nic"
                else res.uplink_subject(c.node, c.peer) if c.kind == "uplink" else "")
        words = ("up", "down") if c.kind == "uplink" else ("its sends", "its receives")
        sides = [f"{w} at {v:.2g} %" for w, v in zip(words, (c.send_pct, c.recv_pct)) if np.isfinite(v)]
        out[(c.kind, node, rank, peer)] = " and ".join(sides) + " of the median"
    out.update({k: v for k, v in found_alone(res, run, to_after).items() if k not in out})
    return out


def found_alone(res, run, to_after):
    """What the file's --retest counted in `run` that its noise hid (basis retest): the verdict
    names it, so compare does too. Keyed as named_in's; an uplink is never one (no retest tests it)."""
    out = {}
    for c in (res.verdict or {}).get("causes", []):
        ranks = [int(r) for r in c.get("ranks", [])]
        if not c.get("counted") or c.get("basis") != "retest" or run.index not in c.get("runs", []) or not ranks:
            continue
        if c["kind"] == "node":
            key = ("node", res.node_name(int(res.nodes[ranks[0]])), -1, -1)
        elif c["kind"] == "nic":
            key = ("nic", res.nic_name(int(res.nodes[ranks[0]]), int(c["rail"])), -1, int(c["rail"]))
        elif c["kind"] == "rank":
            key = ("rank", "", int(to_after[ranks[0]]), -1)
        elif c["kind"] == "link" and len(ranks) == 2:
            key = ("link", "", int(to_after[ranks[0]]), int(to_after[ranks[1]]))
        else:
            continue
        words = ("", "") if c["kind"] == "link" else ("its sends ", "its receives ")
        sides = [f"{w}at {v[0]:.2g} %" for w, v in zip(words, (c.get("send_pct"), c.get("recv_pct"))) if v]
        out[key] = " and ".join(sides) + " of the control pairs alone (its retest; the run's noise hid it)"
    return out


def new_causes(before, after, pairs, perm):
    """What rank 0 names in after's runs and did not in before's, and what it no longer names
    (two lists): each file judged by its own run's noise, so what only moved because of a cause
    (the CPU a sick node freed) is never one."""
    inv = np.empty_like(perm)
    inv[perm] = np.arange(len(perm))
    found, gone = {}, {}
    cleared_after, cleared_before = cleared_by_retest(after), cleared_by_retest(before)
    for b_run, a_run in pairs:
        if a_run.mode != "bw":
            continue
        now = named_in(after, a_run, np.arange(after.n), cleared_after)
        then = named_in(before, b_run, inv, cleared_before)
        for key, fig in now.items():
            if key not in then:
                found.setdefault(key, []).append((a_run.label, fig))
        for key, fig in then.items():
            if key not in now:
                gone.setdefault(key, []).append((a_run.label, fig))

    def who(key):
        kind, node, rank, peer = key
        return {"node": f"node {node}", "uplink": f"uplink {node}", "rank": after.who(rank),
                "nic": node}.get(
            kind, f"link {after.who(rank)} -> {after.who(peer) if peer >= 0 else '?'}")

    order = {"uplink": 0, "node": 1, "nic": 2, "rank": 3, "link": 4}
    n_bw = sum(a.mode == "bw" for _, a in pairs)
    newly = [f"{who(k)}: newly named in {len(v)} of {n_bw} matched runs ({', '.join(l for l, _ in v)}): "
             f"{v[0][1]} there, not named before"
             for k, v in sorted(found.items(), key=lambda kv: (-len(kv[1]), order[kv[0][0]]))]
    no_longer = [f"{who(k)}: no longer named ({', '.join(l for l, _ in v)}; before: {v[0][1]})"
                 for k, v in sorted(gone.items(), key=lambda kv: (-len(kv[1]), order[kv[0][0]]))]
    return newly, no_longer


def build(before, after, outdir, threshold):
    doc = Doc(f"rdmamesh compare: {os.path.basename(before.path)} → {os.path.basename(after.path)}")
    perm, how = rank_map(before, after)
    pairs = matched_runs(before, after)
    doc.para(f"before: {before.path} ({before.attrs.get('created', '?')}, {before.attrs.get('tool_version', '?')}); "
             f"after: {after.path} ({after.attrs.get('created', '?')}, {after.attrs.get('tool_version', '?')}); "
             f"{after.n} ranks matched {how}; threshold ±{threshold:g} %")
    lo, hi = 1 - threshold / 100, 1 + threshold / 100
    overall, found, table, changed, images, lat, moved = [], [], [], [], [], [], []
    n_bw = 0
    for b_run, a_run in pairs:
        label = a_run.label
        if a_run.mode != "bw":
            p50_b = float(b_run.attrs.get("lat_all_p50_us", np.nan))
            p50_a = float(a_run.attrs.get("lat_all_p50_us", np.nan))
            if p50_b > 0 and np.isfinite(p50_a) and not lo <= p50_a / p50_b <= hi:
                lat.append(f"latency {label}: p50 {p50_b:.4g} → {p50_a:.4g} µs ({p50_a / p50_b:.2f}× before)")
            continue
        ratio, ok = ratio_of(b_run, a_run, perm, "tx_bw")
        if not ok.any():
            continue
        n_bw += 1
        v = ratio[ok]
        job = float(np.median(v))
        if not lo <= job <= hi:
            overall.append(f"{label}: the median pair at {job:.2f}× before ({'slower' if job < 1 else 'faster'} "
                           f"as a whole)")
        # a cause stands out from the job's own change (a fabric 30 % slower everywhere is one
        # finding above, not N² slower pairs), by rank 0's own finder: against the pairs of its class and
        # round, beyond both the threshold and the spread of the other pairs' changes. Only what
        # got slower is a cause; pairs that got faster gained what the causes gave up (CPU, port
        # time) and are counted apart, never named.
        rel = ratio / job
        # a ratio of two runs carries the noise of both: a change is slower only beyond what those
        # noises (each run's finder measured its own) make of it by chance, as well as the threshold
        noises = [r.noise for r in (b_run, a_run) if np.isfinite(r.noise)]
        floor = min(np.log(lo), -3.0 * float(np.sqrt(np.sum(np.square(noises)))))
        slower = finder.judge(ratio, ok, after.nodes, a_run.data["round"].astype(int), 100 * np.exp(floor),
                              uplinks=after.uplinks(), rails=after.rails if after.multi_nic() else None, label=label)
        found += [(label, "slower", c) for c in slower]
        n_faster = int((ok & (rel > hi)).sum())
        if n_faster:
            moved.append(f"{label}: {n_faster} pair(s) faster than +{threshold:g} % against the median pair's change "
                         f"(not causes)")
        bw_b = b_run.pair_bw()[np.ix_(perm, perm)][ok] * figures.GB
        bw_a = a_run.pair_bw()[ok] * figures.GB
        table.append([b_run.name, a_run.name, a_run.pattern, human_size(a_run.size), int(ok.sum()), f"{np.median(bw_b):.3g}",
                      f"{np.median(bw_a):.3g}", f"{job:.2f}", f"{v.min():.2f}", f"{v.max():.2f}",
                      int((ok & (rel < lo)).sum()), int((ok & (rel > hi)).sum())])
        for a, b in zip(*np.nonzero(ok & ((rel < lo) | (rel > hi)))):
            changed.append([label, a, b, f"{b_run.pair_bw()[perm[a], perm[b]] * figures.GB:.3g}",
                            f"{a_run.pair_bw()[a, b] * figures.GB:.3g}", f"{ratio[a, b]:.2f}", f"{rel[a, b]:.2f}"])
        path = os.path.join(outdir, f"ratio-{a_run.name}.png")
        figures.ratio_heatmap(after, ratio, slower, f"send bandwidth after ÷ before, {label}", path)
        images.append((path, f"run {a_run.name}: {label}, per pair after ÷ before; outlined: beyond ±{threshold:g} % "
                             f"of the job's median change"))
    folded = fold(found)
    verdict = [describe(after, key, seen, n_bw) for key, seen in folded if key[1] != "link"]
    # one pair slower in one matched run is a suspect, as in rdmamesh's own verdict: scheduling
    # alone makes those (a loaded machine once moved a link far from the sick node to 0.70×)
    links = [describe(after, key, seen, n_bw) for key, seen in folded if key[1] == "link" and len(seen) >= 2]
    suspects = [f"suspect: {describe(after, key, seen, n_bw)} (one pair in one run: not a cause until another "
                f"run or rdmamesh --retest shows it)" for key, seen in folded if key[1] == "link" and len(seen) < 2]
    verdict += links[:10] + ([f"… {len(links) - 10} more links (table below)"] if len(links) > 10 else [])
    suspects = suspects[:5] + ([f"… {len(suspects) - 5} more suspect links (table below)"] if len(suspects) > 5 else [])
    # what got worse first (newly named, slower), then what got better: an operator acts on the first
    newly, no_longer = new_causes(before, after, pairs, perm)
    verdict = overall + newly + verdict + no_longer + lat + moved + suspects
    doc.h2("Verdict")
    if not pairs:
        verdict = ["the files have no run in common (same mode, pattern, op, size, QPs, direction)"]
    elif not verdict:
        verdict = [f"no change beyond ±{threshold:g} %: every matched run's median pair and every pair against it "
                   f"within {lo:.2f}–{hi:.2f}× before"]
    doc.items(verdict, strong=True)
    if table:
        doc.h2("Matched bandwidth runs")
        doc.table(["run before", "run after", "pattern", "size", "pairs", "median before Gb/s", "median after Gb/s", "median ratio",
                   "min ratio", "max ratio", "slower", "faster"], table)
        for path, caption in images:
            doc.image(path, caption)
    if changed:
        doc.h2("Pairs that changed (against the job's median change)")
        doc.table(["run", "src", "dst", "before Gb/s", "after Gb/s", "ratio", "÷ median ratio"], changed[:500])
    return doc, verdict


def main(argv=None):
    ap = argparse.ArgumentParser(prog="analysis/compare", description=__doc__.splitlines()[0])
    ap.add_argument("before", help="the reference results file (last month's)")
    ap.add_argument("after", help="the results file to judge")
    ap.add_argument("-o", "--outdir", default="compare", help="folder for compare.md, compare.html and the PNGs "
                                                              "(default ./compare)")
    ap.add_argument("--threshold", type=float, default=10, help="a pair changed when after ÷ before is outside "
                                                                "1 ± PCT/100 (default 10)")
    a = ap.parse_args(argv)
    if not 0 < a.threshold < 100:
        sys.exit(f"compare: --threshold {a.threshold:g} is outside (0, 100); give a percentage such as 10")
    try:
        before, after = load(a.before), load(a.after)
        os.makedirs(a.outdir, exist_ok=True)
        doc, verdict = build(before, after, a.outdir, a.threshold)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"compare: {e}")
    md, page = doc.write(a.outdir, "compare.md", "compare.html")
    print("\n".join(f"- {v}" for v in verdict))
    print(f"compare: wrote {page}, {md} and the PNGs in {a.outdir}")
