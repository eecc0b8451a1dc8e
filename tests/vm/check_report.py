#!/usr/bin/python3
"""Check analysis/report and analysis/compare output against the results files, computing every
figure again from the HDF5 file here (not through the analysis package).

  check_report.py report FILE DIR [--slow-rank R] [--short-rank S]
                                                    summary.md's tables match FILE; its verdict
                                                    opens with the job's status and names the
                                                    causes counted over FILE's runs (rank R
                                                    first, in most runs); it names every
                                                    rank FILE shows with a short window (below 90 %
                                                    of duration_s, not cut by a stop request), with
                                                    its run count and shortest window (S's: 0 s);
                                                    report.html is self-contained and shows the
                                                    same verdict
  check_report.py series FILE INTERVAL              every duration bw run has tx_bw_t/rx_bw_t [T,N,N] on
                                                    the grid t_s = k x INTERVAL, and each measured pair's
                                                    samples, over its own interval (bytes / bw), add up
                                                    to the bytes of that interval
  check_report.py series FILE 0                     no run has a time series (--interval 0)
  check_report.py fabric FILE UPLINK                the report of a --topology file draws the
                                                    tree with UPLINK (leaf3-spine) red alone and
                                                    its heatmaps' ranks leaf by leaf
  check_report.py compare BEFORE AFTER DIR --slow-rank R
                                                    compare.md's medians match the files; the
                                                    first cause in its verdict is rank R, slower,
                                                    in every matched bandwidth run
"""
import argparse
import html
import json
import os
import re
import sys

import h5py
import numpy as np

GB = 8 / 1e9
errors = []


def check(cond, what):
    if not cond:
        errors.append(what)


def tables(md):
    """{first header cell: [rows as lists of cells]} of every markdown table."""
    out, lines = {}, md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("| ") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            header = tuple(c.strip() for c in line.strip("|").split("|"))
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("| "):
                    break
                rows.append([c.strip() for c in row.strip("|").split("|")])
            out[header] = rows
    return out


def verdict_lines(md):
    m = re.search(r"^## Verdict\n\n((?:- .*\n)+)", md, re.M)
    return [line[2:] for line in m.group(1).splitlines()] if m else []


def measured(g):
    n = g["tx_bw"].shape[0]
    mask = ~np.eye(n, dtype=bool) & (g["round"][()] >= 0)
    if "active" in g:
        a = g["active"][()].astype(bool)
        mask &= a[:, None] & a[None, :]
    return mask


def close(text, value, what):
    """The report prints 3 significant digits: equal at that precision."""
    try:
        shown = float(text)
    except ValueError:
        check(False, f"{what}: {text!r} is not a number")
        return
    check(abs(shown - value) <= 0.0051 * abs(value) + 1e-12, f"{what}: report says {text}, the file {value:.4g}")


