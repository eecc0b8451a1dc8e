import warnings
"""The figures of a report or a comparison, each written as a PNG; every function returns the
numbers it drew, so that summary.md and the tests can quote the same values."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from .results import human_size  # noqa: E402

GB = 8 / 1e9  # bytes/s -> Gb/s

# stats/histogram.hpp: values below 256 exact, then 128 buckets per power of two
SUB_BITS, EXACT, HALF = 8, 256, 128


def bucket_highest(n_buckets):
    """The highest value each histogram bucket holds (ns), as stats/histogram.cpp defines it."""
    idx = np.arange(n_buckets + 1, dtype=np.int64)
    lowest = np.where(idx < EXACT, idx, 0).astype(np.float64)
    i = idx - EXACT
    e = i // HALF + SUB_BITS
    mant = HALF + i % HALF
    big = idx >= EXACT
    lowest[big] = mant[big].astype(np.float64) * np.exp2((e[big] - SUB_BITS + 1).astype(np.float64))
    return lowest[1:] - 1


def hist_percentiles(counts, ps, max_ns=np.inf):
    """Percentiles (ns) of a histogram: the highest value of the bucket that holds the
    ceil(p % of the samples)-th one, capped at the maximum, as stats/histogram.cpp reports."""
    total = counts.sum()
    if total == 0:
        return [float("nan")] * len(ps)
    cum = np.cumsum(counts)
    hi = bucket_highest(len(counts))
    return [min(float(hi[np.searchsorted(cum, max(1, np.ceil(p / 100 * total)))]), max_ns) for p in ps]


def node_boundaries(ax, nodes):
    """Lines between ranks of different nodes, on both axes. Returns the ranks a line precedes."""
    before = [i for i in range(1, len(nodes)) if nodes[i] != nodes[i - 1]]
    for i in before:
        ax.axhline(i - 0.5, color="black", lw=1.6)
        ax.axvline(i - 0.5, color="black", lw=1.6)
    return before


def png_metadata(nodes):
    """Text chunks a PNG carries: where its node lines are, so a test (or a person) can read
    what was drawn without parsing pixels."""
    before = [i for i in range(1, len(nodes)) if nodes[i] != nodes[i - 1]]
    return {"Software": "rdmamesh analysis", "rdmamesh:node_boundaries": ",".join(map(str, before))}


def outline(ax, n, cells, color="black"):
    for (a, b) in cells:
        ax.add_patch(Rectangle((b - 0.5, a - 0.5), 1, 1, fill=False, ec=color, lw=2.2))


def cause_cells(n, causes, nodes, under=None):
    """The cells of a heatmap each cause stands for: a link's pair, a rank's slow row and/or
    column, every row and column of a node's ranks, a failed pair, an uplink's pairs out of
    (up) and into (down) the ranks under its switch (`under(sw)`)."""
    cells = set()
    for c in causes:
        kind, rank, peer = c["kind"], c["rank"], c["peer"]
        send, recv = c.get("send", np.nan), c.get("recv", np.nan)
        if kind in ("link", "failed"):
            cells.add((rank, peer))
            continue
        if kind == "uplink":
            inside = set(int(r) for r in (under(c["node"]) if under else []))
            for r in inside:
                for p in set(range(n)) - inside:
                    if np.isfinite(send):
                        cells.add((r, p))
                    if np.isfinite(recv):
                        cells.add((p, r))
            continue
        members = [rank] if kind == "rank" else list(np.flatnonzero(nodes == c["node"]))
        for r in members:
            for p in range(n):
                if p == r:
                    continue
                if np.isfinite(send) or kind == "node":
                    cells.add((r, p))
                if np.isfinite(recv):
                    cells.add((p, r))
    return cells


def matrix_panel(ax, values, rel, nodes, title, cells, rel_label, annotate):
    """One heatmap: colour = `rel` (1 = the reference, white), text = `values`."""
    n = rel.shape[0]
    finite = rel[np.isfinite(rel)]
    hi = max(1.25, float(finite.max()) if finite.size else 1.25)
    cmap = plt.get_cmap("RdBu").copy()
    cmap.set_bad("#dddddd")
    im = ax.imshow(np.ma.masked_invalid(rel), cmap=cmap, norm=TwoSlopeNorm(vmin=0, vcenter=1, vmax=hi))
    node_boundaries(ax, nodes)
    outline(ax, n, cells)
    if annotate and n <= 16:
        for a in range(n):
            for b in range(n):
                if np.isfinite(values[a, b]):
                    dark = np.isfinite(rel[a, b]) and (rel[a, b] < 0.3 or rel[a, b] > 1 + 0.7 * (hi - 1))
                    ax.text(b, a, f"{values[a, b]:.3g}", ha="center", va="center", fontsize=7 if n > 8 else 8,
                            color="white" if dark else "black")
    step = max(1, n // 16)
    ax.set_xticks(range(0, n, step))
    ax.set_yticks(range(0, n, step))
    ax.set_xlabel("destination rank")
    ax.set_ylabel("source rank")
    ax.set_title(title, fontsize=10)
    plt.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label=rel_label)


def run_heatmaps(res, run, path):
    """Send (and, where the receiver measures, receive) bandwidth of one run, relative to the
    run's median pair; rank 0's outliers outlined. Returns the median pair in Gb/s."""
    measured = run.measured()
    panels = []
    for name, what in (("tx_bw", "send"), ("rx_bw", "receive")):
        m = run.data[name].astype(float).copy()
        m[~measured] = np.nan
        if np.isfinite(m).any():
            panels.append((what, m * GB))
    median = float(np.nanmedian(panels[0][1])) if panels and np.isfinite(panels[0][1]).any() else float("nan")
    causes = [dict(kind=c.kind, node=c.node, rank=c.rank, peer=c.peer, send=c.send_pct, recv=c.recv_pct)
              for c in run.causes]
    cells = cause_cells(res.n, causes, res.nodes, res.ranks_under)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.6 * len(panels), 4.8), squeeze=False)
    for ax, (what, m) in zip(axes[0], panels):
        matrix_panel(ax, m, m / median if median > 0 else m * np.nan, res.nodes,
                     f"{what} bandwidth [Gb/s], {run.label} (run {run.name})", cells, "÷ median pair", True)
    fig.suptitle(f"{res.n} ranks on {res.n_nodes} node(s); median pair {median:.3g} Gb/s; outlined: slow or failed",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata=png_metadata(res.nodes))
    plt.close(fig)
    return median


def sweep_figure(res, pattern, path):
    """Bandwidth and message rate against size: median pair, min–max band; the port's line
    rate as a reference where the file records it. Returns rows (size, median, min, max Gb/s,
    median Mmsg/s)."""
    g = res.sweeps[pattern]
    sizes = g["msg_size"].astype(float)
    rows = []
    bw = g["tx_bw"].astype(float) * GB
    rate = g["tx_rate"].astype(float) / 1e6
    runs = {r.index: r for r in res.runs}
    for k, s in enumerate(sizes):
        m = np.ones(bw[k].shape, dtype=bool)
        run = runs.get(int(g["runs"][k]))
        m &= run.measured() if run is not None else ~np.eye(bw[k].shape[0], dtype=bool)
        v, q = bw[k][m], rate[k][m]
        v, q = v[np.isfinite(v)], q[np.isfinite(q)]
        rows.append((int(s), float(np.median(v)) if v.size else np.nan, float(v.min()) if v.size else np.nan,
                     float(v.max()) if v.size else np.nan, float(np.median(q)) if q.size else np.nan))
    r = np.array(rows, dtype=float)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    a1.plot(r[:, 0], r[:, 1], marker="o", label="median pair")
    a1.fill_between(r[:, 0], r[:, 2], r[:, 3], alpha=0.25, label="min–max pair")
    line = res.ranks.get("line_rate_bps")
    if line is not None and (line.astype(float) > 0).any():
        rate_gbps = float(np.min(line[line > 0])) / 1e9
        if rate_gbps <= 5 * np.nanmax(r[:, 3]):
            a1.axhline(rate_gbps, color="gray", ls="--", label=f"port line rate {rate_gbps:g} Gb/s")
        else:  # an emulated port (rxe) claims a rate the data never nears: say it, keep the scale
            a1.plot([], [], color="gray", ls="--", label=f"port line rate {rate_gbps:g} Gb/s (off scale)")
    a2.plot(r[:, 0], r[:, 4], marker="o", color="C1", label="median pair")
    for ax, ylabel in ((a1, "send bandwidth per pair [Gb/s]"), (a2, "messages per pair [Mmsg/s]")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size [B]")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"{pattern}: bandwidth and message rate against size ({res.n} ranks)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return rows


def latency_figure(res, runs, path):
    """Latency percentiles over all pairs against size, and the CDF of each size. Returns rows
    (pattern, size, p50, p90, p99, p99.9, max µs) from the runs' merged histograms."""
    rows = []
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    by_pattern = {}
    for run in runs:
        counts = run.data["lat_hist_ns"].astype(np.int64)
        mx = float(run.attrs.get("lat_all_max_us", np.nan))
        p = [x / 1e3 for x in hist_percentiles(counts, (50, 90, 99, 99.9), mx * 1e3 if np.isfinite(mx) else np.inf)]
        rows.append((run.pattern, run.size, *p, mx))
        by_pattern.setdefault(run.pattern, []).append((run.size, p, mx))
        nz = np.flatnonzero(counts)
        if nz.size:
            lo_, hi_ = nz[0], nz[-1] + 1  # from the first sample: the axis starts where latency does
            x = bucket_highest(len(counts))[lo_:hi_] / 1e3
            cdf = np.cumsum(counts[lo_:hi_]) / counts.sum()
            a2.step(x, cdf, where="post", label=f"{run.label}")
    for pattern, pts in by_pattern.items():
        pts.sort()
        sizes = [s for s, _, _ in pts]
        for i, name in enumerate(("p50", "p90", "p99", "p99.9")):
            a1.plot(sizes, [p[i] for _, p, _ in pts], marker="o", label=f"{pattern} {name}")
        a1.plot(sizes, [m for _, _, m in pts], ls=":", marker="x", label=f"{pattern} max")
    a1.set_xscale("log", base=2)
    a1.set_yscale("log")
    a1.set_xlabel("message size [B]")
    a1.set_ylabel(f"latency [µs] ({runs[0].attrs.get('latency_is', 'half round trip')})")
    a2.set_xscale("log")
    a2.set_xlabel("latency [µs]")
    a2.set_ylabel("fraction of samples at or below")
    for ax in (a1, a2):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"latency over all pairs ({res.n} ranks)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return rows


