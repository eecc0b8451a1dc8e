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


# a heatmap shows ranks up to this many; beyond it one cell per node pair, and per leaf pair
# where the nodes are too many as well (1 024 nodes: 10^6 rank cells no one can read)
MAX_DRAWN = 64


def switch_order(res):
    """The ranks in the order the fabric holds them: leaf by leaf (the tree's depth-first order),
    then node, then rail (its NIC), then rank; and each rank's leaf index (-1: under none).
    Without /topology: rank order, no leaves (with several NICs per node: node by node in the
    order of their first rank, each node's ranks rail by rail)."""
    t = res.topology
    rails = res.rails
    if not t and not res.multi_nic():
        return np.arange(res.n), np.full(res.n, -1)
    if not t:  # nodes in rank order, each node's ranks rail by rail (a node's NICs side by side)
        first = {}
        for r in range(res.n):
            first.setdefault(int(res.nodes[r]), r)
        key = [(first[int(res.nodes[r])], int(rails[r]), r) for r in range(res.n)]
        return np.array(sorted(range(res.n), key=lambda r: key[r])), np.full(res.n, -1)
    _, leaves = res.tree()
    where = {leaf: i for i, leaf in enumerate(leaves)}
    leaf_of_host = {h: int(l) for h, l in zip(t["node"], t["node_leaf"])}
    leaf = np.array([leaf_of_host.get(h.split(".")[0], -1) for h in res.ranks["hostname"]])
    key = [(where.get(int(leaf[r]), len(leaves)), int(res.nodes[r]), int(rails[r]), r) for r in range(res.n)]
    return np.array(sorted(range(res.n), key=lambda r: key[r])), leaf


class View:
    """What a heatmap's cells are: ranks in switch order, or (beyond MAX_DRAWN) node pairs, or
    leaf pairs; each cell the mean of the rank pairs it holds."""

    def __init__(self, res, most=MAX_DRAWN):
        order, leaf = switch_order(res)
        nodes = np.asarray(res.nodes)
        self.kind = "rank" if res.n <= most else "node" if res.n_nodes <= most or leaf.max() < 0 else "leaf"
        key = {"rank": order, "node": nodes[order], "leaf": leaf[order]}[self.kind]
        index = {k: i for i, k in enumerate(dict.fromkeys(key.tolist()))}  # the groups as they first appear
        self.group = np.empty(res.n, dtype=int)  # rank -> its cell's row/column
        self.group[order] = [index[k] for k in key.tolist()]
        self.size = len(index)
        sw = res.topology["switch"] if res.topology else []
        name = {"rank": lambda k: str(k), "node": lambda k: str(res.node_name(k)),
                "leaf": lambda k: str(sw[k]) if k >= 0 else "no leaf"}[self.kind]
        self.names = [name(k) for k in index]
        # the lines drawn between cells: nodes (black) and leaves (green), where they change
        _, at = np.unique(self.group[order], return_index=True)  # each cell's first rank, drawn order
        first = order[at]
        self.node_lines = [i for i in range(1, self.size) if nodes[first[i]] != nodes[first[i - 1]]] \
            if self.kind == "rank" else []
        # between a node's NICs (several per node): dotted
        rails = res.rails
        self.rail_lines = [i for i in range(1, self.size) if nodes[first[i]] == nodes[first[i - 1]]
                           and rails[first[i]] != rails[first[i - 1]]] if self.kind == "rank" else []
        # one rank per node: a line round every cell says nothing, and would hide the outlines
        self.draw_node_lines = len(set(nodes.tolist())) < res.n
        self.leaf_lines = [i for i in range(1, self.size) if leaf[first[i]] != leaf[first[i - 1]]] \
            if self.kind != "leaf" and leaf.max() >= 0 else []
        self.leaf_marks = [(i, str(sw[leaf[first[i]]]) if leaf[first[i]] >= 0 else "no leaf")
                           for i in [0] + self.leaf_lines] if self.kind != "leaf" and leaf.max() >= 0 else []
        self.order = order
        self.onehot = np.zeros((res.n, self.size))
        self.onehot[np.arange(res.n), self.group] = 1

    def apply(self, m):
        """An [N,N] rank matrix as the view's [G,G]: the mean of each cell's measured pairs."""
        ok = np.isfinite(m)
        total = self.onehot.T @ np.where(ok, m, 0) @ self.onehot
        count = self.onehot.T @ ok.astype(float) @ self.onehot
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, total / np.maximum(count, 1), np.nan)

    def cells(self, cells):
        return {(int(self.group[a]), int(self.group[b])) for a, b in cells}

    def metadata(self, cells):
        """Text chunks a PNG carries: what was drawn, so a test (or a person) can read it without
        parsing pixels."""
        out = {"Software": "rdmamesh analysis", "rdmamesh:view": f"{self.kind} {self.size}",
               "rdmamesh:node_boundaries": ",".join(map(str, self.node_lines)),
               "rdmamesh:leaf_boundaries": ",".join(map(str, self.leaf_lines)),
               "rdmamesh:rail_boundaries": ",".join(map(str, self.rail_lines))}
        if self.kind == "rank":
            out["rdmamesh:order"] = ",".join(map(str, self.order))
        if len(cells) <= 4096:
            out["rdmamesh:outlined"] = ";".join(f"{a},{b}" for a, b in sorted(cells))
        return out


