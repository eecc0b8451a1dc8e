"""Multicore scaling (`rdmamesh --scaling`): how many active ranks per node fill the node's port.

Per pattern and message size, the curve is each node's send bandwidth against active ranks per
node. On several nodes it is what leaves the node (pairs to other nodes: what the port carries);
the pairs inside a node loop back in the device and are drawn apart, never added to it. On one
node nothing crosses a port, so the curve is the loopback and it starts at 2 (one active rank has
no peer). The ideal line is the first step times the ranks; efficiency is measured / ideal; the
knee is the first step whose efficiency falls below KNEE; the ceiling is the node's port rate
(active speed x width, /ranks/line_rate_bps) where it means something."""
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .results import human_size, text  # noqa: E402

KNEE = 0.80  # efficiency below which a step is past the knee
RATE_BELOW = 64 * 1024  # sizes where the message rate, not the bytes, is the limit: Mmsg/s axis
SOFTWARE = ("rxe", "siw")  # software RDMA devices: their nominal rate is the netdev's, not a ceiling


@dataclass
class Curve:
    pattern: str
    size: int
    steps: list
    side: str  # "port" (several nodes) or "loopback" (one node)
    mean: np.ndarray  # per step, Gb/s, mean over nodes of the scaled figure
    lo: np.ndarray
    hi: np.ndarray
    loopback: np.ndarray  # per step, Gb/s, mean over nodes (NaN where no pair inside a node ran)
    mmsgs: np.ndarray  # per step, Mmsg/s per node on the scaled side
    rank_mean: np.ndarray  # per step, Gb/s per active rank
    ideal: np.ndarray = field(default=None)
    eff: np.ndarray = field(default=None)
    knee: int = None  # index into steps, or None when every step is at or above KNEE


def _gbps(a):
    return np.asarray(a, dtype=float) * 8 / 1e9


def _nanstat(m, fn):
    """fn over nodes (last axis); NaN for a step with no finite value, without a warning."""
    out = np.full(m.shape[0], np.nan)
    for i, row in enumerate(m):
        row = row[np.isfinite(row)]
        if row.size:
            out[i] = fn(row)
    return out


def curves(scaling, n_nodes):
    """One Curve per (pattern, size) of /scaling, with ideal line, efficiency and knee."""
    out = []
    for pattern, g in scaling.items():
        total = g["node_bw"]
        port = g.get("node_port_bw", total)
        loop = g.get("node_loopback_bw", np.full_like(total, np.nan))
        rate = g.get("node_port_msg_rate")
        side = "port" if n_nodes > 1 else "loopback"
        for si, size in enumerate(int(s) for s in g["msg_size"]):
            scaled = _gbps((port if side == "port" else total)[si])
            if rate is not None and side == "port":
                mm = _nanstat(np.asarray(rate[si], dtype=float) / 1e6, np.mean)
            else:
                mm = _nanstat(scaled, np.mean) * 1e9 / 8 / size / 1e6
            c = Curve(pattern=pattern, size=size, steps=[int(k) for k in g["active_per_node"]], side=side,
                      mean=_nanstat(scaled, np.mean), lo=_nanstat(scaled, np.min), hi=_nanstat(scaled, np.max),
                      loopback=_nanstat(_gbps(loop[si]), np.mean), mmsgs=mm,
                      rank_mean=_nanstat(_gbps(g["rank_bw"][si]), np.mean))
            steps = np.asarray(c.steps, dtype=float)
            c.ideal = c.mean[0] * steps / steps[0]
            with np.errstate(invalid="ignore", divide="ignore"):
                c.eff = c.mean / c.ideal
            below = [i for i in range(1, len(steps)) if np.isfinite(c.eff[i]) and c.eff[i] < KNEE]
            c.knee = below[0] if below else None
            out.append(c)
    return out


def ceiling(ranks):
    """(node's port rate in Gb/s or None, a phrase saying what it is). The slowest node's sum over
    its distinct (device, port); None where a device reports no rate or is a software device."""
    if not ranks or "line_rate_bps" not in ranks:
        return None, "no port rate in the file"
    per_node = {}
    for i, node in enumerate(ranks["node"]):
        dev = text(ranks["device"][i])
        per_node.setdefault(int(node), {})[(dev, int(ranks["port"][i]))] = float(ranks["line_rate_bps"][i])
    devices = {d for ports in per_node.values() for d, _ in ports}
    rate = min(sum(p.values()) for p in per_node.values()) / 1e9
    if not rate > 0:
        return None, "the device reports no port rate"
    if any(d.startswith(SOFTWARE) for d in devices):
        return None, (f"port rate {rate:g} Gb/s is the software device's nominal figure "
                      f"({', '.join(sorted(devices))}), not a ceiling: not drawn")
    return rate, f"port rate {rate:g} Gb/s per node (active speed x width)"


def verdict(cs, cap):
    """One line per (pattern, size) and the line the report leads with (the largest size)."""
    lines = []
    for c in cs:
        last = len(c.steps) - 1
        what = "through its port" if c.side == "port" else "within the node (one node: loopback)"
        if c.knee is None:
            head = (f"scales to {c.steps[last]} ranks per node: efficiency {c.eff[last] * 100:.0f} % "
                    f"(no step below {KNEE * 100:.0f} %)")
        else:
            k = c.knee
            head = (f"knee at {c.steps[k]} ranks per node: efficiency {c.eff[k] * 100:.0f} % "
                    f"({c.mean[k]:.3g} of an ideal {c.ideal[k]:.3g} Gb/s)")
        at = c.knee if c.knee is not None else last
        share = f"; {c.mean[at] / cap * 100:.0f} % of the port's rate" if cap and c.side == "port" else ""
        lines.append(f"{c.pattern} {human_size(c.size)}: {head}{share}; per node {c.mean[last]:.3g} Gb/s {what} "
                     f"at {c.steps[last]}")
    return lines


