"""Reads an rdmamesh results file (schema rdmamesh/1, /2 or /3) into plain Python and numpy objects."""
import json
import re
from dataclasses import dataclass, field

import h5py
import numpy as np


def text(v):
    """An HDF5 string attribute or element as str."""
    return v.decode() if isinstance(v, bytes) else str(v)


def human_size(n):
    """4096 -> '4 KiB', as the console and the README spell sizes."""
    n = int(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or n % 1024 or unit == "GiB":
            return f"{n} {unit}"
        n //= 1024
    return f"{n} GiB"


def compress_hosts(names):
    """Slurm's host list form, as rdmamesh prints a leaf of many nodes: n0224…n0255 ->
    'n[0224-0255]' (plan::compress_hostlist: the same groups, in first-appearance order)."""
    def split(name):
        m = re.match(r"^(.*?)(\d{1,18})(\D*)$", name)
        return (m.group(1), m.group(2), m.group(3)) if m else None

    def padded(d):
        return len(d) > 1 and d[0] == "0"

    widths = {(p[0], p[2], len(p[1])) for p in map(split, names) if p and padded(p[1])}
    groups, out = {}, []
    for name in names:
        p = split(name)
        if not p:
            out.append(name)
            continue
        prefix, digits, suffix = p
        width = len(digits) if padded(digits) or (prefix, suffix, len(digits)) in widths else 0
        key = (prefix, suffix, width)
        if key not in groups:
            groups[key] = set()
            out.append(key)
        groups[key].add(int(digits))
    text = []
    for item in out:
        if isinstance(item, str):
            text.append(item)
            continue
        prefix, suffix, width = item
        nums = sorted(groups[item])
        runs = number_ranges(nums, lambda v: f"{v:0{width}d}")
        text.append(f"{prefix}{runs}{suffix}" if len(nums) == 1 else f"{prefix}[{runs}]{suffix}")
    return ",".join(text)


def number_ranges(nums, show=str):
    """Sorted numbers as runs: [0,1,2,5] -> '0-2,5' (each number written by `show`)."""
    out, i = [], 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(show(nums[i]) if i == j else f"{show(nums[i])}-{show(nums[j])}")
        i = j + 1
    return ",".join(out)


@dataclass
class Cause:
    """One row of /runs/NNNN/outliers: the smallest cause rank 0 found for slow or failed pairs."""

    kind: str  # node, rank, link, failed, fabric
    node: int
    rank: int
    peer: int
    send_pct: float
    recv_pct: float
    pairs: int
    text: str
    basis: str = "noise"  # noise, expect, failed (retest: verdict only)
    fine: int = 0  # pairs of its named sides that were not slow


@dataclass
class Run:
    index: int
    name: str  # "0000"
    attrs: dict
    data: dict  # dataset name -> numpy array (small: [N,N] and [K])
    causes: list = field(default_factory=list)
    slow_pct: float = float("nan")
    median_bw: float = float("nan")
    judged: str = ""  # what the run's pairs were judged against: "# healthy: ..." / "# judged: ..."
    noise: float = float("nan")  # the run's noise, the log spread its finder judged against

    retest: dict = field(default_factory=dict)  # --retest: the /retest table of a retest run

    @property
    def pattern(self):
        return self.attrs["pattern"]

    @property
    def retest_of(self):
        """The run this one retests (--retest), or -1."""
        return int(self.attrs.get("retest_of", -1))

    @property
    def mode(self):
        return self.attrs["mode"]

    @property
    def size(self):
        return int(self.attrs["size"])

    @property
    def label(self):
        k = int(self.attrs.get("active_per_node", 0))
        return f"{self.pattern} {human_size(self.size)}" + (f" ({k}/node)" if k else "")

    def off_diagonal(self, name):
        """The measured pairs of an [N,N] matrix as a flat array (no diagonal, no NaN)."""
        m = self.data[name].astype(float)
        mask = ~np.eye(m.shape[0], dtype=bool) & ~np.isnan(m)
        return m[mask]

    def measured(self):
        """Mask of the pairs this run measured (a round was scheduled for them)."""
        n = self.data["tx_bw"].shape[0]
        mask = ~np.eye(n, dtype=bool)
        if "round" in self.data:
            mask &= self.data["round"] >= 0
        if "active" in self.data:  # --scaling: inactive ranks neither send nor receive
            a = self.data["active"].astype(bool)
            mask &= a[:, None] & a[None, :]
        return mask

    def pair_bw(self):
        """Send bandwidth of every measured pair [bytes/s], NaN elsewhere."""
        bw = self.data["tx_bw"].astype(float).copy()
        bw[~self.measured()] = np.nan
        return bw


@dataclass
class Results:
    path: str
    attrs: dict
    config: dict
    ranks: dict  # column -> numpy array, one entry per rank
    runs: list
    sweeps: dict  # pattern -> {name: array}
    scaling: dict  # pattern -> {name: array}
    verdict: dict = None  # /verdict: the job's verdict as rank 0 wrote it (rdmamesh-verdict/2; /1 has no "unjudged" status), if any
    topology: dict = None  # /topology (--topology): switch, parent, leaf; node, node_leaf; source

    @property
    def n(self):
        return int(self.attrs["n_ranks"])

    @property
    def nodes(self):
        return self.ranks["node"]

    @property
    def n_nodes(self):
        return int(self.nodes.max()) + 1 if len(self.nodes) else 0

    @property
    def rails(self):
        """Each rank's rail (its NIC's index among its node's); -1 where the file predates rails."""
        return self.ranks["rail"].astype(int) if "rail" in self.ranks else np.full(self.n, -1)

    def nic_ranks(self, node, rail):
        """The ranks that drive rail `rail`'s NIC of node `node`."""
        return np.flatnonzero((self.nodes == node) & (self.rails == rail))

    def nic_name(self, node, rail):
        """'NIC rxe_node2_1 (rail 1) of node2 (rank 3)', as the console names a NIC."""
        on = self.nic_ranks(node, rail)
        if not len(on):
            return f"NIC of rail {rail} of node {node}"
        return (f"NIC {self.ranks['device'][on[0]]} (rail {rail}) of {self.ranks['hostname'][on[0]]} "
                f"(rank{'s' if len(on) > 1 else ''} {','.join(map(str, on))})")

    def multi_nic(self):
        """Whether some node drives several NICs (-d all or a list)."""
        rails = self.rails
        return any(len(set(rails[self.nodes == k].tolist()) - {-1}) > 1 for k in set(self.nodes.tolist()))

    def who(self, r):
        """'rank 2 (node07, mlx5_1)', as the console names a rank."""
        return f"rank {r} ({self.ranks['hostname'][r]}, {self.ranks['device'][r]})"

    def node_name(self, node):
        ranks = np.flatnonzero(self.nodes == node)
        return self.ranks["hostname"][ranks[0]] if len(ranks) else f"node {node}"

    def uplink_name(self, sw):
        """'leaf1-spine (node1,node2)', as the console names a switch's uplink."""
        t = self.topology
        if not t or not 0 <= sw < len(t["switch"]):
            return f"switch {sw}"
        parent = int(t["parent"][sw])
        up = f"{t['switch'][sw]}-{t['switch'][parent]}" if parent >= 0 else t["switch"][sw]
        # the job's nodes under it, in rank order (as rank 0 names them); a few by name
        under = set(int(r) for r in self.ranks_under(sw))
        hosts = list(dict.fromkeys(str(h).split(".")[0] for r, h in enumerate(self.ranks["hostname"]) if r in under))
        return f"{up} ({','.join(hosts) if len(hosts) <= 4 else compress_hosts(hosts)})"

    def uplink_subject(self, sw, same):
        """As the console: with two subtrees, both uplinks (the same pairs the other way)."""
        if same < 0:
            return self.uplink_name(sw)
        return f"{self.uplink_name(sw)} (or {self.uplink_name(same)}, the same pairs the other way)"

    def _under(self, leaf, sw):
        while leaf >= 0:
            if leaf == sw:
                return True
            leaf = int(self.topology["parent"][leaf])
        return False

    def tree(self):
        """(children: switch -> the switches under it, -1 for the tops; the leaves depth first,
        in the file's order) of /topology."""
        t = self.topology
        children = {}
        for i, p in enumerate(t["parent"]):
            children.setdefault(int(p), []).append(i)
        leaves, stack = [], list(reversed(children.get(-1, [])))
        while stack:
            sw = stack.pop()
            if int(t["leaf"][sw]):
                leaves.append(sw)
            stack += list(reversed(children.get(sw, [])))
        return children, leaves

    def uplinks(self):
        """(switch, ranks under it) for every switch with one above it: the finder's uplinks."""
        if not self.topology:
            return []
        return [(sw, self.ranks_under(sw)) for sw, p in enumerate(self.topology["parent"]) if int(p) >= 0]

    def ranks_under(self, sw):
        """The ranks whose node sits under switch `sw` (its subtree)."""
        if not self.topology:
            return np.array([], dtype=int)
        t = self.topology
        leaf_of = {h: int(l) for h, l in zip(t["node"], t["node_leaf"])}
        short = [h.split(".")[0] for h in self.ranks["hostname"]]
        return np.array([r for r, h in enumerate(short) if self._under(leaf_of.get(h, -1), sw)], dtype=int)

    def bw_runs(self):
        """Bandwidth runs of the job's plan (retests, a few pairs alone, are apart)."""
        return [r for r in self.runs if r.mode == "bw" and r.retest_of < 0]

    def retest_runs(self):
        return [r for r in self.runs if r.retest_of >= 0]

    def lat_runs(self):
        return [r for r in self.runs if r.mode == "lat"]


def _read_group(g):
    out = {}
    for k, v in g.items():
        if isinstance(v, h5py.Dataset):
            a = v[()]
            if v.dtype.kind in "OS":
                a = np.array([text(x) for x in np.atleast_1d(a)], dtype=object)
            out[k] = a
    return out


def _attrs(obj):
    return {k: (text(v) if isinstance(v, (bytes, str)) else (v.item() if hasattr(v, "item") else v))
            for k, v in obj.attrs.items()}


def load(path):
    """The whole file: small enough to hold (matrices are [N,N], sweeps [S,N,N])."""
    with h5py.File(path, "r") as f:
        schema = text(f.attrs.get("schema", ""))
        if not schema.startswith("rdmamesh/"):
            raise ValueError(f"{path} is not an rdmamesh results file (schema attribute {schema!r})")
        attrs = _attrs(f)
        config = _attrs(f["config"]) if "config" in f else {}
        ranks = _read_group(f["ranks"]) if "ranks" in f else {}
        runs = []
        for name in sorted(f.get("runs", {})):
            g = f["runs"][name]
            run = Run(index=int(name), name=name, attrs=_attrs(g), data=_read_group(g))
            if "outliers" in g:
                o = _read_group(g["outliers"])
                oa = _attrs(g["outliers"])
                run.slow_pct = float(oa.get("slow_pct", np.nan))
                run.median_bw = float(oa.get("median_bw", np.nan))
                run.judged = str(oa.get("verdict", ""))
                run.noise = float(oa.get("noise", np.nan))
                lines = list(o.get("text", []))  # older files gave failed pairs no line: pad
                lines += [""] * (len(o.get("kind", [])) - len(lines))
                for i in range(len(o.get("kind", []))):
                    run.causes.append(Cause(kind=o["kind"][i], node=int(o["node"][i]), rank=int(o["rank"][i]),
                                            peer=int(o["peer"][i]), send_pct=float(o["send_pct"][i]),
                                            recv_pct=float(o["recv_pct"][i]), pairs=int(o["pairs"][i]),
                                            text=lines[i], basis=o["basis"][i] if "basis" in o else "noise",
                                            fine=int(o["fine"][i]) if "fine" in o else 0))
            if "retest" in g:
                run.retest = _read_group(g["retest"])
                run.retest.update(_attrs(g["retest"]))
            runs.append(run)
        sweeps = {p: _read_group(g) for p, g in f.get("sweeps", {}).items()}
        scaling = {p: _read_group(g) for p, g in f.get("scaling", {}).items()}
        verdict = json.loads(text(f["verdict"][0])) if "verdict" in f else None
        topology = None
        if "topology" in f:
            topology = _read_group(f["topology"])
            topology.update(_attrs(f["topology"]))
    return Results(path=path, attrs=attrs, config=config, ranks=ranks, runs=runs, sweeps=sweeps, scaling=scaling,
                   verdict=verdict, topology=topology)
