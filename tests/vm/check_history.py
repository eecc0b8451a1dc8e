#!/usr/bin/python3
"""analysis/history over every job the VM tests just ran (healthy ones, and ones with a node's
port shaped by the kernel): each job once however often it is ingested, every node and NIC
counted exactly as often as the jobs' own verdict files counted it, and the page drawing it.
Then the monitoring a site wires to the health job, on a job that counted a node: the
node_exporter textfiles (analysis/exporter) and the node check NHC runs (jobs/nhc/rdmamesh.nhc,
jobs/rdmamesh-node-check) fail that node alone, with the verdict's own drain reason. The page
is drawn by a real browser (headless chromium, tools/install-deps --tests) and every red cell
it holds must show.

  tests/vm/check_history.py BUILD/tests   (after the VM tests: their files are in vm-*/)"""
import glob
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
HISTORY = os.path.join(ROOT, "analysis", "history")
PROM = re.compile(r'^(# (HELP|TYPE) \w+ .+|\w+\{(\w+="(?:[^"\\]|\\.)*",?)+\} -?[0-9.e+]+)$')
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL " + what)


class Cells(HTMLParser):
    """The parts table: per row, its text cells and how many timeline cells are red."""

    def __init__(self):
        super().__init__()
        self.rows, self.row, self.table = [], None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.table = a.get("id")
        elif tag == "tr" and self.table == "parts":
            self.row = {"text": [], "red": 0}
        elif tag == "td" and self.row is not None:
            self.row["red"] += "#d55" in a.get("style", "")
            self.row["text"].append("")

    def handle_data(self, data):
        if self.row is not None and self.row["text"]:
            self.row["text"][-1] += data

    def handle_endtag(self, tag):
        if tag == "tr" and self.row is not None:
            if self.row["text"]:
                self.rows.append(self.row)
            self.row = None


def rendered_red_cells(page):
    """The page as a real browser draws it (headless chromium's screenshot): how many red timeline
    cells it shows, each counted by its top-left corner (cells are apart by their borders), or
    None where it could not be drawn."""
    import matplotlib.image
    import numpy as np
    png = page + ".png"
    r = subprocess.run(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1400,4000", f"--screenshot={png}", "file://" + page],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0 and os.path.exists(png), f"chromium could not draw the page (exit {r.returncode}): "
                                                      f"{r.stderr[-300:]}")
    if not os.path.exists(png):
        return None
    rgb = (matplotlib.image.imread(png)[:, :, :3] * 255).round().astype(int)
    red = (rgb[:, :, 0] == 0xdd) & (rgb[:, :, 1] == 0x55) & (rgb[:, :, 2] == 0x55)
    above, left = np.zeros_like(red), np.zeros_like(red)
    above[1:], left[:, 1:] = red[:-1], red[:, :-1]
    return int((red & ~above & ~left).sum())


def monitoring(files):
    """The newest job whose verdict drained one node: its textfiles and the node check agree with it."""
    job = None
    for f in sorted(files, key=os.path.getmtime, reverse=True):
        vf = f[:-3] + ".verdict.json"
        if os.path.exists(vf) and len(json.load(open(vf)).get("drain", [])) == 1:
            job = (f, vf, json.load(open(vf)))
            break
    check(job is not None, "no job drained exactly one node: nothing to check the monitoring against")
    if job is None:
        return
    f, vf, doc = job
    sick, reason = doc["drain"][0]["node"], doc["drain"][0]["reason"]
    with h5py.File(f, "r") as h:
        nodes = sorted({x.decode() if isinstance(x, bytes) else str(x) for x in h["ranks/hostname"][()]})
    print(f"monitoring: {os.path.relpath(f)} drained {sick} of {nodes}")
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([os.path.join(ROOT, "analysis", "exporter"), f, "-o", tmp], capture_output=True, text=True)
        check(out.returncode == 0, f"exporter exited {out.returncode}: {out.stderr[-300:]}")
        for node in nodes:
            path = os.path.join(tmp, node, "rdmamesh.prom")
            lines = open(path).read().splitlines() if os.path.exists(path) else []
            check(bool(lines), f"exporter: no textfile for {node}")
            bad = [x for x in lines if not PROM.match(x)]
            check(not bad, f"exporter: {node}: lines not in the text format: {bad[:2]}")
            check(f'rdmamesh_node_named{{node="{node}"}} {int(node == sick)}' in lines,
                  f"exporter: {node} not marked {'named' if node == sick else 'clean'}")
            check(f'rdmamesh_check_status{{node="{node}",status="{doc["status"]}"}} 1' in lines,
                  f"exporter: {node}: the job's status {doc['status']} not set")
        folder = os.path.join(tmp, "verdicts")
        os.makedirs(folder)
        with open(os.path.join(folder, "job.verdict.json"), "w") as w:
            json.dump(doc, w)
        node_check = os.path.join(ROOT, "jobs", "rdmamesh-node-check")
        for node in nodes:
            r = subprocess.run([node_check, folder, "24"], capture_output=True, text=True,
                               env=dict(os.environ, RDMAMESH_NODE=node))
            want = 1 if node == sick else 0
            check(r.returncode == want, f"rdmamesh-node-check on {node}: exit {r.returncode}, expected {want}")
            check(node != sick or r.stdout.startswith(reason), f"rdmamesh-node-check on {node}: {r.stdout!r}")
        # NHC sources the check and calls it; its die() is what fails the node
        nhc = (f'die() {{ echo "DIED $1 $2"; }}; RDMAMESH_NODE_CHECK={node_check}; '
               f'source {os.path.join(ROOT, "jobs", "nhc", "rdmamesh.nhc")}; check_rdmamesh {folder} 24')
        for node in nodes:
            r = subprocess.run(["bash", "-c", nhc], capture_output=True, text=True, env=dict(os.environ, HOSTNAME_S=node))
            died = r.stdout.startswith("DIED 1 " + reason)
            check(died == (node == sick), f"NHC check_rdmamesh on {node}: {r.stdout!r}")