def outline(ax, n, cells, color="black"):
    for (a, b) in cells:
        ax.add_patch(Rectangle((b - 0.5, a - 0.5), 1, 1, fill=False, ec=color, lw=2.2 if n <= 16 else 1.2))


def cause_cells(n, causes, nodes, under=None, rails=None):
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
        if kind == "nic":  # its ranks' pairs, to its node's other NICs too (its peer is its rail)
            members = list(np.flatnonzero((nodes == c["node"]) & (rails == peer))) if rails is not None else []
        else:
            members = [rank] if kind == "rank" else list(np.flatnonzero(nodes == c["node"]))
        for r in members:
            for p in range(n):
                if p == r:
                    continue
                if kind == "nic" and p in members:
                    continue
                if np.isfinite(send) or kind == "node":
                    cells.add((r, p))
                if np.isfinite(recv):
                    cells.add((p, r))
    return cells


def matrix_panel(ax, values, rel, view, title, cells, rel_label, annotate):
    """One heatmap of `view`'s cells: colour = `rel` (1 = the reference, white), text = `values`."""
    n = rel.shape[0]
    finite = rel[np.isfinite(rel)]
    hi = max(1.25, float(finite.max()) if finite.size else 1.25)
    cmap = plt.get_cmap("RdBu").copy()
    cmap.set_bad("#dddddd")
    im = ax.imshow(np.ma.masked_invalid(rel), cmap=cmap, norm=TwoSlopeNorm(vmin=0, vcenter=1, vmax=hi),
                   interpolation="nearest")
    thin = 1.6 if n <= 64 else 0.6
    for i in view.node_lines if view.draw_node_lines else []:
        ax.axhline(i - 0.5, color="black", lw=thin)
        ax.axvline(i - 0.5, color="black", lw=thin)
    for i in view.rail_lines:
        ax.axhline(i - 0.5, color="black", lw=thin * 0.6, ls=":")
        ax.axvline(i - 0.5, color="black", lw=thin * 0.6, ls=":")
    for i in view.leaf_lines:
        ax.axhline(i - 0.5, color="#1b7837", lw=thin + 1.2)
        ax.axvline(i - 0.5, color="#1b7837", lw=thin + 1.2)
    outline(ax, n, cells)
    if annotate and n <= (16 if view.kind == "rank" else 12):
        for a in range(n):
            for b in range(n):
                if np.isfinite(values[a, b]):
                    dark = np.isfinite(rel[a, b]) and (rel[a, b] < 0.3 or rel[a, b] > 1 + 0.7 * (hi - 1))
                    ax.text(b, a, f"{values[a, b]:.3g}", ha="center", va="center", fontsize=7 if n > 8 else 8,
                            color="white" if dark else "black")
    step = max(1, -(-n // 16))
    ticks = list(range(0, n, step))
    small = 7 if view.kind != "rank" else None
    ax.set_xticks(ticks, [view.names[i] for i in ticks], rotation=90 if view.kind != "rank" else 0, fontsize=small)
    ax.set_yticks(ticks, [view.names[i] for i in ticks], fontsize=small)
    ax.set_xlabel(f"destination {view.kind}")
    ax.set_ylabel(f"source {view.kind}")
    if view.leaf_marks:  # each leaf's name over its first column
        top = ax.secondary_xaxis("top")
        top.set_xticks([i - 0.5 for i, _ in view.leaf_marks], [name for _, name in view.leaf_marks],
                       fontsize=6, color="#1b7837", rotation=90 if len(view.leaf_marks) > 8 else 0, ha="left")
    ax.set_title(title, fontsize=10)
    plt.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label=rel_label)


def view_caption(view):
    return {"rank": "", "node": "; one cell per node pair (the mean of its rank pairs)",
            "leaf": "; one cell per leaf pair (the mean of its rank pairs)"}[view.kind]


def run_heatmaps(res, run, path):
    """Send (and, where the receiver measures, receive) bandwidth of one run, relative to the
    run's median pair; rank 0's outliers outlined; ranks in switch order under --topology, and
    per node or per leaf where they are too many to draw. Returns the median pair in Gb/s."""
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
    view = View(res)
    cells = view.cells(cause_cells(res.n, causes, res.nodes, res.ranks_under, res.rails))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.6 * len(panels), 4.8 if view.kind == "rank" else 5.4),
                             squeeze=False)
    for ax, (what, m) in zip(axes[0], panels):
        v = view.apply(m)
        matrix_panel(ax, v, v / median if median > 0 else v * np.nan, view,
                     f"{what} bandwidth [Gb/s], {run.label} (run {run.name})", cells, "÷ median pair", True)
    fig.suptitle(f"{res.n} ranks on {res.n_nodes} node(s); median pair {median:.3g} Gb/s; outlined: slow or failed"
                 f"{view_caption(view)}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata=view.metadata(cells))
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
    view = View(res)
    cells = view.cells(cause_cells(res.n, causes, res.nodes, res.ranks_under, res.rails))
    shown = view.apply(ratio)
    fig, ax = plt.subplots(figsize=(6.2, 5))
    matrix_panel(ax, shown, shown, view, title + view_caption(view), cells, "after ÷ before", True)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata=view.metadata(cells))
    plt.close(fig)


