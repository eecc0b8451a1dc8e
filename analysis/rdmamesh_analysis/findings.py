"""What a person acts on: the causes rank 0 named in each run, folded over runs, short windows, and
settings that differ between NICs. Per-pair figures of other kinds (compare's ratios) are judged
by rank 0's own finder (finder.py), never by a copy of it."""
from dataclasses import dataclass, field

import numpy as np

from .results import number_ranges


@dataclass
class Finding:
    kind: str  # node, rank, link, failed
    node: int
    rank: int
    peer: int
    runs: list = field(default_factory=list)  # run labels that named it
    send_pct: list = field(default_factory=list)
    recv_pct: list = field(default_factory=list)
    pairs: int = 0

    def subject(self, res):
        if self.kind == "node":
            ranks = np.flatnonzero(res.nodes == self.node)
            return f"node {res.node_name(self.node)} (ranks {_ranges(ranks)})"
        if self.kind == "rank":
            return res.who(self.rank)
        if self.kind == "nic":  # its peer is its rail
            return res.nic_name(self.node, self.peer)
        if self.kind == "uplink":
            return f"uplink {res.uplink_subject(self.node, self.peer)}"
        if self.kind == "link":
            return f"link {res.who(self.rank)} -> {res.who(self.peer)}"
        return f"pair {res.who(self.rank)} -> {res.who(self.peer)}"

    def line(self, res, total):
        """One sentence: who, in how many of the runs, how slow."""
        seen = f"in {len(self.runs)} of {total} bandwidth runs"
        if self.kind == "failed":
            return f"{self.subject(res)}: failed {seen} ({', '.join(self.runs)}); see the runs' events"
        parts = []
        for side, v in (("sends", self.send_pct), ("receives", self.recv_pct)):
            v = [x for x in v if np.isfinite(x)]
            if v and self.kind == "uplink":  # its sends go up it, its receives come down
                parts.append(f"{'up' if side == 'sends' else 'down'} at {_span(v)} % of the median")
            elif v:
                parts.append(f"its {side} at {_span(v)} % of the median" if self.kind != "link"
                             else f"at {_span(v)} % of the median")
        return f"{self.subject(res)}: slow {seen} ({', '.join(self.runs)}): {' and '.join(parts)}"


def _span(v):
    lo, hi = round(min(v)), round(max(v))
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _ranges(ranks):
    """[0,1,2,5] -> '0-2,5'."""
    return number_ranges(list(ranks))


def verdict(res):
    """Causes named by rank 0, folded over every bandwidth run; the most persistent first."""
    by_key = {}
    for run in res.bw_runs():
        for c in run.causes:
            key = (c.kind, c.node, c.rank, c.peer)
            f = by_key.setdefault(key, Finding(kind=c.kind, node=c.node, rank=c.rank, peer=c.peer))
            f.runs.append(run.label)
            f.send_pct.append(c.send_pct)
            f.recv_pct.append(c.recv_pct)
            f.pairs = max(f.pairs, c.pairs)
    order = {"failed": 0, "uplink": 1, "node": 2, "nic": 3, "rank": 4, "link": 5}

    def worst(f):
        v = [x for x in f.send_pct + f.recv_pct if np.isfinite(x)]
        return min(v) if v else 0

    return sorted(by_key.values(), key=lambda f: (-len(f.runs), order.get(f.kind, 5), worst(f)))


def _seconds(v):
    lo, hi = min(v), max(v)
    return f"{lo:.3g}" if f"{lo:.3g}" == f"{hi:.3g}" else f"{lo:.3g}–{hi:.3g}"


def short_windows(res):
    """Ranks that measured less than 90 % of a duration interval (no CPU when it opened), by
    the rule the console's `# short window:` line uses: a rank's window is the shortest of the
    seconds its measured pairs divide by (`tx_s` where it sends, `rx_s` where it receives).
    Their figures in those runs cover only what they measured (NaN for 0 s), so a reader must
    know before trusting them. One line per rank, the most affected first."""
    runs, short = res.bw_runs(), {}  # rank -> [(run label, seconds, interval)]
    for run in runs:
        d = float(run.attrs.get("duration_s", 0))
        # a stop request cut every window of its run short: that is not starvation
        if not d > 0 or int(run.attrs.get("interrupted", 0)) or "tx_s" not in run.data or "rx_s" not in run.data:
            continue
        m = run.measured()
        tx, rx = run.data["tx_s"].astype(float), run.data["rx_s"].astype(float)
        for r in range(m.shape[0]):
            v = np.concatenate([tx[r, m[r, :]], rx[m[:, r], r]])
            v = v[np.isfinite(v)]
            if v.size and v.min() < 0.9 * d:
                short.setdefault(r, []).append((run.label, float(v.min()), d))
    lines = []
    for r, seen in sorted(short.items(), key=lambda x: (-len(x[1]), x[0])):
        labels = ", ".join(x[0] for x in seen[:6]) + (f" and {len(seen) - 6} more" if len(seen) > 6 else "")
        lines.append(f"{res.who(r)}: short window in {len(seen)} of {len(runs)} bandwidth runs ({labels}): measured "
                     f"{_seconds([x[1] for x in seen])} s of the {_seconds([x[2] for x in seen])} s interval (no CPU "
                     f"when it opened: an oversubscribed node or a stopped rank); its figures there cover only what "
                     f"it measured, NaN for 0 s")
    return lines


CONSISTENT = (("fw_ver", "firmware"), ("board_id", "board"), ("line_rate_bps", "port line rate"), ("mtu", "path MTU"),
              ("link_layer", "link layer"))


def _show(column, v):
    return f"{float(v) / 1e9:g} Gb/s" if column == "line_rate_bps" else f"{v}"


def odd_ones(res):
    """Settings that should be the same on every NIC of a job (firmware, board, line rate, MTU,
    link layer): for each that differs, the ranks with the less common values."""
    out = []
    for column, what in CONSISTENT:
        values = res.ranks.get(column)
        if values is None:
            continue
        seen = {}
        for r, v in enumerate(values):
            if column == "line_rate_bps" and not float(v) > 0 or str(v) == "":
                continue
            seen.setdefault(v, []).append(r)
        if len(seen) < 2:
            continue
        common = max(seen, key=lambda v: len(seen[v]))
        for v, ranks in seen.items():
            if v == common:
                continue
            hosts = sorted({f"{res.ranks['hostname'][r]} ({res.ranks['device'][r]})" for r in ranks})
            out.append(f"{what} differs: {', '.join(hosts)} (rank{'s' if len(ranks) > 1 else ''} {_ranges(ranks)}) "
                       f"{'have' if len(ranks) > 1 else 'has'} {_show(column, v)}, the other {len(seen[common])} "
                       f"rank{'s' if len(seen[common]) > 1 else ''} {_show(column, common)}")
    return out
