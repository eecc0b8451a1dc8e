#!/usr/bin/python3
"""Two results files of the same job, the first run with --connect all, the second with
--connect round: identical per-pair message counts, verify results and flags in every run, and
the second records its per-round connect time.

  check_same.py ALL.h5 ROUND.h5"""
import sys

import h5py
import numpy as np


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
    bad = []
    if sorted(a["runs"]) != sorted(b["runs"]):
        bad.append(f"runs {sorted(a['runs'])} vs {sorted(b['runs'])}")
    for k in a["runs"]:
        if k not in b["runs"]:
            continue
        ga, gb = a["runs"][k], b["runs"][k]
        if (ga.attrs["connect"], gb.attrs["connect"]) != ("all", "round"):
            bad.append(f"run {k}: connect {ga.attrs['connect']} and {gb.attrs['connect']}")
        if not gb.attrs["round_connect_s"] >= 0:
            bad.append(f"run {k}: round_connect_s {gb.attrs['round_connect_s']}")
        for d in ("tx_msgs", "rx_msgs", "verify_errors", "flags"):
            if d in ga and not np.array_equal(ga[d][()], gb[d][()]):
                bad.append(f"run {k}: {d} {ga[d][()].tolist()} vs {gb[d][()].tolist()}")
    for x in bad:
        print("check_same:", x, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