def main():
    tests = sys.argv[1]
    files = sorted(glob.glob(os.path.join(tests, "vm-*", "**", "*.h5"), recursive=True))
    # what each job's own verdict (its file's /verdict) counted, per node: the oracle (a node, rank
    # or NIC cause drains its node)
    want, jobs_with_verdict, ids = {}, 0, set()
    for f in files:
        try:
            with h5py.File(f, "r") as h:
                doc = json.loads(h["verdict"][0]) if "verdict" in h else None
                job_id = h.attrs.get("job_id")
        except OSError:
            continue
        if doc is None:
            continue
        jobs_with_verdict += 1
        # the job's key: drawn at start, in the file, its /verdict and its verdict file alike
        job_id = job_id.decode() if isinstance(job_id, bytes) else str(job_id)
        check(re.fullmatch(r"[0-9a-f]{16}", job_id) is not None, f"{f}: job_id {job_id!r}")
        check(doc.get("job_id") == job_id, f"{f}: /verdict's job_id {doc.get('job_id')!r}, the file's {job_id!r}")
        vf = f[:-3] + ".verdict.json"
        if os.path.exists(vf):
            got = json.load(open(vf)).get("job_id")
            check(got == job_id, f"{vf}: job_id {got!r}, its results file's {job_id!r}")
        ids.add(job_id)
        named = {n for c in doc.get("causes", []) if c.get("counted") and c.get("kind") in ("node", "rank", "nic", "config")
                 for n in c.get("nodes", [])}
        for n in named:  # jobs that counted it, not causes: two ranks of one node are one job's word
            want[n] = want.get(n, 0) + 1
    check(jobs_with_verdict >= 20, f"only {jobs_with_verdict} jobs with a verdict file to build a history from")
    check(bool(want), "no job counted a node: the shaped-port cases should have")
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "history.sqlite")
        for _ in range(2):  # a job ingested twice is one job
            out = subprocess.run([HISTORY, "ingest", db] + sorted(glob.glob(os.path.join(tests, "vm-*"))),
                                 capture_output=True, text=True)
            check(out.returncode == 0, f"ingest exited {out.returncode}: {out.stderr[-300:]}")
        jobs = sqlite3.connect(db).execute("SELECT COUNT(*) FROM job").fetchone()[0]
        check(jobs == jobs_with_verdict, f"{jobs} job(s) in the database, {jobs_with_verdict} files with a verdict")
        keys = {r[0] for r in sqlite3.connect(db).execute("SELECT key FROM job")}
        check(keys == ids, f"the database's keys are not the jobs' job_id: {sorted(keys ^ ids)[:4]}")
        shown = subprocess.run([HISTORY, "show", db, "--last", "100000"], capture_output=True, text=True).stdout
        print("\n".join(shown.splitlines()[:12]))
        counted = {}
        for line in shown.splitlines():
            m = re.match(r"(\S+)\s+\(node\)\s+(\d+)\s+(\d+)\s", line)
            if m:
                counted[m.group(1)] = int(m.group(3))
        for node, n in want.items():
            check(counted.get(node) == n, f"{node}: the history counts it {counted.get(node)} time(s), the verdict "
                                          f"files {n}")
        worst = max(want, key=want.get)
        check(shown.split("\n")[2].startswith(worst), f"the most counted node, {worst}, is not listed first")
        page = os.path.join(tmp, "history.html")
        subprocess.run([HISTORY, "html", db, "-o", page, "--last", "100000"], check=True, capture_output=True)
        cells = Cells()
        cells.feed(open(page).read())
        rows = {r["text"][0]: r for r in cells.rows if len(r["text"]) > 1 and r["text"][1] == "(node)"}
        for node, n in want.items():
            check(node in rows and rows[node]["red"] == n,
                  f"the page's timeline for {node}: {rows.get(node, {}).get('red')} red cell(s), expected {n}")
        # what an operator sees: every red cell of the page drawn, none lost off its edge
        red = sum(r["red"] for r in cells.rows)
        drawn = rendered_red_cells(page)
        check(drawn == red, f"chromium draws {drawn} red timeline cell(s), the page holds {red}")
        print(f"history: the page drawn by chromium shows {drawn} red cell(s) of {red}")
    monitoring(files)
    print(f"history: {jobs_with_verdict} jobs, counted per node {want}, {len(failures)} problem(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