def png_ok(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 10000


def report(a):
    md = open(os.path.join(a.dir, "summary.md")).read()
    page = open(os.path.join(a.dir, "report.html")).read()
    t = tables(md)
    with h5py.File(a.file, "r") as f:
        runs = {k: f["runs"][k] for k in f["runs"]}
        bw = {k: g for k, g in runs.items() if g.attrs["mode"] == "bw" and "retest_of" not in g.attrs}
        rows = next((r for h, r in t.items() if h[0] == "run" and "median Gb/s" in h), [])
        check(len(rows) == len(bw), f"bandwidth table has {len(rows)} rows, the file {len(bw)} bw runs")
        for row in rows:
            g = bw.get(row[0])
            if g is None:
                check(False, f"bandwidth table names run {row[0]}, not in the file")
                continue
            v = g["tx_bw"][()][measured(g)] * GB
            check(int(row[4]) == v.size, f"run {row[0]}: {row[4]} pairs, the file {v.size}")
            # a rank starved of CPU for its whole window measures for 0 s: NaN, left out of the figures
            close(row[5], np.nanmin(v), f"run {row[0]} min")
            close(row[6], np.nanmedian(v), f"run {row[0]} median")
            close(row[7], np.nanmax(v), f"run {row[0]} max")
            k = len(g["outliers/kind"]) if "outliers" in g else 0
            check(int(row[10]) == k, f"run {row[0]}: {row[10]} causes, the file {k}")
        # --retest: one line for the pairs alone, its counts as most of each pair's retests say
        folded = {}
        for g in runs.values():
            if "retest" in g:
                t = g["retest"]
                fine_ = t["fine"][:] if "fine" in t else 1 - t["still_slow"][:]
                for a_, b_, v_, f_ in zip(t["src"][:], t["dst"][:], t["still_slow"][:], fine_):
                    folded.setdefault((int(a_), int(b_)), []).append((int(v_), int(f_)))
        said = [x for x in verdict_lines(md) if x.startswith("retest: ") and "pair(s) alone" in x]
        check(len(said) == (1 if folded else 0), f"{len(said)} retest pair lines, the file retested {len(folded)} pairs")
        if said and folded:
            m = re.match(r"retest: (\d+) pair\(s\) alone over \d+ run\(s\): (\d+) still slow alone.*, (\d+) fine, "
                         r"(\d+) undecided$", said[0])
            still = sum(1 for v in folded.values() if 2 * sum(x[0] for x in v) > len(v))
            fine = sum(1 for v in folded.values() if not 2 * sum(x[0] for x in v) > len(v) and any(x[1] for x in v))
            check(bool(m) and (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (len(folded), still, fine),
                  f"retest line {said[0]!r}: the file has {len(folded)} pairs, {still} still slow, {fine} fine")
        lat = [g for g in runs.values() if g.attrs["mode"] == "lat"]
        lrows = next((r for h, r in t.items() if h[0] == "pattern" and "p50 µs" in h), [])
        check(len(lrows) == len(lat), f"latency table has {len(lrows)} rows, the file {len(lat)} lat runs")
        for row, g in zip(lrows, lat):
            close(row[2], float(g.attrs["lat_all_p50_us"]), f"latency {row[1]} p50")
            close(row[4], float(g.attrs["lat_all_p99_us"]), f"latency {row[1]} p99")
        # a rank's window: the shortest seconds of its measured pairs (tx_s as sender, rx_s as
        # receiver), short below 90 % of duration_s; a run a stop request cut short is exempt
        short = {}  # rank -> [window seconds]
        for g in bw.values():
            d = float(g.attrs.get("duration_s", 0))
            if not d > 0 or int(g.attrs.get("interrupted", 0)):
                continue
            m, tx, rx = measured(g), g["tx_s"][()], g["rx_s"][()]
            for r_ in range(m.shape[0]):
                w = np.concatenate([tx[r_, m[r_, :]], rx[m[:, r_], r_]])
                w = w[np.isfinite(w)]
                if w.size and w.min() < 0.9 * d:
                    short.setdefault(r_, []).append(float(w.min()))
    v = verdict_lines(md)
    said = {}
    for x in v:
        m = re.match(r"rank (\d+) \(.*?\): short window in (\d+) of (\d+) bandwidth runs .*: measured ([0-9.]+)", x)
        if m:
            said[int(m.group(1))] = (int(m.group(2)), int(m.group(3)), float(m.group(4)))
    check(set(said) == set(short), f"short-window verdicts for ranks {sorted(said)}, the file has short windows "
                                   f"for ranks {sorted(short)}")
    for r_, w in short.items():
        k, total, lo = said.get(r_, (0, 0, -1.0))
        check(k == len(w) and total == len(bw), f"rank {r_}: short window in {k} of {total} runs said, the file "
                                                 f"{len(w)} of {len(bw)}")
        check(abs(lo - min(w)) <= 0.0051 * min(w) + 1e-9, f"rank {r_}: shortest window said {lo} s, the file {min(w)}")
    if a.short_rank is not None:
        check(said.get(a.short_rank, (0, 0, -1.0))[2] == 0,
              f"the verdict does not say rank {a.short_rank} measured 0 s: {said.get(a.short_rank)}")
    check(bool(v), "summary.md has no verdict")
    # the verdict folds every finished bandwidth run's causes: counted when named in more than
    # half of the runs that were judged (a failed pair always); healthy when none is counted
    seen, judged, confirmed, cleared, receives = {}, 0, set(), set(), set()
    with h5py.File(a.file, "r") as f:  # the groups above belong to a file closed since
        for g in f["runs"].values():  # a retest's still-slow pairs confirm suspect links
            if "retest" in g:
                t = g["retest"]
                confirmed |= {(int(x), int(y)) for x, y, s_ in zip(t["src"][:], t["dst"][:], t["still_slow"][:]) if s_}
                # fine alone; a pair between the two bounds (undecided) clears nothing
                fine = t["fine"][:] if "fine" in t else 1 - t["still_slow"][:]
                cleared |= {(int(x), int(y)) for x, y, s_ in zip(t["src"][:], t["dst"][:], fine) if s_}
        for name in bw:
            g = f["runs"][name]
            if int(g.attrs.get("interrupted", 0)) or "outliers" not in g:
                continue
            o = g["outliers"]
            kinds = [k.decode() if isinstance(k, bytes) else k for k in o["kind"][:]]
            judged += bool(np.isfinite(o.attrs.get("threshold_pct", np.nan)) or kinds)
            basis = [x.decode() if isinstance(x, bytes) else x for x in o["basis"][:]] if "basis" in o \
                else ["noise"] * len(kinds)
            for i, k in enumerate(kinds):
                key = (k, basis[i], int(o["node"][i]), int(o["rank"][i]), int(o["peer"][i]))
                seen[key] = seen.get(key, 0) + 1
                if np.isfinite(o["recv_pct"][i]):
                    receives.add(key)
    # a suspect (a link against the noise: one pair in one run) counts when a retest confirms it or
    # most of two or more runs name it; a rank also when the retest confirmed two or more of its
    # sends, and then its links are its cause, not causes of their own; a rank never when the
    # retest found two or more of its sends fine alone and none still slow
    def confirmed_sends(r):
        return sum(1 for src, _ in confirmed if src == r)

    def cleared_rank(r):
        return confirmed_sends(r) == 0 and sum(1 for src, _ in cleared if src == r) >= 2

    def confirmed_receives(r):
        return sum(1 for _, dst in confirmed if dst == r)

    def counts(k, c):
        most = 2 * c > max(judged, 1)
        if k[0] == "failed":
            return True
        if k[:2] == ("link", "noise"):
            return (k[3], k[4]) in confirmed or (most and c >= 2)
        # a rank named by one run is a suspect too: its pairs share its CPU, one draw of them
        if k[:2] == ("rank", "noise") and c < 2:
            return not cleared_rank(k[3]) and (confirmed_sends(k[3]) >= 2 or
                                               (k in receives and confirmed_receives(k[3]) >= 2))
        if k[0] == "rank" and cleared_rank(k[3]):
            return False
        return most or (k[0] == "rank" and confirmed_sends(k[3]) >= 2)

    counted = {k: c for k, c in seen.items() if counts(k, c)}
    # what the runs' noise hid and the retest found: a side of a rank (its sends or receives) with
    # most of its retested pairs, two at least, still slow alone, toward two or more peers that are
    # not one node; a node when every one of its ranks (two or more) has such a side
    with h5py.File(a.file, "r") as f:
        node_of = [int(x) for x in f["ranks/node"][()]]

    def ranks_on(n):
        return [r for r in range(len(node_of)) if node_of[r] == n]

    def culprits_of(keys):
        return {k[3] for k in keys if k[0] == "rank"} | {r for k in keys if k[0] == "node" for r in ranks_on(k[2])}

    def slow_side(conf, clr, r, sends):  # the side's slow pairs, or 0 where it is not slow
        mine = [p for p in conf if p[0 if sends else 1] == r]
        fine = [p for p in clr if p[0 if sends else 1] == r]
        groups = {node_of[q] if node_of[q] != node_of[r] else -1 - q for q in (p[1 if sends else 0] for p in mine)}
        return len(mine) if len(mine) >= 2 and len(mine) > len(fine) and len(groups) >= 2 else 0

    def slow_alone(culprits):  # greedy: the cause explaining the most slow pairs, then the rest
        out = []
        while True:
            ports = {node_of[r] for r in culprits}  # pairs across nodes at a culprit's node cross its port

            def kept(p):
                return not set(p) & culprits and not (node_of[p[0]] != node_of[p[1]] and
                                                      (node_of[p[0]] in ports or node_of[p[1]] in ports))
            conf = {p for p in confirmed if kept(p)}
            clr = {p for p in cleared - confirmed if kept(p)}
            per = {r: slow_side(conf, clr, r, True) + slow_side(conf, clr, r, False) for p in conf | clr for r in p}
            per = {r: n for r, n in per.items() if n}
            nodes = sorted((n for n in set(node_of) if len(ranks_on(n)) >= 2 and all(r in per for r in ranks_on(n))),
                           key=lambda n: min(ranks_on(n)))
            cands = [("node", n, sum(per[r] for r in ranks_on(n))) for n in nodes] + \
                [("rank", r, per[r]) for r in sorted(per) if node_of[r] not in nodes]
            if not cands:
                return out
            best = max(cands, key=lambda c: c[2])
            out.append(best)
            culprits |= set(ranks_on(best[1])) if best[0] == "node" else {best[1]}

    for kind, x, _ in slow_alone(culprits_of(counted)):
        if kind == "node":
            if any(k[0] in ("node", "rank") and k[2] == x for k in counted):
                continue
            named = [k for k in seen if k[0] == "node" and k[2] == x]
            counted.update({k: seen[k] for k in named} or {("node", "retest", x, -1, -1): 0})
            continue
        named = [k for k in seen if k[0] == "rank" and k[3] == x]
        if named:
            counted.update({k: seen[k] for k in named})
        elif not any(k[0] == "node" and k[2] == node_of[x] for k in counted):
            counted[("rank", "retest", node_of[x], x, -1)] = 0
    # a link touching a counted rank or node is that cause's
    culprits = culprits_of(counted)
    counted = {k: c for k, c in counted.items() if not (k[0] == "link" and (k[3] in culprits or k[4] in culprits))}
    status = ("failed" if any(k[0] == "failed" for k in counted) else "degraded" if counted else
              "unjudged" if bw and not judged else "healthy")
    retested = False
    with h5py.File(a.file, "r") as f:
        retested = any("retest" in g for g in f["runs"].values())
        if "verdict" in f:  # an interrupted or failed job says "failed" whatever its runs showed
            doc = json.loads(f["verdict"][0])
            if retested:  # the retest's parts are the model's to judge: the report says what the file's verdict does
                counted = {i: 0 for i, c in enumerate(doc.get("causes", []))
                           if c.get("counted") and c.get("kind") in ("rank", "node", "link", "failed", "fabric")}
            elif doc.get("complete"):
                check(doc["status"] == status, f"the file's verdict says {doc['status']}, its runs {status}")
            status = doc["status"]
    if bw or "verdict" in h5py.File(a.file, "r"):
        check(bool(v) and v[0].startswith(f"{status}: "), f"the verdict does not open with {status!r}: {v[:1]}")
    else:  # a latency-only job has no bandwidth run to judge, and says so
        check("no bandwidth runs; latency only" in v, f"a latency-only verdict without its line: {v[:2]}")
    named = [x for x in v[1:] if re.match(r"(rank \d+ \(.*?\): its |node .*?: its |link .*?: at |pair .*?: failed|"
                                          r"the whole fabric: )", x)]
    check(len(named) == len(counted), f"the verdict names {len(named)} cause(s), the file's runs count "
                                      f"{len(counted)}: {named}")
    if a.slow_rank is not None:
        check(bool(named) and named[0].startswith(f"rank {a.slow_rank} ("), f"the verdict does not open with rank "
                                                                            f"{a.slow_rank}: {named[:1]}")
        # in most judged runs, or (on a VM whose runs are noisy) in some or none, with its sends
        # still slow alone in the retest
        m = re.search(r" in (the retest of )?(\d+) of (\d+) runs", named[0]) if named else None
        check(bool(m) and int(m.group(3)) == judged and int(m.group(2)) > 0 and
              (2 * int(m.group(2)) > judged or confirmed_sends(a.slow_rank) >= 2 or
               (retested and "; alone: " in named[0])),
              f"rank {a.slow_rank} neither named in most judged bandwidth runs nor confirmed by the retest: "
              f"{named[:1]}")
    if v:
        check(v[0] in html.unescape(page), "report.html lacks the verdict's first line")
    check(not re.search(r"(src|href)=['\"](?!data:)", page), "report.html refers to something outside itself")
    pngs = [p for p in os.listdir(a.dir) if p.endswith(".png")]
    check(page.count("data:image/png;base64,") == len(pngs), "report.html does not inline every PNG")
    for p in pngs:
        check(png_ok(os.path.join(a.dir, p)), f"{p} is not a drawn PNG")
        check(f"]({p})" in md, f"summary.md does not show {p}")


def series(a):
    with h5py.File(a.file, "r") as f:
        runs = [g for g in f["runs"].values() if g.attrs["mode"] == "bw"]
        check(bool(runs), "no bandwidth runs")
        for g in runs:
            if a.interval == 0:
                check("tx_bw_t" not in g, f"run {g.name}: a time series with --interval 0")
                continue
            d = float(g.attrs["duration_s"])
            t_count = int(np.ceil(d / a.interval - 1e-9))
            n = g["tx_bw"].shape[0]
            for name in ("tx_bw_t", "rx_bw_t"):
                check(name in g and g[name].shape == (t_count, n, n), f"run {g.name}: {name} is not [{t_count},{n},{n}]")
            if "tx_bw_t" not in g:
                continue
            check(np.allclose(g["t_s"][()], np.arange(t_count) * a.interval), f"run {g.name}: t_s {g['t_s'][()]}")
            check([x.label for x in g["tx_bw_t"].dims] == ["t", "src", "dst"], f"run {g.name}: axis labels")
            m = measured(g)
            k = np.arange(t_count)[:, None, None] * a.interval
            for name, total, secs in (("tx_bw_t", "tx_bytes", "tx_s"), ("rx_bw_t", "rx_bytes", "rx_s")):
                series_ = g[name][()]
                if name == "rx_bw_t" and np.isnan(g["rx_bw"][()][m]).all():
                    check(np.isnan(series_).all(), f"run {g.name}: rx series where the receiver cannot see")
                    continue
                # each pair's own measured interval: a rank starved when its window opened starts
                # its grid late and ends on time, so its window is shorter than duration_s (slots
                # past its end NaN, its last slot partial); one that noticed the end late has an
                # over-long last slot; 0 s measured: no figure, no series
                span = g[secs][()]
                mm = m & (span > 0)
                check(np.isnan(series_[:, m & ~mm]).all(), f"run {g.name}: {name} where the pair measured 0 s")
                want = g[total][()].astype(float)
                width = np.clip(span[None] - k, 0, a.interval)
                width[-1] = np.maximum(span - k[-1], 0)
                fin = np.isfinite(series_)
                lead = np.cumsum(fin[::-1], axis=0)[::-1] > 0  # a finite slot at or after this one
                check(not (lead & ~fin)[:, mm].any() and fin[0][mm].all(),
                      f"run {g.name}: {name} has gaps on measured pairs")
                # the last mark and the interval that divides the bytes are the same clock read:
                # the slot count follows from the span, up to rounding at a boundary
                slots = fin.sum(axis=0)
                lo, hi = (np.minimum(np.ceil(span / a.interval + e), t_count) for e in (-1e-6, 1e-6))
                check(((slots >= lo) & (slots <= hi))[mm].all(),
                      f"run {g.name}: {name} has {slots[mm].tolist()} slots for intervals {span[mm].tolist()} s")
                moved = np.nansum(series_ * width, axis=0)
                ok = np.abs(moved[mm] - want[mm]) <= 1e-3 * want[mm] + int(g.attrs["size"])
                check(ok.all(), f"run {g.name}: {name} sums to {moved[mm][~ok]} bytes, {total} says {want[mm][~ok]}")
                check(np.isnan(series_[:, ~m & ~np.eye(n, dtype=bool)]).all() and
                      np.isnan(series_[:, np.eye(n, dtype=bool)]).all(), f"run {g.name}: {name} outside measured pairs")


def compare(a):
    md = open(os.path.join(a.dir, "compare.md")).read()
    t = tables(md)
    rows = next((r for h, r in t.items() if h[:2] == ("run before", "run after") and "median ratio" in h), [])
    with h5py.File(a.before, "r") as fb, h5py.File(a.after, "r") as fa:
        planned = [k for k in fa["runs"] if "retest_of" not in fa["runs"][k].attrs]  # retests match nothing
        check(len(rows) == len(planned), f"{len(rows)} matched runs, {len(planned)} in the file")
        for row in rows:
            # retests shift the run numbers of one file: the table names both runs
            gb, ga = fb["runs"][row[0]], fa["runs"][row[1]]
            check(all(gb.attrs[k] == ga.attrs[k] for k in ("mode", "pattern", "op", "size")),
                  f"runs {row[0]} and {row[1]} matched, but they differ in mode, pattern, op or size")
            # a ratio needs a before figure > 0: a pair starved to 0 (or 0 s measured) before has none
            ok = measured(ga) & measured(gb) & np.isfinite(ga["tx_bw"][()]) & (gb["tx_bw"][()] > 0)
            ratio = ga["tx_bw"][()][ok] / gb["tx_bw"][()][ok]
            close(row[5], np.nanmedian(gb["tx_bw"][()][ok] * GB), f"run {row[0]} median before")
            close(row[6], np.nanmedian(ga["tx_bw"][()][ok] * GB), f"run {row[0]} median after")
            check(abs(float(row[7]) - np.nanmedian(ratio)) <= 0.0051, f"run {row[1]} median ratio {row[7]}, "
                                                                      f"the files {np.nanmedian(ratio):.3f}")
    v = verdict_lines(md)
    causes = [x for x in v if re.match(r"(rank|node|link) ", x)]
    # among the causes, not necessarily first: on a starved machine the clean run itself can
    # have a slow rank, which then shows as "faster" in every run, an honest finding too
    found = [re.match(rf"rank {a.slow_rank} \(.*?\): (?:slower|newly named) in (\d+) of (\d+) matched runs", x) for x in causes]
    n_bw = sum(1 for r in rows)  # the matched runs table holds the bandwidth runs
    check(any(m and int(m.group(2)) == n_bw and 2 * int(m.group(1)) >= n_bw for m in found),
          f"no cause names rank {a.slow_rank} slower in most runs: {causes}")
    for p in os.listdir(a.dir):
        if p.endswith(".png"):
            check(png_ok(os.path.join(a.dir, p)), f"{p} is not a drawn PNG")


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def png_chunks(path):
    """The PNG's tEXt chunks (matplotlib writes its metadata there)."""
    out, data, pos = {}, open(path, "rb").read(), 8
    while pos + 8 <= len(data):
        length, kind = int.from_bytes(data[pos:pos + 4], "big"), data[pos + 4:pos + 8]
        if kind == b"tEXt":
            k, _, v = data[pos + 8:pos + 8 + length].partition(b"\0")
            out[k.decode("latin-1")] = v.decode("latin-1")
        pos += 12 + length
    return out


def fabric(a):
    """analysis/report of a --topology file: the tree picture marks the counted uplink alone, and
    the heatmap draws the ranks leaf by leaf (two-tier: the leaves as /topology lists them)."""
    import subprocess
    import tempfile
    here = os.path.dirname(os.path.abspath(__file__))
    with h5py.File(a.file, "r") as f:
        t = f["topology"]
        names = [text(x) for x in t["switch"][()]]
        leaf_flag = [int(x) for x in t["leaf"][()]]
        leaf_of = {text(h): int(l) for h, l in zip(t["node"][()], t["node_leaf"][()])}
        hosts = [text(h).split(".")[0] for h in f["ranks/hostname"][()]]
        node = [int(x) for x in f["ranks/node"][()]]
    pos = {sw: i for i, sw in enumerate(i for i, l in enumerate(leaf_flag) if l)}
    leaf = [leaf_of.get(h, -1) for h in hosts]
    order = sorted(range(len(hosts)), key=lambda r: (pos.get(leaf[r], len(pos)), node[r], r))
    lines = [i for i in range(1, len(order)) if leaf[order[i]] != leaf[order[i - 1]]]
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run([os.path.join(here, "../../analysis/report"), a.file, "-o", out], capture_output=True,
                           text=True)
        check(p.returncode == 0, f"report exited {p.returncode}: {p.stderr[-1500:]}")
        tree = png_chunks(os.path.join(out, "fabric.png")) if os.path.exists(os.path.join(out, "fabric.png")) else {}
        check(tree.get("rdmamesh:marked") == f"uplink:{a.uplink}",
              f"fabric.png marks {tree.get('rdmamesh:marked')!r}, expected uplink:{a.uplink} alone")
        heat = sorted(x for x in os.listdir(out) if x.startswith("heatmap-"))
        check(bool(heat), "no heatmap")
        for h in heat:
            m = png_chunks(os.path.join(out, h))
            check(m.get("rdmamesh:view") == f"rank {len(hosts)}", f"{h}: view {m.get('rdmamesh:view')!r}")
            check(m.get("rdmamesh:order") == ",".join(map(str, order)),
                  f"{h}: rank order {m.get('rdmamesh:order')!r}, expected leaf by leaf {order}")
            check(m.get("rdmamesh:leaf_boundaries") == ",".join(map(str, lines)),
                  f"{h}: leaf lines {m.get('rdmamesh:leaf_boundaries')!r}, expected {lines}")
        page = open(os.path.join(out, "summary.md")).read() if os.path.exists(os.path.join(out, "summary.md")) else ""
        check(f"red: {a.uplink}" in page, f"summary.md's Fabric section does not say red: {a.uplink}")
        print(f"check_report: fabric: {names[len(names) - 1] if names else '?'} tree, {a.uplink} red, ranks {order}")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("report")
    r.add_argument("file")
    r.add_argument("dir")
    r.add_argument("--slow-rank", type=int)
    r.add_argument("--short-rank", type=int, help="a rank the verdict must say measured 0 s (a stalled rank)")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    c.add_argument("dir")
    c.add_argument("--slow-rank", type=int, required=True)
    fb = sub.add_parser("fabric")
    fb.add_argument("file")
    fb.add_argument("uplink", help="the uplink the tree must mark, as leaf3-spine")
    s = sub.add_parser("series")
    s.add_argument("file")
    s.add_argument("interval", type=float)
    a = ap.parse_args()
    {"report": report, "compare": compare, "series": series, "fabric": fabric}[a.what](a)
    for e in errors:
        print(f"check_report: {e}")
    print(f"check_report: {a.what} {'ok' if not errors else f'{len(errors)} error(s)'}")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
