"""Multicore scaling (`rdmamesh --scaling`): send bandwidth per node and per rank against active
ranks per node, one line per pattern, at one message size."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

GB = 8 / 1e9


def points(group, size_index):
    """(steps, per-node mean/min/max, per-rank mean/min/max) in Gb/s, NaN-free ranks only."""
    steps = group["active_per_node"][()]
    node = group["node_bw"][()][size_index] * GB  # [K, nodes]
    rank = group["rank_bw"][()][size_index] * GB  # [K, N], NaN where inactive
    stats = lambda m: (np.nanmean(m, axis=1), np.nanmin(m, axis=1), np.nanmax(m, axis=1))  # noqa: E731
    return steps, stats(node), stats(rank)


def figure(scaling, title, path, size=None):
    """Draws every pattern of /scaling at `size` (default: each pattern's largest) into `path`.
    Returns rows (pattern, size, ranks per node, node mean/min/max, rank mean/min/max)."""
    rows = []
    fig, (ax_node, ax_rank) = plt.subplots(1, 2, figsize=(11, 4.2))
    steps = []
    for pattern, g in scaling.items():
        sizes = [int(s) for s in g["msg_size"][()]]
        at = size if size is not None else max(sizes)
        if at not in sizes:
            raise ValueError(f"no {pattern} runs at {at} B (sizes: {sizes})")
        steps, node, rank = points(g, sizes.index(at))
        for i, k in enumerate(steps):
            rows.append((pattern, at, int(k), node[0][i], node[1][i], node[2][i], rank[0][i], rank[1][i], rank[2][i]))
        for ax, (mean, lo, hi) in ((ax_node, node), (ax_rank, rank)):
            line, = ax.plot(steps, mean, marker="o", label=f"{pattern} ({at} B)")
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
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return rows
