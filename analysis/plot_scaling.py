#!/usr/bin/env python3
"""Multicore scaling from an `rdmamesh --scaling` results file: how many active ranks per node fill
the node's port. Per pattern and size: each node's bandwidth through its port (one node: within
it) against active ranks per node, the ideal line, the parallel efficiency and the knee.

    analysis/plot_scaling.py mesh.h5 -o scaling.png

Prints the points it draws, their efficiency and the knee as a table, then one line per curve.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rdmamesh_analysis import results, scaling  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="results file written with --scaling -o")
    ap.add_argument("-o", "--output", default="scaling.png", help="PNG to write (default scaling.png)")
    a = ap.parse_args()
    try:
        res = results.load(a.file)
    except (OSError, ValueError) as e:
        sys.exit(f"plot_scaling: {e}")
    if not res.scaling:
        sys.exit(f"plot_scaling: {a.file} has no /scaling group; run rdmamesh with --scaling")
    try:
        cs, cap, note = scaling.figure(res.scaling, f"rdmamesh scaling: {res.attrs.get('command_line', '')}",
                                       a.output, res.ranks, res.n_nodes)
    except ValueError as e:
        sys.exit(f"plot_scaling: {e}")
    side = "through its port" if res.n_nodes > 1 else "within the node (one node)"
    print(f"# per node: Gb/s sent {side}; ideal: first step x ranks; knee: first step below "
          f"{scaling.KNEE * 100:.0f} % efficiency; {note}")
    print(f"{'pattern':>8} {'size':>8} {'ranks/node':>10} {'node mean':>10} {'min':>8} {'max':>8} {'loopback':>9} "
          f"{'Mmsg/s':>8} {'ideal':>8} {'eff %':>6} {'rank mean':>10}")
    for p, size, k, mean, lo, hi, loop, mm, ideal, eff, rank, knee in scaling.table(cs):
        compact = results.human_size(size).replace(" ", "")
        print(f"{p:>8} {compact:>8} {k:>10} {mean:>10.4f} {lo:>8.4f} {hi:>8.4f} {loop:>9.4f} "
              f"{mm:>8.3g} {ideal:>8.4f} {eff:>6.1f} {rank:>10.4f} {knee}")
    for line in scaling.verdict(cs, cap):
        print(f"# {line}")
    print(f"plot_scaling: wrote {a.output}")


if __name__ == "__main__":
    main()
