#!/usr/bin/python3
"""Checks a results file of a job on nodes with several NICs (tools/softroce-vm --nodes K --rails R)
against what the launch asked for.

  check_rails.py FILE --rails R [--aligned] [--report NODE DEV] [--shaped RANK|A->B ...]

Every rank drove the NIC of its rail on its own node (/ranks/rail, /ranks/device rxe_nodeI_R
on host nodeI, /ranks/nics = R), chosen by the spread over equally near NICs; every NIC of every
node drove a rank. In every run, every same-rail pair across nodes moved data, verified end to
end where the run verified; cross-rail pairs did too (--rails all), or (--aligned) were not run
and read NaN, not 0, in every matrix. --report: analysis/report on FILE has a NICs table with a
row per NIC, DEV's (of NODE) counted with NODE to drain and no other NIC or node counted, and
its first heatmap draws a node's NICs apart (dotted rail boundaries, recorded in the PNG).
--shaped: the pairs through a port the test shaped (every pair of such a rank, and the pairs
given as A->B) may move nothing in a run: a shaped port can stall a pair for a whole window, and
that is the fault the verdict names, not a NIC that drove no rank."""
import argparse
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_cluster import png_text, text  # noqa: E402

errors = []


def check(ok, msg):
    if not ok:
        errors.append(msg)
        print(f"check_rails: {msg}", file=sys.stderr)


def report(path, node, device, rails):
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run([os.path.join(here, "../../analysis/report"), path, "-o", out], capture_output=True, text=True)
        check(p.returncode == 0, f"report exited {p.returncode}: {p.stderr}")
        if p.returncode:
            return
        md = open(os.path.join(out, "summary.md")).read()
        rows = [r for r in md.split("## NICs", 1)[-1].split("\n## ", 1)[0].splitlines() if r.startswith("| node") and not r.startswith("| node |")]
        check(len(rows) == 3 * rails, f"the NICs table has {len(rows)} rows, expected {3 * rails}")
        for r in rows:
            cells = [c.strip() for c in r.strip("|").split("|")]
            # the shaped NIC counted; another at most named by a run and cleared by the retest
            ok = cells[-1] == f"counted: drain {node}" if cells[1] == device else not cells[-1].startswith("counted")
            check(ok, f"NICs table row {cells}: verdict {cells[-1]!r}")
        heat = sorted(f for f in os.listdir(out) if f.startswith("heatmap-"))
        meta = png_text(os.path.join(out, heat[0])) if heat else {}
        check(meta.get("rdmamesh:rail_boundaries", "") != "", f"{heat[:1]}: no rail boundaries drawn: {meta}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--rails", type=int, required=True)
    ap.add_argument("--aligned", action="store_true")
    ap.add_argument("--report", nargs=2, metavar=("NODE", "DEV"))
    ap.add_argument("--shaped", nargs="+", default=[], metavar="RANK|A->B")
    a = ap.parse_args()
    if a.report:
        report(a.file, a.report[0], a.report[1], a.rails)
    with h5py.File(a.file, "r") as f:
        rk = f["ranks"]
        hosts = [text(h) for h in rk["hostname"][()]]
        devices = [text(d) for d in rk["device"][()]]
        rail = rk["rail"][()].astype(int)
        nics = rk["nics"][()].astype(int)
        how = [text(h) for h in rk["nic_chosen"][()]]
        n = len(hosts)
        for r in range(n):
            check(devices[r] == f"rxe_{hosts[r]}_{rail[r]}",
                  f"rank {r} on {hosts[r]} drove {devices[r]}, its rail is {rail[r]}")
            check(nics[r] == a.rails, f"rank {r}: /ranks/nics {nics[r]}, expected {a.rails}")
            check(how[r] == "spread", f"rank {r}: NIC chosen by {how[r]!r}, expected the spread")
        for h in sorted(set(hosts)):
            used = sorted(rail[r] for r in range(n) if hosts[r] == h)
            check(sorted(set(used)) == list(range(a.rails)), f"{h}: its ranks drove rails {used}")
        check(text(f["config"].attrs["rails"]) == ("aligned" if a.aligned else "all"),
              f"/config rails {text(f['config'].attrs['rails'])!r}")
        same = rail[:, None] == rail[None, :]
        off = ~np.eye(n, dtype=bool)
        runs = [f["runs"][k] for k in sorted(f["runs"]) if "retest_of" not in f["runs"][k].attrs]
        check(bool(runs), "no run")
        run = off & (same if a.aligned else True)
        moved = np.zeros((n, n), dtype=bool)
        for g in runs:
            tx, rx = g["tx_bw"][()], g["rx_bw"][()]
            check(np.isfinite(tx[run]).all() and np.isfinite(rx[run]).all(),
                  f"{g.name}: pairs that should have run were not measured (NaN):\n{tx}")
            # a receiver counts what completed in its window: a shaped NIC's pair of a few messages
            # (4 KiB at 15 Mb/s under stress-ng) may land all of them after it
            seen = (g["rx_msgs"][()] > 0) | (g["tx_msgs"][()] < 20)
            moved |= (tx > 0) & seen
            if a.aligned:
                cross = off & ~same
                check(np.isnan(tx[cross]).all() and np.isnan(rx[cross]).all(),
                      f"{g.name}: cross-rail pairs are not NaN (not run):\n{tx}")
            if int(g.attrs.get("verify", 0)) == 1:
                errs = g["verify_errors"][()]
                check((errs[run] == 0).all(), f"{g.name}: verify errors:\n{errs}")
        # one short run may see a pair of a few messages stall for its whole window (an emulated
        # port's retransmission timeout): every planned pair must move data in one run at least
        for s in a.shaped:
            if "->" in s:
                src, dst = (int(x) for x in s.split("->"))
                moved[src, dst] = True
            else:
                moved[int(s), :] = moved[:, int(s)] = True
        check(moved[run].all(), f"pairs that should have run moved nothing in any run:\n{moved.astype(int)}")
    sys.exit(1 if errors else 0)


main()
