"""What a person acts on: the causes rank 0 named in each run, folded over runs, and the same
smallest-cause rule (node, rank, link) applied to other per-pair scores, such as the ratio of
two files in compare."""
import math
import warnings
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


def _median(v):
    v = [x for x in np.ravel(v) if np.isfinite(x)]
    return float(np.median(v)) if v else float("nan")


def _mad(x, dof=None, floor=0.0):
    """1.4826 × MAD at its upper 95 % confidence bound (chi-square, m - 1 degrees of freedom,
    Wilson-Hilferty), as stats/outliers.cpp: a few pairs that happen to agree do not make a small
    difference look like a fault. NaN below four values."""
    x = np.asarray(x, dtype=float)
    if x.size < 4:
        return float("nan")
    fit = np.sqrt(x.size / dof) if dof else 1.0  # residuals of a fit: its effects taken out
    dof = dof or x.size - 1
    a = 2 / (9 * dof)
    chi2_low = dof * max(1 - a - 1.6449 * np.sqrt(a), 0.05) ** 3
    sigma = max(floor, 1.4826 * float(np.median(np.abs(x - np.median(x)))))
    return sigma * fit * np.sqrt(dof / chi2_low)


def _rank_sum_p(x, y):
    """One-sided rank-sum p-value that `x` lies below `y` (normal approximation, ties half), as
    stats/outliers.cpp."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if not x.size or not y.size:
        return 1.0
    y = np.sort(y)  # each x placed by binary search: O(m log n), not an m × n table
    lo, hi = np.searchsorted(y, x, "left"), np.searchsorted(y, x, "right")
    u = float(lo.sum() + 0.5 * (hi - lo).sum())
    m, n = x.size, y.size
    zscore = (u - m * n / 2 + 0.5) / np.sqrt(m * n * (m + n + 1) / 12)
    return 0.5 * math.erfc(-zscore / math.sqrt(2))


def _residuals(z, use, cls, rounds, min_spread):
    """z less row and column effects (median polish) where `use`, and each pair's residual spread:
    its cohort's (class and round) where that holds five pairs, never below the whole's."""
    e = np.where(use & np.isfinite(z), z, np.nan)
    for _ in range(4):
        for axis in (1, 0):
            cnt = np.isfinite(e).sum(axis=axis)
            with warnings.catch_warnings():  # a rank with no pair left: its median is NaN, used as 0
                warnings.simplefilter("ignore", RuntimeWarning)
                med = np.where(cnt >= 2, np.nanmedian(e, axis=axis), 0.0)
            med = np.nan_to_num(med)
            e = e - (med[:, None] if axis == 1 else med[None, :])
    ok = np.isfinite(e)
    dof = ok.sum() - (ok.any(axis=1).sum() + ok.any(axis=0).sum() - 1)
    if dof < 4:  # too few pairs to tell a link from its ends
        return np.full(z.shape, np.nan), np.full(z.shape, np.nan)
    share = dof / ok.sum()
    whole = _mad(e[ok], dof, min_spread)
    spread = np.full(z.shape, np.nan)
    for c in np.unique(cls):
        for r in np.unique(rounds[ok & (cls == c)]):
            m = ok & (cls == c) & (rounds == r)
            own = _mad(e[m], m.sum() * share, min_spread) if m.sum() >= 5 else float("nan")
            spread[m] = max(whole, own) if np.isfinite(own) else whole
    return e, spread


def localize(logs, judged, nodes, rounds, floor, k=3.0, k_link=4.0, min_spread=0.02, uplinks=(), rails=None):
    """The smallest causes of the pairs whose `logs` (a log ratio per pair, e.g. after ÷ before)
    fall below their cohort, by the rule rdmamesh applies to a run (stats/outliers.cpp): each
    pair against the median of its cohort (same class, within or across nodes, and same round
    when it holds three of them); a candidate (a node's pairs to other nodes, a rank's sends or
    receives) against the pairs that touch neither it nor a cause already named: a side is named
    when its median is below `floor` (log) and below -k times how much the reference's ranks
    differ (their sides' medians; at least the pairs' spread over the square root of the side's
    pairs); the one explaining most slow pairs (below `floor`) first; single pairs at k_link
    times the pairs' spread. Pairs that rose are never causes. Returns dicts with kind, node,
    rank, peer, send, recv (the named side's median as a ratio to its cohort, NaN otherwise),
    pairs, fine. `rails` (each rank's rail, where nodes drive several NICs): each NIC of such a node
    is a candidate too (its peer its rail), and pairs across rails a class of their own."""
    n = logs.shape[0]
    cls = (nodes[:, None] != nodes[None, :]).astype(int)
    nics = []  # (node, rail, its ranks) of the nodes that drive several NICs
    if rails is not None:
        rails = np.asarray(rails, dtype=int)
        for nd in sorted(set(nodes.tolist())):
            mine = sorted(set(rails[nodes == nd].tolist()) - {-1})
            if len(mine) > 1:
                nics += [(int(nd), r, (nodes == nd) & (rails == r)) for r in mine]
        if nics:
            cls += 16 * ((cls > 0) & (rails[:, None] != rails[None, :]))
    for _, under in uplinks:  # and the uplinks the path crosses: like with like, as rank 0's finder
        on = np.zeros(n, dtype=bool)
        on[np.asarray(under, dtype=int)] = True
        cls += (cls > 0) & (on[:, None] != on[None, :])
    rounds = np.where(judged, rounds, -1)

    def scores(ref):
        z = np.full(logs.shape, np.nan)
        for c in np.unique(cls):
            m, use = judged & (cls == c), ref & (cls == c)
            if use.sum() < 2:
                continue
            whole = np.median(logs[use])
            for r in np.unique(rounds[m]):
                ur = use & (rounds == r)
                z[m & (rounds == r)] = logs[m & (rounds == r)] - (np.median(logs[ur]) if ur.sum() >= 3 else whole)
        pooled = _mad(z[ref & np.isfinite(z)])
        if not np.isfinite(pooled):
            return z, np.full(logs.shape, np.nan), float("nan")
        # each class spreads as it does (within a node: the CPUs; across: the port), where it has
        # enough pairs to say; else the run's spread
        spread = np.full(logs.shape, max(min_spread, pooled))
        for c in np.unique(cls):
            own = _mad(z[ref & np.isfinite(z) & (cls == c)])
            if np.isfinite(own):
                spread[cls == c] = max(min_spread, own)
        return z, spread, max(min_spread, pooled)

    def rank_spread(ref, z):
        medians = [float(np.median(v)) for r in range(n) for v in (z[r, ref[r, :]], z[ref[:, r], r])
                   if np.isfinite(v).any() and v.size]
        spread = _mad(np.array(medians)) if len(medians) >= 4 else float("nan")
        return max(min_spread, spread) if np.isfinite(spread) else float("nan")

    members = []
    # a switch's uplink (--topology: `uplinks`, (switch, ranks under it)): its pairs out of and
    # into them; on a tie it yields to a node, as in rank 0's finder
    same = {}  # two subtrees holding every rank: one candidate, its twin named beside it
    for sw, under in uplinks:
        on = np.zeros(n, dtype=bool)
        on[np.asarray(under, dtype=int)] = True
        twin = [m for m in members if (m[3] == ~on).all()]
        if twin:
            same[twin[0][1]] = int(sw)
        elif 0 < on.sum() < n:
            members.append(("uplink", int(sw), -1, on, True))
    switches = bool(members) or bool(nics)
    if len(set(nodes.tolist())) > 1:
        members += [("node", int(nd), -1, nodes == nd, True) for nd in sorted(set(nodes.tolist()))]
    # a NIC before its ranks (the tie of a rank per NIC is the NIC's), its pairs to its node's other
    # NICs its own; its rail rides in the rank slot as -2 - rail
    members += [("nic", nd, -2 - r, on, False) for nd, r, on in nics]
    members += [("rank", int(nodes[r]), r, np.arange(n) == r, False) for r in range(n)]
    covered, explained, out = np.zeros_like(judged), np.zeros_like(judged), []
    while True:
        best = None
        for i, (kind, node, rank, on, across) in enumerate(members):
            ref = judged & ~covered & ~(on[:, None] | on[None, :])
            z, _, pooled = scores(ref)
            spread = rank_spread(ref, z)
            if not np.isfinite(spread) or not np.isfinite(pooled):
                continue
            sides, named = [], np.zeros_like(judged)
            for side in (on[:, None] & ~on[None, :], ~on[:, None] & on[None, :]):
                m = side & judged & ~covered & np.isfinite(z) & ~(across & (cls == 0))
                ok = False
                if m.sum() >= 2:
                    d = np.median(z[m])
                    others = z[ref & np.isfinite(z) & ~(across & (cls == 0))]
                    p = _rank_sum_p(z[m], others)
                    beyond = d < -k * max(spread, 1.2533 * pooled / np.sqrt(m.sum()))
                    ok = d < floor and ((beyond and p < 0.02) or p < 1e-3)
                sides.append((m, ok))
                if ok:
                    named |= m
            slow = named & (z < floor)
            gain = int((slow & ~explained).sum())
            # with switches a cause is worth its slow pairs less its fine ones, as rank 0's finder
            worth = gain - (int((named & ~(z < floor)).sum()) if switches else 0)
            size = 0 if kind == "uplink" else on.sum()
            if gain and (best is None or worth > best[0] or (worth == best[0] and size > best[1])):
                best = (worth, size, i, sides, z)
        if best is None:
            break
        _, _, i, sides, z = best
        kind, node, rank, _, _ = members.pop(i)
        c = dict(kind=kind, node=node, rank=-1 if kind == "nic" else rank,
                 peer=same.get(node, -1) if kind == "uplink" else -2 - rank if kind == "nic" else -1,
                 send=float("nan"), recv=float("nan"), pairs=0, fine=0)
        for (m, ok), key in zip(sides, ("send", "recv")):
            if not ok and kind == "uplink":  # the other way's acknowledgements: its evidence too
                explained |= m & (z < floor)
                covered |= m
            if ok:
                c[key] = float(np.exp(np.median(z[m])))
                c["pairs"] += int((m & (z < floor)).sum())
                c["fine"] += int((m & ~(z < floor)).sum())
                explained |= m & (z < floor)
                covered |= m
        out.append(c)
    rest = judged & ~covered
    z, _, _ = scores(rest)
    e, spread = _residuals(z, rest, cls, rounds, min_spread)
    with np.errstate(invalid="ignore"):
        link = rest & np.isfinite(e) & (z < floor) & (e < -k_link * spread)
    if link.any():
        for a, b in zip(*np.nonzero(link)):
            out.append(dict(kind="link", node=-1, rank=int(a), peer=int(b), send=float(np.exp(z[a, b])),
                            recv=float("nan"), pairs=1, fine=0))
    return out


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