def tree_figure(res, marked, path):
    """The fabric as /topology holds it: spines over leaves over nodes (one box per leaf, its
    node count, where they are too many to name), the uplinks and nodes in `marked` red.
    `marked`: {"uplinks": {switch index}, "nodes": {hostname}}. Returns what it marked."""
    t = res.topology
    parent = [int(p) for p in t["parent"]]
    names = [str(x) for x in t["switch"]]
    children, leaves = res.tree()
    depth = [0] * len(parent)
    for i in range(len(parent)):
        p = parent[i]
        while p >= 0:
            depth[i] += 1
            p = parent[p]
    hosts = {}  # leaf -> its nodes, as the file lists them
    for h, l in zip(t["node"], t["node_leaf"]):
        hosts.setdefault(int(l), []).append(str(h))
    in_job = {str(h).split(".")[0] for h in res.ranks["hostname"]}
    each = sum(len(hosts.get(l, [])) for l in leaves) <= 48  # name every node, or count them
    x = {}
    if each:  # every node its own column; a leaf over its nodes' middle
        col = 0
        for l in leaves:
            k = max(1, len(hosts.get(l, [])))
            x[l] = col + (k - 1) / 2
            col += k + 0.6
        width = col
    else:
        for i, l in enumerate(leaves):
            x[l] = float(i)
        width = len(leaves)
    for sw in sorted(range(len(parent)), key=lambda s: -depth[s]):  # parents over their children's middle
        if sw not in x:
            under = [x[c] for c in children.get(sw, []) if c in x]
            x[sw] = float(np.mean(under)) if under else 0.0
    top = max(depth) if depth else 0
    y = {sw: top - depth[sw] + 1.0 for sw in range(len(parent))}
    leaf_y = min((y[l] for l in leaves), default=1.0)
    fig, ax = plt.subplots(figsize=(min(20, max(6.4, 0.32 * width + 2)), 1.2 + 1.0 * (top + 2)))
    up_marked, node_marked = set(marked.get("uplinks", ())), set(marked.get("nodes", ()))
    drawn = []
    for sw, p in enumerate(parent):
        if p < 0:
            continue
        red = sw in up_marked
        ax.plot([x[sw], x[p]], [y[sw], y[p]], color="#d62728" if red else "#888888", lw=3.2 if red else 1, zorder=1)
        if red:
            ax.text((x[sw] + x[p]) / 2, (y[sw] + y[p]) / 2, f"  slow: {names[sw]}-{names[p]}", color="#d62728",
                    fontsize=8, va="center", fontweight="bold")
            drawn.append(f"uplink:{names[sw]}-{names[p]}")
    for sw in range(len(parent)):
        ax.text(x[sw], y[sw], names[sw], ha="center", va="center", fontsize=7 if len(leaves) > 16 else 8, zorder=3,
                rotation=90 if not each and len(leaves) > 16 and int(t["leaf"][sw]) else 0,
                bbox=dict(boxstyle="round,pad=0.3", fc="#e5f5e0" if int(t["leaf"][sw]) else "#c7e9c0",
                          ec="#d62728" if sw in up_marked else "#1b7837"))
    for l in leaves:
        mine = hosts.get(l, [])
        sick = [h for h in mine if h in node_marked]
        drawn += [f"node:{h}" for h in sick]
        if each:
            for j, h in enumerate(mine):
                hx = x[l] - (len(mine) - 1) / 2 + j
                red = h in node_marked
                ax.plot([x[l], hx], [leaf_y, leaf_y - 0.75], color="#d62728" if red else "#bbbbbb", lw=2.4 if red else 0.8,
                        zorder=1)
                ax.text(hx, leaf_y - 0.8, h, ha="center", va="top", rotation=90, fontsize=7,
                        color="#d62728" if red else ("black" if h in in_job else "#999999"),
                        fontweight="bold" if red else "normal")
        else:
            ax.plot([x[l], x[l]], [leaf_y, leaf_y - 0.6], color="#d62728" if sick else "#bbbbbb", lw=0.8, zorder=1)
            label = f"{len(mine)} nodes" + ("".join(f"\n{h}" for h in sick[:4]) + ("\n…" if len(sick) > 4 else ""))
            ax.text(x[l], leaf_y - 0.65, label, ha="center", va="top", fontsize=6, rotation=90 if not sick else 0,
                    color="#d62728" if sick else "black")
    ax.set_xlim(-1, width + 0.5)
    ax.set_ylim(leaf_y - (1.8 if each or node_marked else 1.5), top + 1.5)
    ax.axis("off")
    n_nodes = sum(len(v) for v in hosts.values())
    ax.set_title(f"fabric ({t.get('source', '?')}): {len(parent)} switch(es), {len(leaves)} leaves, {n_nodes} node(s); "
                 f"red: {', '.join(d.split(':', 1)[1] for d in drawn) if drawn else 'nothing counted'}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": "rdmamesh analysis", "rdmamesh:marked": ",".join(drawn)})
    plt.close(fig)
    return drawn


def size_label(n):
    return human_size(n)
