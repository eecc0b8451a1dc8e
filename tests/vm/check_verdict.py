#!/usr/bin/python3
"""Check a job's verdict (the --verdict JSON beside the results file) against the file itself.

  check_verdict.py FILE.h5 VERDICT.json --healthy   status healthy, nothing counted, nothing to
                                                    drain; every run of FILE names no cause
                                                    but what the retest cleared (fine alone)
  check_verdict.py FILE.h5 VERDICT.json --healthy-network
                                                    as --healthy, or degraded by host causes
                                                    alone (category host, drained as such)
  check_verdict.py FILE.h5 VERDICT.json --node NODE status degraded; the one counted cause is the
                                                    node NODE (or ranks on it only), NODE the one
                                                    node to drain, with rdmamesh's reason; pairs
                                                    that failed with an end on NODE are NODE's
                                                    (status failed then)
  check_verdict.py FILE.h5 VERDICT.json --nic NODE DEV
                                                    status degraded; the one counted cause is the
                                                    NIC DEV of node NODE (not the node, not a
                                                    rank), NODE the one node to drain, the reason
                                                    naming DEV; every run of FILE names that NIC
  check_verdict.py FILE.h5 VERDICT.json --uplink SW status degraded; the one counted cause is the
                                                    uplink of switch SW, nothing to drain; every
                                                    run of FILE names that uplink (anything else
                                                    it names the verdict did not count); pairs
                                                    that failed through it are its (status
                                                    failed then)
  (each with --topology SW1,SW2,...: FILE's /topology holds those switches and every node of
   the job, each under a leaf; with --category CAT: every counted cause but a failed pair is of
   category CAT, with its evidence, and every drain reason opens with `rdmamesh: CAT: `)
  check_verdict.py compare BEFORE.h5 AFTER.h5 NODE  analysis/compare names node NODE first, slower
In both verdict forms the file's /verdict is the same document and its root says the same status.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

errors = []


def check(cond, what):
    if not cond:
        errors.append(what)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def verdict(path, doc_path, healthy, node, host_ok=False):
    doc = json.load(open(doc_path))
    check(doc.get("schema") == "rdmamesh-verdict/2", f"schema {doc.get('schema')!r}")
    counted = [c for c in doc["causes"] if c["counted"]]
    # host causes on a healthy fabric (host_ok): the verdict's word on a crowded host, never the network's
    host = [c for c in counted if c.get("category") == "host" and c.get("evidence")] if host_ok else []
    counted = [c for c in counted if c not in host]
    # a failed pair at the sick node's port is its (rxe can fail a QP there): the job failed, and
    # still names that node alone to drain
    failed = [c for c in counted if c["kind"] == "failed"] if node else []
    for c in failed:
        check(node in c["nodes"], f"a pair failed away from {node}: {c['text']}")
    counted = [c for c in counted if c not in failed]
    ended = "finished with failures" if failed else "ok"
    check(doc.get("complete") is True and doc.get("ended") == ended, f"complete {doc.get('complete')}, "
                                                                     f"ended {doc.get('ended')!r}")
    with h5py.File(path, "r") as f:
        inner = json.loads(text(f["verdict"][0]))
        check(inner["status"] == doc["status"] and inner["causes"] == doc["causes"] and inner["drain"] == doc["drain"],
              "the file's /verdict differs from the verdict file")
        check(text(f.attrs.get("verdict", "")) == doc["status"], f"root verdict {f.attrs.get('verdict')!r}")
        hosts = [text(h) for h in f["ranks/hostname"][()]]
        runs = [f["runs"][k] for k in sorted(f["runs"]) if "retest_of" not in f["runs"][k].attrs]
        bw = [g for g in runs if text(g.attrs["mode"]) == "bw"]
        check(doc["runs"]["bandwidth"] == len(bw), f"{doc['runs']['bandwidth']} bandwidth runs said, the file {len(bw)}")
        # each judged run states its false-alarm level (healthy runs drawn like it); the verdict
        # carries the noisiest run's
        stated = []
        for g in bw:
            o = g["outliers"].attrs if "outliers" in g else {}
            drawn, named = int(o.get("false_alarm_drawn", 0)), int(o.get("false_alarm_named", 0))
            judged = bool(np.isfinite(o.get("threshold_pct", np.nan)))
            check(not judged or (drawn > 0 and 0 <= named <= drawn), f"run {g.name}: judged, {named} of {drawn} drawn")
            if drawn > 0:
                stated.append((100.0 * named / drawn, drawn, named))
        fa = doc.get("false_alarms")
        if stated:
            top = max(p for p, _, _ in stated)
            noisiest = [(d, n) for p, d, n in stated if p == top]
            check(fa is not None and (fa["drawn"], fa["named"]) in noisiest and abs(fa["pct"] - top) < 1e-9,
                  f"verdict's false_alarms {fa}, the noisiest run's {top:.3g} % ({noisiest})")
        else:
            check(fa is None, f"false_alarms {fa} where no run was judged")
        if healthy:
            # a job none of whose runs could be judged says so (never "healthy"); each run then says why
            unjudged = doc["runs"]["judged"] == 0 and bool(bw)
            check(doc["status"] == ("unjudged" if unjudged else "degraded" if host else "healthy"),
                  f"status {doc['status']}")
            check(not counted, f"counted {counted}")
            check(len(doc["drain"]) <= len(host) and all(d["reason"].startswith("rdmamesh: host: ") for d in doc["drain"]),
                  f"drain {doc['drain']}")
            # suspects (one pair in one run, printed `# suspect:`) are no cause; nor is a rank or
            # node the retest found fine alone (the verdict lists it as cleared), nor one a run
            # named that the verdict lists as seen, not counted (a run names a healthy part as often
            # as its stated false-alarm level; the verdict counts what more evidence confirms)
            listed = {c["kind"] for c in doc["causes"] if c.get("cleared") or not c.get("counted") or c in host}
            for g in bw:
                kinds = [text(k) for k in g["outliers/kind"][()]] if "outliers" in g else []
                check(set(kinds) <= {"link"} | listed, f"run {g.name}: causes {kinds}")
                said = text(g["outliers"].attrs.get("verdict", "")) if "outliers" in g else ""
                check(said.startswith(("# healthy: ", "# not judged: ")) or
                      (listed and said.startswith(("# slow: ", "# judged: "))),
                      f"run {g.name}: {said!r}")
        else:
            check(doc["status"] == ("failed" if failed else "degraded"), f"status {doc['status']}")
            # one node or rank cause on NODE; beside it, only links with an end on NODE (a pair into
            # a shaped port stays slow alone, its acknowledgements queued behind the port: the
            # retest confirms it; the drain below still names NODE alone: CI, 2026-11-26)
            mains = [c for c in counted if c["kind"] != "link"]
            check(len(mains) == 1, f"{len(mains)} counted node/rank causes: {[c['text'] for c in counted]}")
            for c in counted:
                if c["kind"] == "link":
                    check(node in c["nodes"], f"counted link on {c['nodes']}, not at {node}: {c['text']}")
                    continue
                check(c["kind"] in ("node", "rank") and c["nodes"] == [node],
                      f"counted cause {c['kind']} on {c['nodes']}, expected node {node}: {c['text']}")
                # named by its sends, or (a fault on what it receives) by its receives
                pcts = [p for p in (c["send_pct"], c["recv_pct"]) if p is not None]
                check(bool(pcts) and min(p[0] for p in pcts) < 100, f"send_pct {c['send_pct']}, recv_pct {c['recv_pct']}")
            check([d["node"] for d in doc["drain"]] == [node], f"drain {doc['drain']}, expected {node}")
            check(all(d["reason"].startswith("rdmamesh: ") for d in doc["drain"]), f"reasons {doc['drain']}")
            # the runs' own tables say the same: a node cause on NODE's index
            idx = {hosts[r]: int(f["ranks/node"][r]) for r in range(len(hosts))}
            # (a link points at NODE by an end on it: a run whose noise hid the node may name only
            # links into it, the node then counted from the retest: CI, 2026-11-26)
            node_of = [int(x) for x in f["ranks/node"][()]]
            on = lambda r: 0 <= r < len(node_of) and node_of[r] == idx.get(node)  # noqa: E731
            # (an uplink over NODE that the retest narrowed to NODE points at it: a busy run can
            # read a node's port as its leaf's uplink, and alone only NODE's pairs stayed slow)
            switches = [text(x) for x in f["topology/switch"][()]] if "topology" in f else []
            narrowed = {switches.index(c["uplink"].split("-")[0]) for c in doc["causes"]
                        if c["kind"] == "uplink" and c.get("narrowed") and c["uplink"].split("-")[0] in switches
                        and re.search(rf"[(,]{re.escape(node)}[,)]", c["uplink"])}
            for g in bw:
                kinds = [text(k) for k in g["outliers/kind"][()]]
                nodes = [int(x) for x in g["outliers/node"][()]]
                ends = zip([int(x) for x in g["outliers/rank"][()]], [int(x) for x in g["outliers/peer"][()]])
                # (a pair rxe failed at the shaped port has an end on it: that port's, as the wrappers read it)
                points = [(n == idx.get(node) and k != "uplink") or (k == "uplink" and n in narrowed) or
                          (k in ("link", "failed") and (on(a) or on(b))) for k, n, (a, b) in zip(kinds, nodes, ends)]
                check(("node", idx.get(node)) in zip(kinds, nodes) or all(points),
                      f"run {g.name}: causes {list(zip(kinds, nodes))} do not point at {node}")


def compare(before, after, node):
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run([os.path.join(here, "../../analysis/compare"), before, after, "-o", out],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"compare exited {p.returncode}: {p.stderr}")
        causes = [x[2:] for x in p.stdout.splitlines() if re.match(r"- (node|rank|link) ", x)]
        # the node, or one of its ranks where the run named that rank alone (a mild fault under load)
        check(bool(causes) and (causes[0].startswith((f"node {node}: newly named in", f"node {node}: slower in")) or
                                re.match(rf"rank \d+ \({node}, [^)]*\): (newly named in|slower in)", causes[0])),
              f"compare's first cause is not node {node} (or a rank on it), slower: {causes[:3]}")
        # what only moved because of it is not a cause: at most the node, nothing across the others
        # (a noise pick of the clean run that the sick one no longer names moved nothing), save
        # what the sick run named by its noise and its verdict did not count (its '# false
        # alarms:' line says how often a run that noisy names a healthy part)
        with h5py.File(after, "r") as f:
            doc = json.loads(text(f["verdict"][0]))
        uncounted = [c["text"] for c in doc["causes"] if not c["counted"]]
        others = [c for c in causes if not c.startswith(f"node {node}:") and f"({node}," not in c
                  and ": no longer named (" not in c
                  and not any(u.startswith(c.split(": ")[0] + ": ") for u in uncounted)]
        check(not others, f"compare names causes away from {node} that its verdict counted: {others}")


def uplink(path, doc_path, name):
    doc = json.load(open(doc_path))
    counted = [c for c in doc["causes"] if c["counted"]]
    with h5py.File(path, "r") as f:
        t = f["topology"]
        switches = [text(x) for x in t["switch"][()]]
        leaf = switches.index(name.split("-")[0]) if name.split("-")[0] in switches else -1
        under = {text(n) for n, lf in zip(t["node"][()], t["node_leaf"][()]) if int(lf) == leaf}
        runs = [f["runs"][k] for k in sorted(f["runs"]) if "retest_of" not in f["runs"][k].attrs]
        hosts = [text(h).split(".")[0] for h in f["ranks/hostname"][()]]
        run_kinds = []
        for g in runs:
            rows = zip(*(g["outliers"][k][()] for k in ("kind", "rank", "peer"))) if "outliers" in g else []
            run_kinds.append((g.name, [(text(k), int(a), int(b)) for k, a, b in rows]))
    # a pair rxe failed through the shaped uplink is that uplink's (the same as at a shaped NIC): the
    # job failed, and still names the uplink; a pair failed anywhere else is not
    crosses = lambda nodes: len(nodes) == 2 and sum(n.split(".")[0] in under for n in nodes) == 1  # noqa: E731
    failed = [c for c in counted if c["kind"] == "failed"]
    for c in failed:
        check(crosses(c["nodes"]), f"a pair failed away from the uplink {name}: {c['text']}")
    counted = [c for c in counted if c not in failed]
    check(doc["status"] == ("failed" if failed else "degraded"), f"status {doc['status']}")
    check(len(counted) == 1 and counted[0]["kind"] == "uplink" and counted[0].get("uplink", "").startswith(name + " "),
          f"counted causes {[c['text'] for c in counted]}, expected the uplink {name} alone")
    check(doc["drain"] == [], f"drain {doc['drain']}: an uplink is no node's fault")
    # a run names it, or its noise hid it and its retest counted the uplink alone (basis retest)
    by_retest = len(counted) == 1 and counted[0].get("basis") == "retest"
    for run, rows in run_kinds:
        lost = [(a, b) for k, a, b in rows if k == "failed"]
        check(all(crosses([hosts[a], hosts[b]]) for a, b in lost), f"run {run}: failed pairs {lost} not through {name}")
        kinds = [k for k, a, b in rows if k != "failed"]
        check(kinds.count("uplink") == 1 or (by_retest and "uplink" not in kinds),
              f"run {run}: causes {kinds}, expected the uplink among them")


def nic(path, doc_path, node, device):
    doc = json.load(open(doc_path))
    counted = [c for c in doc["causes"] if c["counted"]]
    # a pair rxe failed at the shaped NIC's port is the NIC's: the job failed, and still names it.
    # Through it go its own pairs and those of the node's other NICs with the shaped NIC's rail on
    # other nodes (the node's route to that rail's subnet is its port on it)
    with h5py.File(path, "r") as f:
        devices = [text(d) for d in f["ranks/device"][()]]
        rail = {devices[r]: int(f["ranks/rail"][r]) for r in range(len(devices))}
    failed = [c for c in counted if c["kind"] == "failed"]
    for c in failed:
        through = device in c["devices"] or (
            node in c["nodes"] and len(c["nodes"]) == 2
            and any(d != device and rail.get(d) == rail.get(device) for d in c["devices"]))
        check(through, f"a pair failed away from {device}: {c['text']}")
    counted = [c for c in counted if c not in failed]
    check(doc["status"] == ("failed" if failed else "degraded"), f"status {doc['status']}")
    check(len(counted) == 1 and counted[0]["kind"] == "nic" and counted[0]["nodes"] == [node]
          and counted[0]["devices"] == [device], f"counted causes {[c['text'] for c in counted]}, expected "
                                                 f"the NIC {device} of {node} alone")
    check([d["node"] for d in doc["drain"]] == [node] and all(f"NIC {device} " in d["reason"] for d in doc["drain"]),
          f"drain {doc['drain']}, expected {node} for its NIC {device}")
    with h5py.File(path, "r") as f:
        runs = [f["runs"][k] for k in sorted(f["runs"]) if "retest_of" not in f["runs"][k].attrs]
        hosts = [text(h) for h in f["ranks/hostname"][()]]
        node_index = {hosts[r]: int(f["ranks/node"][r]) for r in range(len(hosts))}.get(node)
        # or its run's noise hid the NIC and the retest found it (basis retest): the run names nothing
        by_retest = any(c["counted"] and c["kind"] == "nic" and c["basis"] == "retest" for c in doc["causes"])
        # what the verdict cleared (fine alone in the retest) may have been named by a run
        node_of_host = {h: int(f["ranks/node"][r]) for r, h in enumerate(hosts)}
        cleared = {(c["kind"], node_of_host.get(c["nodes"][0], -2) if c["nodes"] else -2)
                   for c in doc["causes"] if c.get("cleared")}
        ranks_node = [int(x) for x in f["ranks/node"][()]]
        for g in runs:
            rows = list(zip(*(g["outliers"][k][()] for k in ("kind", "basis", "node", "rank", "peer")))) \
                if "outliers" in g else []
            # failed pairs are checked above; a suspect link (one pair, one run) is no cause
            rows = [(text(k), int(n) if int(n) >= 0 else ranks_node[int(r)] if int(r) >= 0 else -1, int(p))
                    for k, b, n, r, p in rows if text(k) != "failed" and not (text(k) == "link" and text(b) == "noise")]
            # the run may read the NIC's node slow (its ranks' mean holds the NIC's pairs): what the
            # verdict made of it (narrowed, cleared, undecided) is its word, checked above; only the
            # NIC is counted and drained
            want = [("nic", node_index, rail.get(device)), ("node", node_index, -1)]
            named = [r for r in rows if r in want]
            others = [r for r in rows if r not in want and (r[0], r[1]) not in cleared]
            # the node and the NIC (for its other side) may both be named; where the run's noise
            # hid the NIC (the retest counted it), neither need be
            check((0 if by_retest else 1) <= len(named) <= len(want) and not others,
                  f"run {g.name}: causes {rows}, expected the NIC of rail {rail.get(device)} of node {node_index} "
                  f"(others only where the retest cleared them)")


def topology(path, switches):
    with h5py.File(path, "r") as f:
        check("topology" in f, "no /topology")
        if "topology" not in f:
            return
        t = f["topology"]
        names = [text(x) for x in t["switch"][()]]
        check(names == switches, f"/topology/switch {names}, expected {switches}")
        hosts = sorted(set(text(h).split(".")[0] for h in f["ranks/hostname"][()]))
        nodes = sorted(text(x) for x in t["node"][()])
        check(nodes == hosts, f"/topology/node {nodes}, the job's hosts {hosts}")
        check(all(int(x) >= 0 for x in t["node_leaf"][()]), f"/topology/node_leaf {list(t['node_leaf'][()])}")


def category(doc_path, cat):
    doc = json.load(open(doc_path))
    counted = [c for c in doc["causes"] if c["counted"] and c["kind"] != "failed"]
    check(bool(counted), "no counted cause to have a category")
    for c in counted:
        check(c.get("category") == cat and c.get("evidence"), f"counted cause of category {c.get('category')!r}, "
                                                               f"expected {cat!r}: {c['text']} ({c.get('evidence')})")
    for d in doc["drain"]:
        check(d["reason"].startswith(f"rdmamesh: {cat}: "), f"drain reason {d['reason']!r} is not {cat!r}")


def main():
    a = sys.argv[1:]
    if "--category" in a:
        i = a.index("--category")
        category(a[1], a[i + 1])
        a = a[:i] + a[i + 2:]
    if "--topology" in a:
        i = a.index("--topology")
        topology(a[0], a[i + 1].split(","))
        a = a[:i] + a[i + 2:]
    if a and a[0] == "compare":
        compare(a[1], a[2], a[3])
    elif len(a) >= 3 and a[2] in ("--healthy", "--healthy-network"):
        verdict(a[0], a[1], True, None, a[2] == "--healthy-network")
    elif len(a) >= 4 and a[2] == "--node":
        verdict(a[0], a[1], False, a[3])
    elif len(a) >= 5 and a[2] == "--nic":
        nic(a[0], a[1], a[3], a[4])
    elif len(a) >= 4 and a[2] == "--uplink":
        uplink(a[0], a[1], a[3])
    else:
        sys.exit(__doc__)
    for e in errors:
        print(f"check_verdict: {' '.join(a[:2])}: {e}")
    sys.exit(1 if errors else 0)


main()
