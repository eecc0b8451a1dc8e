"""Every job in one SQLite file: which node and NIC each job tested, what its verdict counted, and
the fabric's median bandwidth per class, so that a repeat offender or a slow drift shows.

    analysis/history ingest DB FILE.h5|DIR...   add jobs (a job ingested twice is one job)
    analysis/history show DB [--last K]         per node and NIC over the last K jobs
    analysis/history html DB [-o history.html]  the same as a page, with bandwidth over time

A job's key is its file's creation time, command line and hosts: the same file, copied or
ingested again, is the same job. What a job counted comes from its verdict (`/verdict`, as rank
0 wrote it): this file judges nothing itself.
"""
import argparse
import hashlib
import html
import os
import sqlite3
import sys

import numpy as np

from .results import load, text

SCHEMA = """
CREATE TABLE IF NOT EXISTS job (key TEXT PRIMARY KEY, path TEXT, created TEXT, tool_version TEXT,
  slurm_job_id TEXT, n_ranks INTEGER, n_nodes INTEGER, status TEXT, complete INTEGER,
  bw_runs INTEGER, judged_runs INTEGER);
CREATE TABLE IF NOT EXISTS tested (key TEXT, node TEXT, device TEXT, PRIMARY KEY (key, node, device));
CREATE TABLE IF NOT EXISTS cause (key TEXT, kind TEXT, basis TEXT, counted INTEGER, node TEXT,
  device TEXT, text TEXT, send_pct REAL, recv_pct REAL);
CREATE TABLE IF NOT EXISTS class_bw (key TEXT, run INTEGER, label TEXT, class TEXT, median_bps REAL);
"""


def job_key(res):
    a = res.attrs
    if a.get("job_id"):  # the job's own key, also in its verdict JSON
        return text(a["job_id"])
    # files written before rdmamesh kept a job_id: what identifies the job
    hosts = ",".join(text(h) for h in res.ranks.get("hostname", []))
    ident = "\n".join([text(a.get("created", "")), text(a.get("command_line", "")), hosts])
    return hashlib.sha1(ident.encode()).hexdigest()[:16]


def class_medians(res):
    """Per bandwidth run: the median pair across nodes and within a node, bytes/s."""
    node = np.asarray(res.ranks.get("node", []))
    out = []
    for run in res.bw_runs():
        bw = run.data.get("tx_bw")
        if bw is None or len(node) != bw.shape[0]:
            continue
        ok = np.isfinite(bw) & (bw > 0)
        np.fill_diagonal(ok, False)
        same = node[:, None] == node[None, :]
        for cls, mask in (("across nodes", ok & ~same), ("within a node", ok & same)):
            if mask.any():
                out.append((run.index, run.label, cls, float(np.median(bw[mask]))))
    return out


def ingest_file(db, path):
    """One results file into the database; False where it is not one or holds no verdict."""
    try:
        res = load(path)
    except (OSError, ValueError, KeyError) as e:
        print(f"history: {path}: skipped ({e})", file=sys.stderr)
        return False
    v = res.verdict
    if v is None:
        print(f"history: {path}: skipped (no verdict: a latency-only job or one older than the verdict)",
              file=sys.stderr)
        return False
    key = job_key(res)
    a = res.attrs
    with db:
        for table in ("job", "tested", "cause", "class_bw"):
            db.execute(f"DELETE FROM {table} WHERE key = ?", (key,))  # a job ingested again replaces itself
        runs = v.get("runs", {})
        db.execute("INSERT INTO job VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                   (key, os.path.abspath(path), text(a.get("created", "")), text(a.get("tool_version", "")),
                    text(a.get("SLURM_JOB_ID", "")), res.n, res.n_nodes, v.get("status", "?"),
                    int(bool(v.get("complete"))), int(runs.get("bandwidth", 0)), int(runs.get("judged", 0))))
        hosts = [text(h) for h in res.ranks.get("hostname", [])]
        devices = [text(d) for d in res.ranks.get("device", [""] * len(hosts))]
        for node, dev in sorted(set(zip(hosts, devices))):
            db.execute("INSERT OR IGNORE INTO tested VALUES (?,?,?)", (key, node, dev))
        for c in v.get("causes", []):
            send = c.get("send_pct") or [None]
            recv = c.get("recv_pct") or [None]
            devs = c.get("devices") or [""]
            for node in c.get("nodes") or [""]:
                # a NIC (or NIC setting) cause names its device; a node or rank cause is the node's
                dev = devs[0] if c.get("kind") in ("nic", "config") else ""
                db.execute("INSERT INTO cause VALUES (?,?,?,?,?,?,?,?,?)",
                           (key, c.get("kind"), c.get("basis"), int(bool(c.get("counted"))), node, dev,
                            c.get("text", ""), send[0], recv[0]))
        for run, label, cls, med in class_medians(res):
            db.execute("INSERT INTO class_bw VALUES (?,?,?,?,?)", (key, run, label, cls, med))
    return True


