#!/usr/bin/python3
"""Assert what a user relies on in an rdmamesh results file; exit 1 naming each violation.

Every run group (one per pattern and size) is checked: shapes, NaN diagonals, every pair
measured, nothing lost, no failed pair or mismatch; plus sweeps, contention and incast shares.
"""
import argparse
import sys

import h5py
import numpy as np

RECEIVER_SEES = ("write_imm", "send")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--op", required=True)
    ap.add_argument("--mode", default="bw")
    ap.add_argument("--patterns", default=None, help="comma list; default mesh (bw) or pairs (lat)")
    ap.add_argument("--sizes", default=None, help="comma list of sizes in bytes, in run order")
    ap.add_argument("--iters", type=int, help="iterations mode: exact message or sample counts per pair")
    ap.add_argument("--verify", action="store_true", help="payloads were verified")
    ap.add_argument("--same-memory-as", metavar="OTHER.h5",
                    help="every rank of both files registered the same bytes (/ranks/registered_bytes): memory "
                         "flat in N without --verify")
    ap.add_argument("--stalled", type=int, help="RDMAMESH_FAULT=stall:RANK: that rank measured 0 s in run 0, "
                                                "every other rank more; its figures and series are NaN")
    a = ap.parse_args()
    errors = []

    def check(cond, what):
        if not cond:
            errors.append(what)

    n = a.ranks
    off = ~np.eye(n, dtype=bool)
    patterns = (a.patterns or ("mesh" if a.mode == "bw" else "pairs")).split(",")
    sizes = [int(s) for s in a.sizes.split(",")] if a.sizes else None

    if a.same_memory_as:
        with h5py.File(a.file, "r") as f, h5py.File(a.same_memory_as, "r") as g:
            mine, theirs = f["ranks/registered_bytes"][()], g["ranks/registered_bytes"][()]
            check(len(set(mine)) == 1 and set(mine) == set(theirs),
                  f"registered bytes per rank: {sorted(set(mine))} at {len(mine)} ranks, {sorted(set(theirs))} at "
                  f"{len(theirs)}: not the same at every N")
    with h5py.File(a.file, "r") as f:
        check(f.attrs["schema"] == "rdmamesh/3", f"schema is {f.attrs['schema']!r}")
        check(int(f.attrs["n_ranks"]) == n, f"n_ranks is {f.attrs['n_ranks']}, expected {n}")
        check(len(f.attrs["command_line"]) > 0, "command_line is empty")
        check(len(f.attrs["tool_version"]) > 0, "tool_version is empty")
        check(int(f.attrs["complete"]) == 1, f"complete is {f.attrs['complete']} ({f.attrs['status']})")
        check(f.attrs["status"] == "ok", f"status is {f.attrs['status']!r}")
        check(f["ranks/hostname"].shape == (n,), f"ranks/hostname has shape {f['ranks/hostname'].shape}")
        check(all(len(h) > 0 for h in f["ranks/hostname"].asstr()[:]), "a hostname is empty")
        # where setup went, and what every rank holds: (N-1) x q RC QPs, its CQs, its buffer
        phases = f["ranks/setup_s"].attrs["phases"]
        phases = (phases.decode() if isinstance(phases, bytes) else phases).split(",")
        setup = f["ranks/setup_s"][()]
        check(setup.shape == (n, 8) and phases[0] == "placement" and phases[-1] == "barrier",
              f"ranks/setup_s {setup.shape} {phases}")
        check(np.all(np.isfinite(setup) & (setup >= 0)) and np.all(setup.sum(axis=1) > 0), f"setup times {setup}")
        q = int(f["config"].attrs["qps"])
        connect = f["config"].attrs.get("connect", "all")
        connect = connect.decode() if isinstance(connect, bytes) else connect
        pats = f["config"].attrs["pattern"]
        pats = (pats.decode() if isinstance(pats, bytes) else pats).split(",")
        # --connect round holds one round's partners: 2 in shift (r+d, r-d), 1 in pairs, all in incast
        most = {"mesh": n - 1, "incast": n - 1, "shift": min(2, n - 1), "pairs": min(1, n - 1),
                "spread": min(2, n - 1)}
        peers = max(most[p] for p in pats) if connect == "round" else n - 1
        check(np.all(f["ranks/qps"][()] == peers * q),
              f"ranks/qps {f['ranks/qps'][()]}, expected {peers * q} each (--connect {connect})")
        check(np.all(f["ranks/cq_entries"][()] > 0) and np.all(f["ranks/registered_bytes"][()] > 0),
              "a rank holds no CQ entries or no registered memory")

        # --retest runs (a few slow pairs alone) are checked by check_faults.py retest
        runs = [f["runs"][k] for k in sorted(f["runs"].keys()) if "retest_of" not in f["runs"][k].attrs]
        want_runs = len(patterns) * (len(sizes) if sizes else 1)
        check(len(runs) == want_runs, f"{len(runs)} runs, expected {want_runs}")
        for i, run in enumerate(runs):
            where = f"runs/{i:04} ({run.attrs['pattern']}, {run.attrs['size']} B)"

            def rcheck(cond, what, where=where):
                check(cond, f"{where}: {what}")

            rcheck(run.attrs["op"] == a.op, f"op is {run.attrs['op']!r}")
            rcheck(run.attrs["mode"] == a.mode, f"mode is {run.attrs['mode']!r}")
            rcheck(run.attrs["pattern"] == patterns[i // (len(sizes) if sizes else 1)], "pattern out of order")
            if sizes:
                rcheck(int(run.attrs["size"]) == sizes[i % len(sizes)], f"size is {run.attrs['size']}")
            rcheck(len(run["events"]) == 0, f"events: {list(run['events'].asstr()[:])}")
            rcheck((run["flags"][()] == 0).all(), f"failed pairs:\n{run['flags'][()]}")
            # a spread run plays a few partners per rank: the pairs of its plan, checked as such
            played = check_spread(run, f, n, off, rcheck) if run.attrs["pattern"] == "spread" and a.mode == "bw" else off
            if a.mode == "bw":
                check_bw(run, a, n, played, rcheck)
                if a.stalled is not None and run.name == "/runs/0000":
                    check_stalled(run, a.stalled, n, rcheck)
            else:
                check_lat(run, a, n, played, rcheck)
        if a.mode == "bw" and runs:
            # counting inside the interval works: some run of the file measured a send (and a
            # receive). Not every run: with CQ moderation (-Q 100 at 4 KiB) a 0.5 s window on a
            # starved VM can honestly count no signaled completion at all (seen, 3 ranks, load 6)
            check(any(r["tx_msgs"][()][off].sum() > 0 for r in runs), "no send completed in any measured interval")
            if a.op in RECEIVER_SEES:
                check(any(r["rx_msgs"][()][off].sum() > 0 for r in runs), "no message arrived in any measured interval")

        if sizes and len(sizes) > 1:
            for p in patterns:
                g = f.get(f"sweeps/{p}")
                check(g is not None, f"sweeps/{p} missing")
                if g is not None:
                    check(list(g["msg_size"][()]) == sizes, f"sweeps/{p}/msg_size is {list(g['msg_size'][()])}")
                    key = "tx_bw" if a.mode == "bw" else "lat_p50_us"
                    check(g[key].shape == (len(sizes), n, n), f"sweeps/{p}/{key} has shape {g[key].shape}")

        if a.mode == "bw" and "mesh" in patterns and ("pairs" in patterns or "shift" in patterns):
            for run in runs:
                if run.attrs["pattern"] != "mesh":
                    continue
                check("contention" in run, f"mesh run at {run.attrs['size']} B has no contention matrix")
                if "contention" in run:
                    c = run["contention"][()]
                    vs = run.attrs["contention_vs"]
                    alone = next(r for r in runs if r.attrs["pattern"] == vs and r.attrs["size"] == run.attrs["size"])
                    # mesh / pairwise wherever both were measured and the pairwise one is > 0: a pair
                    # starved to 0 in the mesh interval has contention 0, not a missing value
                    want = np.isfinite(run["tx_bw"][()]) & (alone["tx_bw"][()] > 0)
                    check((np.isfinite(c) == want)[off].all() and (c[want] >= 0).all(),
                          f"contention not measured:\n{c}")

    if errors:
        for e in errors:
            print(f"check_results: {a.file}: {e}", file=sys.stderr)
        return 1
    print(f"check_results: {a.file}: ok ({n} ranks, {a.mode}, op {a.op}, patterns {','.join(patterns)})")
    return 0


def check_bw(run, a, n, off, rcheck):
    m = {k: run[k][()] for k in ("tx_bw", "rx_bw", "tx_rate", "tx_msgs", "rx_msgs", "tx_bytes", "tx_total",
                                 "rx_total", "verify_errors", "round", "tx_s", "rx_s")}
    for k, v in m.items():
        rcheck(v.shape == (n, n), f"{k} has shape {v.shape}")
    rcheck(np.isnan(np.diag(m["tx_bw"])).all(), "tx_bw diagonal is not NaN")
    rcheck(np.isnan(np.diag(m["rx_bw"])).all(), "rx_bw diagonal is not NaN")
    # Every pair moved data: counted over the whole round (warm-up and drain too), since a pair
    # starved by a busy CPU can see no completion inside a short interval, an honest 0 there.
    # A figure is NaN exactly where its rank measured 0 s (no CPU for its whole window: seen
    # with two VMs and stress-ng on 2 cores); some run of the file measured a send (below).
    rcheck((m["tx_total"][off] > 0).all(), f"a pair completed no send in its round:\n{m['tx_total']}")
    rcheck((np.isfinite(m["tx_s"][off]) & (m["tx_s"][off] >= 0)).all(),
           f"tx_s is not the pairs' measured seconds:\n{m['tx_s']}")
    for k in ("tx_bw", "tx_rate"):
        v, want = m[k][off], m["tx_s"][off] > 0
        rcheck((np.isfinite(v) == want).all() and (v[want] >= 0).all(),
               f"a {k} pair is not finite and >= 0 where its rank measured > 0 s, or not NaN where 0 s:\n{m[k]}\n{m['tx_s']}")
    rcheck(((m["tx_msgs"][off] > 0) == (m["tx_bw"][off] > 0)).all(), "tx_bw > 0 exactly where tx_msgs > 0")
    rcheck((m["round"][off] >= 0).all(), f"a pair ran in no round:\n{m['round']}")
    rcheck((m["round"][off] < int(run.attrs["rounds"])).all(), "a pair's round is out of range")
    rcheck((m["tx_bytes"] == m["tx_msgs"] * int(run.attrs["size"])).all(), "tx_bytes != tx_msgs * size")
    if a.op in RECEIVER_SEES:
        v, want = m["rx_bw"][off], m["rx_s"][off] > 0
        rcheck((np.isfinite(m["rx_s"][off]) & (m["rx_s"][off] >= 0)).all(), f"rx_s:\n{m['rx_s']}")
        rcheck((np.isfinite(v) == want).all() and (v[want] >= 0).all(),
               f"an rx_bw pair is not finite and >= 0 where its receiver measured > 0 s, or not NaN where 0 s:"
               f"\n{m['rx_bw']}\n{m['rx_s']}")
        rcheck(((m["rx_msgs"][off] > 0) == (m["rx_bw"][off] > 0)).all(), "rx_bw > 0 exactly where rx_msgs > 0")
        # nothing lost: every message a sender saw complete was received
        rcheck((m["rx_total"] == m["tx_total"]).all(), f"rx_total != tx_total:\n{m['tx_total']}\n{m['rx_total']}")
    else:
        rcheck(np.isnan(m["rx_bw"]).all() and np.isnan(m["rx_s"]).all(),
               f"rx_bw is measured for one-sided {a.op}:\n{m['rx_bw']}")
    # what the host gave each rank over its measured intervals (the kernel's schedstat): time on a
    # CPU and time runnable but waiting for one never add up to more than the time that passed
    rcheck("host" in run, "no /host group (what the host gave each rank)")
    if "host" in run:
        h = {k: run["host"][k][()] for k in ("wall_s", "cpu_s", "wait_s", "nivcsw", "passes", "idle_passes")}
        rcheck(all(v.shape == (n,) for v in h.values()), f"host columns' shapes {[v.shape for v in h.values()]}")
        rcheck((h["wall_s"] >= 0).all() and (h["cpu_s"] >= 0).all() and (h["wait_s"] >= 0).all(),
               f"negative host times: {h}")
        rcheck((h["cpu_s"] + h["wait_s"] <= 1.1 * h["wall_s"] + 0.05).all(),
               f"cpu + wait exceed the wall clock: {h}")
        rcheck(h["cpu_s"].sum() > 0 and (h["idle_passes"] <= h["passes"]).all(), f"no CPU time recorded: {h}")
    # each port's counters over the run, read by one rank per port: rxe counts every packet, so
    # a port whose rank sent and received shows both moving (the right device's counters)
    rcheck("ports" in run, "no /ports group (each port's counters over the run)")
    if "ports" in run:
        p = run["ports"]
        names = [x.decode() for x in p["counter"][()]]
        delta, devs = p["delta"][()], [x.decode() for x in p["device"][()]]
        rcheck(delta.shape == (len(devs), len(names)) and len(set(devs)) == len(devs), f"ports: {devs} x {names}")
        # (in a mesh every port carries traffic; a retest or a pairwise round may leave one idle)
        every = run.attrs["pattern"] == "mesh" and "retest_of" not in run.attrs
        moved = [dict(zip(names, row)).get("sent_pkts", 0) > 0 and dict(zip(names, row)).get("rcvd_pkts", 0) > 0
                 for row in delta]
        rcheck(all(moved) if every else any(moved),
               f"ports {devs}: packet counters did not move during the run: {dict(zip(devs, moved))}")
    if a.verify:
        rcheck(int(run.attrs["verify"]) == 1, "run was not verified")
        rcheck((m["verify_errors"] == 0).all(), f"verify errors:\n{m['verify_errors']}")
    if a.iters is not None:
        rcheck((m["tx_msgs"][off] == a.iters).all(), f"tx_msgs is not {a.iters} per pair:\n{m['tx_msgs']}")
        if a.op in RECEIVER_SEES:
            rcheck((m["rx_msgs"][off] == a.iters).all(), f"rx_msgs is not {a.iters} per pair:\n{m['rx_msgs']}")
    if run.attrs["pattern"] == "incast":
        share = run["share"][()]
        sums = np.nansum(share, axis=0)
        rcheck(np.allclose(sums, 1.0), f"incast shares do not sum to 1 per target: {sums}")
        fair = run["fairness"][()]
        rcheck(((fair > 0) & (fair <= 1 + 1e-9)).all(), f"fairness outside (0, 1]: {fair}")


def check_spread(run, f, n, off, rcheck):
    """--pattern spread: in each round every rank sends to one partner and receives from one, on
    another node, a new partner every round, at most --partners rounds; the pairs off the plan
    never ran. Returns the pairs that ran."""
    rnd = run["round"][()]
    ran = off & (rnd >= 0)
    k, partners = int(run.attrs["rounds"]), int(f["config"].attrs["partners"])
    rcheck(1 <= k <= partners, f"{k} rounds, --partners {partners}")
    node = f["ranks/node"][()]
    for r in range(n):
        sends, receives = np.nonzero(ran[r])[0], np.nonzero(ran[:, r])[0]
        rcheck(sorted(rnd[r, sends]) == list(range(k)) and sorted(rnd[receives, r]) == list(range(k)),
               f"rank {r} does not send and receive once in each of {k} rounds: to {list(sends)} in rounds "
               f"{list(rnd[r, sends])}, from {list(receives)} in rounds {list(rnd[receives, r])}")
        rcheck(all(node[p] != node[r] for p in list(sends) + list(receives)),
               f"rank {r}'s partners {list(sends)}, {list(receives)} include its own node's")
    rcheck((run["tx_total"][()][off & ~ran] == 0).all(), f"a pair off the plan sent:\n{run['tx_total'][()]}")
    return ran


def check_stalled(run, r, n, rcheck):
    others = np.arange(n) != r
    tx_s, rx_s = run["tx_s"][()], run["rx_s"][()]
    rcheck((tx_s[r, others] == 0).all() and (rx_s[others, r] == 0).all(),
           f"stalled rank {r} measured > 0 s:\n{tx_s}\n{rx_s}")
    rcheck(np.isnan(run["tx_bw"][()][r]).all() and np.isnan(run["rx_bw"][()][:, r]).all(),
           f"stalled rank {r} has figures")
    rest = ~np.eye(n, dtype=bool)  # the pairs rank r is not part of
    rest[r, :] = rest[:, r] = False
    rcheck((tx_s[rest] > 0).all(), f"a rank other than {r} measured 0 s:\n{tx_s}")
    if "tx_bw_t" in run:
        rcheck(np.isnan(run["tx_bw_t"][()][:, r, :]).all() and np.isnan(run["rx_bw_t"][()][:, :, r]).all(),
               f"stalled rank {r} has a time series")
        rcheck(np.isfinite(run["tx_bw_t"][()][0][rest]).all(),
               "another rank's series lacks its first slot")


def check_lat(run, a, n, off, rcheck):
    count = run["lat_count"][()]
    p50, p99 = run["lat_p50_us"][()], run["lat_p99_us"][()]
    lo, hi = run["lat_min_us"][()], run["lat_max_us"][()]
    rcheck((count[off] > 0).all(), f"a pair has no latency samples:\n{count}")
    rcheck(np.isnan(np.diag(p50)).all(), "lat_p50 diagonal is not NaN")
    rcheck((lo[off] > 0).all(), "a latency is not > 0")
    rcheck((lo[off] <= p50[off]).all() and (p50[off] <= p99[off]).all() and (p99[off] <= hi[off]).all(),
           "percentiles out of order (min <= p50 <= p99 <= max)")
    rcheck(run.attrs["latency_is"] in ("half round trip", "read completion time"), "latency_is not stated")
    rcheck(int(run.attrs["lat_samples"]) == int(count[off].sum()), "aggregate sample count != sum of pairs")
    rcheck(int(run["lat_hist_ns"][()].sum()) == int(count[off].sum()), "histogram count != sum of pairs")
    if a.iters is not None:
        rcheck((count[off] == a.iters).all(), f"samples are not {a.iters} per pair:\n{count}")


if __name__ == "__main__":
    sys.exit(main())
