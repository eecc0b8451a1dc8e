#!/usr/bin/python3
"""Multicore scaling plot from an `rdmamesh --scaling` results file: send bandwidth per node and
per rank against active ranks per node, one line per pattern, at one message size.

    analysis/plot_scaling.py mesh.h5 -o scaling.png [--size BYTES]

Prints the points it draws (mean over nodes / ranks, and the range) as a table.
"""
import argparse
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def points(group, size_index):
    """(steps, per-node mean/min/max, per-rank mean/min/max) in Gb/s, NaN-free ranks only."""
    steps = group["active_per_node"][()]
    node = group["node_bw"][()][size_index] * 8 / 1e9  # [K, nodes]
    rank = group["rank_bw"][()][size_index] * 8 / 1e9  # [K, N], NaN where inactive
    stats = lambda m: (np.nanmean(m, axis=1), np.nanmin(m, axis=1), np.nanmax(m, axis=1))  # noqa: E731
    return steps, stats(node), stats(rank)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="results file written with --scaling -o")
    ap.add_argument("-o", "--output", default="scaling.png", help="PNG to write (default scaling.png)")
    ap.add_argument("--size", type=int, help="message size in bytes (default: the largest)")
    a = ap.parse_args()

    with h5py.File(a.file, "r") as f:
        if "scaling" not in f:
            sys.exit(f"plot_scaling: {a.file} has no /scaling group; run rdmamesh with --scaling")
        fig, (ax_node, ax_rank) = plt.subplots(1, 2, figsize=(11, 4.2))
        print(f"{'pattern':>8} {'size':>9} {'ranks/node':>10} {'node mean':>10} {'node min':>9} {'node max':>9} "
              f"{'rank mean':>10} {'rank min':>9} {'rank max':>9}   [Gb/s]")
        for pattern in f["scaling"]:
            g = f["scaling"][pattern]
            sizes = list(g["msg_size"][()])
            size = a.size if a.size is not None else max(sizes)
            if size not in sizes:
                sys.exit(f"plot_scaling: no runs at {size} B (sizes: {sizes})")
            steps, node, rank = points(g, sizes.index(size))
            for i, k in enumerate(steps):
                print(f"{pattern:>8} {size:>9} {k:>10} {node[0][i]:>10.3f} {node[1][i]:>9.3f} {node[2][i]:>9.3f} "
                      f"{rank[0][i]:>10.3f} {rank[1][i]:>9.3f} {rank[2][i]:>9.3f}")
            for ax, (mean, lo, hi) in ((ax_node, node), (ax_rank, rank)):
                line, = ax.plot(steps, mean, marker="o", label=f"{pattern} ({size} B)")
                ax.fill_between(steps, lo, hi, alpha=0.2, color=line.get_color())
        for ax, what in ((ax_node, "per node (sum of its ranks)"), (ax_rank, "per rank")):
            ax.set_xlabel("active ranks per node")
            ax.set_ylabel("send bandwidth [Gb/s]")
            ax.set_title(f"Send bandwidth {what}")
            ax.set_xscale("log", base=2)
            ax.set_xticks(steps, [str(k) for k in steps])
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.legend()
        fig.suptitle(f"rdmamesh scaling: {f.attrs['command_line']}", fontsize=9)
        fig.tight_layout()
        fig.savefig(a.output, dpi=110)
    print(f"plot_scaling: wrote {a.output}")


if __name__ == "__main__":
    main()