def ingest(db_path, paths):
    db = sqlite3.connect(db_path)
    db.executescript(SCHEMA)
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".h5")]
        else:
            files.append(p)
    added = sum(ingest_file(db, f) for f in files)
    total = db.execute("SELECT COUNT(*) FROM job").fetchone()[0]
    db.close()
    print(f"history: {added} of {len(files)} file(s) ingested; {total} job(s) in {db_path}")
    return added


def parts(db, last):
    """Per node and per NIC over the last `last` jobs (by creation time): tested, counted, last
    counted, and the two patterns worth an operator's look: a repeat offender (counted in two
    or more of the jobs that tested it) and a flapper (counted, then clean, then counted again)."""
    jobs = [r[0] for r in db.execute("SELECT key FROM job ORDER BY created DESC, key LIMIT ?", (last,))]
    order = {k: i for i, k in enumerate(reversed(jobs))}  # oldest first
    created = dict(db.execute("SELECT key, created FROM job"))
    marks = {}  # (node, device) -> {job index: counted?}
    for key, node, dev in db.execute("SELECT key, node, device FROM tested"):
        if key in order:
            marks.setdefault((node, ""), {})[order[key]] = False
            marks.setdefault((node, dev), {})[order[key]] = False
    # what drains a node: a node, rank, NIC or NIC setting cause (a link or failed pair is either end's,
    # an uplink a switch's)
    for key, node, dev in db.execute("SELECT key, node, device FROM cause WHERE counted = 1 AND node != '' "
                                     "AND kind IN ('node', 'rank', 'nic', 'config')"):
        if key in order:
            marks.setdefault((node, dev), {})[order[key]] = True
            if dev:  # a NIC counted is its node named too
                marks.setdefault((node, ""), {})[order[key]] = True
    # a row per node, and per NIC only where the node was tested through several
    nics = {}
    for node, dev in marks:
        if dev:
            nics.setdefault(node, set()).add(dev)
    rows = []
    for (node, dev), seen in marks.items():
        if dev and len(nics[node]) < 2:
            continue
        history = [seen[i] for i in sorted(seen)]
        named = sum(history)
        last_named = max((i for i in seen if seen[i]), default=None)
        flips = sum(1 for x, y in zip(history, history[1:]) if x != y)
        rows.append({"node": node, "device": dev, "tested": len(history), "named": named,
                     "last_named": created[jobs[len(jobs) - 1 - last_named]] if last_named is not None else "",
                     "repeat": named >= 2, "flapping": named >= 2 and flips >= 2,
                     "timeline": [seen.get(i) for i in range(len(jobs))]})
    rows.sort(key=lambda r: (-r["named"], r["node"], r["device"]))
    return jobs, rows


def show(db_path, last):
    db = sqlite3.connect(db_path)
    jobs, rows = parts(db, last)
    print(f"# history: {len(jobs)} job(s), oldest first left to right (X counted, . tested clean, - not tested)")
    print(f"{'node':<16} {'NIC':<14} {'tested':>6} {'counted':>7}  {'last counted':<20} flags  timeline")
    for r in rows:
        flags = ",".join(f for f in ("repeat" if r["repeat"] else "", "flapping" if r["flapping"] else "") if f)
        line = "".join("-" if t is None else "X" if t else "." for t in r["timeline"])
        print(f"{r['node']:<16} {r['device'] or '(node)':<14} {r['tested']:>6} {r['named']:>7}  "
              f"{r['last_named'] or '-':<20} {flags or '-':<6} {line}")
    drift = db.execute("SELECT j.created, b.class, b.median_bps FROM class_bw b JOIN job j USING (key) "
                       "ORDER BY j.created").fetchall()
    by_class = {}
    for _, cls, med in drift:
        by_class.setdefault(cls, []).append(med)
    for cls, meds in by_class.items():
        print(f"# median pair {cls}: first {meds[0] * 8e-9:.3g} Gb/s, last {meds[-1] * 8e-9:.3g} Gb/s over "
              f"{len(meds)} run(s)")
    db.close()


