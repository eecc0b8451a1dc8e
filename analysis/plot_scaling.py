#!/usr/bin/python3
"""Multicore scaling plot from an `rdmamesh --scaling` results file: send bandwidth per node and
per rank against active ranks per node, one line per pattern, at one message size.

    analysis/plot_scaling.py mesh.h5 -o scaling.png [--size BYTES]

Prints the points it draws (mean over nodes / ranks, and the range) as a table.
"""
import argparse
import os
import sys

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rdmamesh_analysis import scaling  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="results file written with --scaling -o")
    ap.add_argument("-o", "--output", default="scaling.png", help="PNG to write (default scaling.png)")
    ap.add_argument("--size", type=int, help="message size in bytes (default: the largest)")
    a = ap.parse_args()

    with h5py.File(a.file, "r") as f:
        if "scaling" not in f:
            sys.exit(f"plot_scaling: {a.file} has no /scaling group; run rdmamesh with --scaling")
        groups = {p: {k: g[k][()] for k in g} for p, g in f["scaling"].items()}
        title = f"rdmamesh scaling: {f.attrs['command_line']}"
    try:
        rows = scaling.figure(groups, title, a.output, a.size)
    except ValueError as e:
        sys.exit(f"plot_scaling: {e}")
    print(f"{'pattern':>8} {'size':>9} {'ranks/node':>10} {'node mean':>10} {'node min':>9} {'node max':>9} "
          f"{'rank mean':>10} {'rank min':>9} {'rank max':>9}   [Gb/s]")
    for p, size, k, *v in rows:
        print(f"{p:>8} {size:>9} {k:>10} {v[0]:>10.3f} {v[1]:>9.3f} {v[2]:>9.3f} {v[3]:>10.3f} {v[4]:>9.3f} {v[5]:>9.3f}")
    print(f"plot_scaling: wrote {a.output}")


if __name__ == "__main__":
    main()