def timeseries_figure(res, run, path, worst=4):
    """Send bandwidth over time of the run's worst pairs (lowest single interval against their
    own mean) next to the median pair. Returns [(src, dst, mean Gb/s, worst Gb/s)]."""
    t = run.data["t_s"].astype(float)
    bw = run.data["tx_bw_t"].astype(float) * GB  # [T,N,N]
    measured = run.measured()
    # unmeasured pairs, and slots after a stop request cut the round, are all-NaN: NaN is the answer there
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(bw, axis=0)
        low = np.nanmin(bw, axis=0)
        med = np.nanmedian(np.where(measured[None], bw, np.nan).reshape(len(t), -1), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        dip = np.where(measured & (mean > 0), low / mean, np.inf)
    order = np.dstack(np.unravel_index(np.argsort(dip, axis=None), dip.shape))[0]
    picked = [(int(a), int(b)) for a, b in order if np.isfinite(dip[a, b])][:worst]
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.plot(t, med, color="black", lw=2, label="median pair")
    rows = []
    for a, b in picked:
        ax.plot(t, bw[:, a, b], marker=".", label=f"{a} -> {b}")
        rows.append((a, b, float(mean[a, b]), float(low[a, b])))
    ax.set_xlabel("time since the round started [s]")
    ax.set_ylabel("send bandwidth [Gb/s]")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"{run.label} (run {run.name}): the pairs with the deepest dips", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return rows


def ratio_heatmap(res, ratio, causes, title, path):
    """compare: B ÷ A per pair, the changed ranks and links outlined."""
    cells = cause_cells(res.n, causes, res.nodes, res.ranks_under)
    fig, ax = plt.subplots(figsize=(6.2, 5))
    matrix_panel(ax, ratio, ratio, res.nodes, title, cells, "after ÷ before", True)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata=png_metadata(res.nodes))
    plt.close(fig)


def size_label(n):
    return human_size(n)