def page(db_path, out, last):
    db = sqlite3.connect(db_path)
    jobs, rows = parts(db, last)
    meta = {k: (c, s) for k, c, s in db.execute("SELECT key, created, status FROM job")}
    esc = html.escape
    cells = {None: ("#eee", "not tested"), False: ("#9c9", "tested, nothing counted"), True: ("#d55", "counted")}
    parts_html = []
    for r in rows:
        tl = "".join(f'<td style="background:{cells[t][0]}" title="{esc(meta[jobs[len(jobs) - 1 - i]][0])}: '
                     f'{cells[t][1]}"></td>' for i, t in enumerate(r["timeline"]))
        flags = " ".join(f for f in ("repeat offender" if r["repeat"] else "", "flapping" if r["flapping"] else "")
                         if f)
        parts_html.append(f"<tr><td>{esc(r['node'])}</td><td>{esc(r['device'] or '(node)')}</td>"
                          f"<td>{r['tested']}</td><td>{r['named']}</td><td>{esc(r['last_named'] or '-')}</td>"
                          f"<td>{esc(flags)}</td>{tl}</tr>")
    # one row per job: its runs' median pair per class (the median of those runs' medians)
    order_of, per_job = set(jobs), {}
    for key, created, status, cls, med in db.execute(
            "SELECT j.key, j.created, j.status, b.class, b.median_bps FROM class_bw b JOIN job j USING (key) "
            "ORDER BY j.created"):
        if key in order_of:  # the same last K jobs as the table above
            per_job.setdefault((created, key, status), {}).setdefault(cls, []).append(med)
    classes = ("across nodes", "within a node")

    def gbps(v):
        return f"{float(np.median(v)) * 8e-9:.4g}" if v else "-"
    bw_html = "".join(f"<tr><td>{esc(c)}</td><td>{esc(st)}</td>" + "".join(f"<td>{gbps(m.get(x))}</td>" for x in classes)
                      + "</tr>" for (c, _, st), m in sorted(per_job.items()))
    statuses = {}
    for k in jobs:
        statuses[meta[k][1]] = statuses.get(meta[k][1], 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    doc = f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>rdmamesh history</title>
<style>body{{font-family:sans-serif;margin:2em}} table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:2px 6px;font-size:13px}} td:empty{{width:12px;padding:0}}</style></head><body>
<h1>rdmamesh history</h1>
<p>{len(jobs)} job(s), from {esc(meta[jobs[-1]][0]) if jobs else '-'} to {esc(meta[jobs[0]][0]) if jobs else '-'}:
{esc(summary)}. A node or NIC is a <b>repeat offender</b> when the verdicts counted it in two or more of the jobs
that tested it, <b>flapping</b> when it was counted, then clean, then counted again.</p>
<h2>Nodes and NICs</h2>
<table id="parts"><tr><th>node</th><th>NIC</th><th>tested</th><th>counted</th><th>last counted</th><th>flags</th>
<th colspan="{max(len(jobs), 1)}">jobs, oldest first (red counted, green clean, grey not tested)</th></tr>
{''.join(parts_html)}</table>
<h2>Median pair by class, job by job</h2>
<table id="bandwidth"><tr><th>job created</th><th>verdict</th><th>median pair across nodes [Gb/s]</th>
<th>within a node [Gb/s]</th></tr>{bw_html}</table>
</body></html>
"""
    with open(out, "w") as f:
        f.write(doc)
    db.close()
    print(f"history: {out}: {len(rows)} node(s)/NIC(s) over {len(jobs)} job(s)")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="analysis/history", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    i = sub.add_parser("ingest", help="add results files (or every .h5 under a folder) to the database")
    i.add_argument("db")
    i.add_argument("paths", nargs="+")
    s = sub.add_parser("show", help="per node and NIC over the last K jobs")
    s.add_argument("db")
    s.add_argument("--last", type=int, default=50)
    h = sub.add_parser("html", help="the same as a page")
    h.add_argument("db")
    h.add_argument("-o", "--output", default="history.html")
    h.add_argument("--last", type=int, default=50)
    a = ap.parse_args(argv)
    if a.cmd != "ingest" and not os.path.exists(a.db):
        sys.exit(f"analysis/history: error: {a.db}: no such database; create it with analysis/history ingest")
    if a.cmd == "ingest":
        ingest(a.db, a.paths)
    elif a.cmd == "show":
        show(a.db, a.last)
    else:
        page(a.db, a.output, a.last)