def _panel_bw(ax, c, color, cap):
    x = c.steps
    ax.plot(x, c.mean, marker="o", color=color, label=f"{c.pattern}: measured")
    ax.fill_between(x, c.lo, c.hi, color=color, alpha=0.15, linewidth=0)
    ax.plot(x, c.ideal, linestyle="--", color=color, alpha=0.7, label=f"{c.pattern}: ideal (first step x ranks)")
    if c.side == "port" and np.isfinite(c.loopback).any():
        ax.plot(x, c.loopback, linestyle=":", marker=".", color=color, alpha=0.6,
                label=f"{c.pattern}: within the node (loopback, not in the curve)")
    if c.knee is not None:
        k = c.knee
        ax.plot([x[k]], [c.mean[k]], marker="X", markersize=11, color="crimson", zorder=5)
        ax.annotate(f"knee: {x[k]}/node, {c.eff[k] * 100:.0f} % eff.", (x[k], c.mean[k]), xytext=(-10, -16),
                    textcoords="offset points", fontsize=8, color="crimson", ha="right",
                    bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 1})
    if cap:
        ax.axhline(cap, color="black", linestyle="-.", linewidth=1)
        ax.text(x[0], cap, f" port {cap:g} Gb/s", va="bottom", fontsize=8)
    top = np.nanmax(np.concatenate([c.hi, c.ideal, c.loopback if c.side == "port" else [], [cap or 0]]))
    ax.set_ylim(0, top * 1.15 if np.isfinite(top) and top > 0 else 1)
    if c.size < RATE_BELOW:  # message rate is bandwidth / size at one size: an exact second axis
        per = c.size * 8 / 1e9 * 1e6  # Gb/s per Mmsg/s
        sec = ax.secondary_yaxis("right", functions=(lambda g, p=per: g / p, lambda m, p=per: m * p))
        sec.set_ylabel("Mmsg/s per node", fontsize=8)


def figure(scaling, title, path, ranks=None, n_nodes=None):
    """Draws every pattern and size of /scaling into `path`: per size, a row with the node's
    bandwidth (ideal, ceiling, knee) and the parallel efficiency. Returns (curves, ceiling note)."""
    if n_nodes is None:
        n_nodes = len(set(int(n) for n in ranks["node"])) if ranks else 2
    cs = curves(scaling, n_nodes)
    if not cs:
        raise ValueError("no scaling runs in the file")
    cap, cap_note = ceiling(ranks)
    if n_nodes == 1:
        cap, cap_note = None, "one node: nothing crosses a port, so the port's rate bounds nothing here"
    sizes = sorted({c.size for c in cs})
    patterns = list(dict.fromkeys(c.pattern for c in cs))
    colors = {p: f"C{i}" for i, p in enumerate(patterns)}
    fig, axes = plt.subplots(len(sizes), 2, figsize=(11, 3.1 * len(sizes) + 1.2), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 2]})
    side = "sent through its port (pairs to other nodes)" if n_nodes > 1 else \
        "sent within the node (one node: loopback; starts at 2, one rank has no peer)"
    for row, size in enumerate(sizes):
        ax_bw, ax_eff = axes[row]
        for c in (c for c in cs if c.size == size):
            _panel_bw(ax_bw, c, colors[c.pattern], cap if c.side == "port" else None)
            ax_eff.plot(c.steps, c.eff * 100, marker="o", color=colors[c.pattern])
            if c.knee is not None:
                ax_eff.plot([c.steps[c.knee]], [c.eff[c.knee] * 100], marker="X", markersize=11, color="crimson")
        ax_bw.set_title(f"{human_size(size)}: per node, {side}", fontsize=9)
        ax_bw.set_ylabel("Gb/s per node")
        ax_eff.axhline(KNEE * 100, color="crimson", linestyle=":", linewidth=1)
        ax_eff.text(0.02, KNEE * 100, f"knee threshold {KNEE * 100:.0f} %", transform=ax_eff.get_yaxis_transform(),
                    va="bottom", fontsize=8, color="crimson")
        ax_eff.set_ylim(0, max(120, np.nanmax([np.nanmax(c.eff * 100) for c in cs if c.size == size] + [0]) * 1.1))
        ax_eff.set_title(f"{human_size(size)}: parallel efficiency (measured / ideal)", fontsize=9)
        ax_eff.set_ylabel("efficiency [%]")
        for ax in (ax_bw, ax_eff):
            steps = sorted({k for c in cs for k in c.steps})
            ax.set_xscale("log", base=2)
            ax.set_xticks(steps, [str(k) for k in steps])
            ax.minorticks_off()
            ax.grid(True, alpha=0.3)
            if row == len(sizes) - 1:
                ax.set_xlabel("active ranks per node")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), fontsize=8, frameon=False)
    fig.suptitle(f"{title}\n{cap_note}", fontsize=9)
    fig.tight_layout(rect=(0, 0.5 / fig.get_figheight(), 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return cs, cap, cap_note


def table(cs):
    """Rows the text table and the report print: pattern, size, step, per node mean/min/max,
    loopback, Mmsg/s, ideal, efficiency %, per rank mean, whether the step is the knee."""
    rows = []
    for c in cs:
        for i, k in enumerate(c.steps):
            rows.append((c.pattern, c.size, k, c.mean[i], c.lo[i], c.hi[i], c.loopback[i], c.mmsgs[i], c.ideal[i],
                         c.eff[i] * 100, c.rank_mean[i], "knee" if c.knee == i else ""))
    return rows
