#!/usr/bin/python3
"""Assert what a results file says after a fault: which pairs failed, what survived, how it ended.

  check_faults.py FILE pair-failed SRC DST [STATUS]  only SRC<->DST flagged, with the completion status named
                                                  (default: remote access error)
  check_faults.py FILE corrupt SRC DST MSG        one mismatch, on SRC->DST, naming the message
  check_faults.py FILE incomplete RUNS TEXT       complete=0, status contains TEXT, RUNS whole runs kept
  check_faults.py FILE interrupted RUNS           complete=0, RUNS runs, the last one cut short but measured
  check_faults.py FILE cancelled RUNS             the same, but the cut run may have measured nothing yet
  check_faults.py FILE long ITERS TIMEOUT         complete, every active pair moved exactly ITERS messages, and
                                                  each took over 2 x TIMEOUT (else the test proves nothing)
  check_faults.py FILE outlier KIND RANK PEER      exactly one outlier: KIND (rank, link) naming RANK (and PEER)
  check_faults.py FILE retest PAIRS [MIN]         run 0001 retests run 0000: its /retest table holds at least MIN, its rounds -D long, at most 0.3 s or up to -D where its controls ran slow
                                                  (default all) of PAIRS (SRC:DST,...) and nothing else, all still slow alone
  check_faults.py FILE cut-sweep MIN_RUNS TEXT    complete=0, status 'incomplete: ...TEXT...', at least MIN_RUNS
                                                  runs kept, /sweeps holds exactly the finished runs' sizes
"""
import sys

import h5py
import numpy as np

errors = []


def check(cond, what):
    if not cond:
        errors.append(what)


def off_diagonal(n):
    return ~np.eye(n, dtype=bool)


def main():
    path, what, *args = sys.argv[1:]
    with h5py.File(path, "r") as f:
        n = int(f.attrs["n_ranks"])
        runs = [f["runs"][k] for k in sorted(f["runs"].keys())] if "runs" in f else []
        status = f.attrs["status"]
        if what == "pair-failed":
            src, dst = int(args[0]), int(args[1])
            want = args[2] if len(args) > 2 else "remote access error"
            check(int(f.attrs["complete"]) == 1, f"complete is {f.attrs['complete']}: the rest of the mesh must finish")
            check(status == "finished with failures", f"status is {status!r}")
            run = runs[0]
            flags = run["flags"][:]
            bad = {(a, b) for a in range(n) for b in range(n) if flags[a, b]}
            check((src, dst) in bad, f"pair {src}->{dst} not flagged: {sorted(bad)}")
            check(bad <= {(src, dst), (dst, src)}, f"pairs other than {src}<->{dst} flagged: {sorted(bad)}")
            # healthy pairs moved data over the round (an interval on a starved CPU may count none)
            total = run["tx_total"][:]
            for a in range(n):
                for b in range(n):
                    if a != b and (a, b) not in bad:
                        check(total[a, b] > 0, f"healthy pair {a}->{b} completed {total[a, b]} sends")
            events = [e.decode() if isinstance(e, bytes) else e for e in run["events"][:]]
            named = [e for e in events if e.startswith(f"rank {src} -> rank {dst}:")]
            check(any(want in e and "vendor_err" in e for e in named),
                  f"no event names the {want} of {src}->{dst}: {events}")
        elif what == "corrupt":
            src, dst, msg = int(args[0]), int(args[1]), int(args[2])
            run = runs[0]
            ve = run["verify_errors"][:]
            check(ve[src, dst] == 1, f"verify_errors[{src},{dst}] is {ve[src, dst]}, expected 1")
            check(ve.sum() == 1, f"{ve.sum()} mismatches in all, expected exactly 1")
            events = [e.decode() if isinstance(e, bytes) else e for e in run["events"][:]]
            check(any(e.startswith(f"verify: rank {src} -> rank {dst} lane 0 message {msg}: byte ") for e in events),
                  f"no event names pair, message and byte: {events}")
            check(run["flags"][:].sum() == 0, "a pair is flagged failed: corruption must not break the connection")
        elif what == "incomplete":
            want_runs, text = int(args[0]), args[1]
            check(int(f.attrs["complete"]) == 0, "complete is 1 after a rank died")
            check(text in status, f"status {status!r} lacks {text!r}")
            check(len(runs) == want_runs, f"{len(runs)} runs kept, expected {want_runs}")
            for run in runs:
                # every pair sent (whole round), and the cut interval measured something: a pair's
                # interval can count nothing on a starved machine, since completions arrive per
                # moderation group of 100
                check(np.all(run["tx_total"][:][off_diagonal(n)] > 0), f"run {run.name}: a pair sent nothing")
                check(np.nansum(run["tx_bw"][:][off_diagonal(n)]) > 0, f"run {run.name}: the interval measured nothing")
        elif what in ("interrupted", "cancelled"):
            want_runs = int(args[0])
            check(int(f.attrs["complete"]) == 0, "complete is 1 after SIGTERM")
            check("interrupted by SIGTERM" in status, f"status is {status!r}")
            check(len(runs) == want_runs, f"{len(runs)} runs, expected {want_runs}")
            for i, run in enumerate(runs):
                last = i == len(runs) - 1
                check(int(run.attrs["interrupted"]) == (1 if last else 0),
                      f"run {run.name}: interrupted is {run.attrs['interrupted']}")
                if last and what == "cancelled":
                    continue  # the signal may land in the warm-up: the cut run need not have measured
                sent = run["tx_total"][:][off_diagonal(n)] > 0
                if last:
                    # the run the signal cut: some pair sent; on a starved machine a pair may not
                    # have completed its first moderation group of sends before the signal
                    check(np.any(sent), f"run {run.name}: no pair sent")
                else:
                    # as for "incomplete": every pair sent over its round
                    check(np.all(sent), f"run {run.name}: a pair sent nothing")
                # and the interval measured something
                check(np.nansum(run["tx_bw"][:][off_diagonal(n)]) > 0, f"run {run.name}: the interval measured nothing")
        elif what == "long":
            iters, timeout = int(args[0]), float(args[1])
            check(int(f.attrs["complete"]) == 1 and status == "ok", f"complete {f.attrs['complete']}, status {status!r}")
            check(len(runs) == 1, f"{len(runs)} runs, expected 1")
            for run in runs:
                tx_total, tx_bytes, tx_bw = run["tx_total"][:], run["tx_bytes"][:], run["tx_bw"][:]
                active = run["round"][:] >= 0
                check(active.sum() > 0, "no pair took part")
                check(np.all(tx_total[active] == iters), f"tx_total of active pairs {tx_total[active]}, expected {iters}")
                check(run["flags"][:].sum() == 0, "a pair is flagged failed")
                took = tx_bytes[active] / tx_bw[active]
                check(np.all(took > 1.5 * timeout),
                      f"pairs took {took} s, not over 1.5 x --timeout {timeout}: raise -n so the round outlasts it")
        elif what == "outlier":
            kind, rank, peer = args[0], int(args[1]), int(args[2])
            g = runs[0]["outliers"]
            kinds = [k.decode() if isinstance(k, bytes) else k for k in g["kind"][:]]
            check(kinds == [kind], f"outliers {kinds}, expected exactly one {kind}")
            if kinds == [kind]:
                check(int(g["rank"][0]) == rank and int(g["peer"][0]) == peer,
                      f"outlier names rank {g['rank'][0]} peer {g['peer'][0]}, expected {rank} {peer}")
                check(0 < float(g["send_pct"][0]) < float(g.attrs["slow_pct"]), f"send_pct {g['send_pct'][0]}")
        elif what == "retest":
            want = {tuple(int(x) for x in p.split(":")) for p in args[0].split(",")}
            check(len(runs) == 2, f"{len(runs)} runs, expected the run and its retest")
            if len(runs) == 2:
                r = runs[1]
                check(int(r.attrs.get("retest_of", -1)) == 0, f"run 0001 retest_of {r.attrs.get('retest_of')}")
                check("retest" in r and "retest_of" not in runs[0].attrs, "no /runs/0001/retest or run 0000 marked")
                # its rounds: the run's -D, at most 0.3 s, or longer, up to -D, where the controls'
                # rates in the run leave a pair at the bound fewer than ten messages in 0.3 s; after a
                # warm-up of the run's, at most 0.1 s
                d = float(runs[0].attrs["duration_s"])
                want_s = min(d, 0.3)
                want_w = min(float(runs[0].attrs["warmup_s"]), 0.1)
                check(abs(float(r.attrs["warmup_s"]) - want_w) < 1e-9,
                      f"the retest's warm-up: warmup_s {r.attrs['warmup_s']}, expected {want_w}")
                check(want_s - 1e-9 <= float(r.attrs["duration_s"]) <= d + 1e-9,
                      f"the retest's rounds: duration_s {r.attrs['duration_s']}, expected {want_s} to {d}")
                if "retest" in r:
                    g = r["retest"]
                    every = {(int(a), int(b)): int(v) for a, b, v in zip(g["src"][:], g["dst"][:], g["still_slow"][:])}
                    # other pairs below --slow in the run go too; none of them may stay slow alone
                    others = {p: v for p, v in every.items() if p not in want}
                    check(not any(others.values()), f"pairs other than {sorted(want)} still slow alone: {others}")
                    got = {p: v for p, v in every.items() if p in want}
                    least = int(args[1]) if len(args) > 1 else len(want)
                    check(len(got) >= least, f"retested pairs {sorted(every)}, expected at least {least} of {sorted(want)}")
                    slow = [p for p, v in got.items() if v == 1]
                    if len(args) > 2 and args[2] == "most":  # a rank: most of its sends, two at least
                        check(len(slow) >= 2 and 2 * len(slow) > len(got), f"not most still slow alone: {got}")
                    else:
                        check(len(slow) == len(got), f"not still slow alone: {got}")
                    check(int(g.attrs["controls"]) >= 1 and np.all(g["path_controls"][:] >= 1), "no control pairs")
                    # each control alone against the others of its path: what a side is ranked against
                    cp = g["controls_pct"][:]
                    check(1 <= len(cp) <= int(g.attrs["controls"]) and np.all(np.isfinite(cp)) and np.all(cp > 0),
                          f"controls_pct {cp} for {int(g.attrs['controls'])} control pairs")
                    # still slow: its 95 % interval alone lies below --slow % of its controls
                    pct, lo, hi = g["pct"][:], g["lo_pct"][:], g["hi_pct"][:]
                    slow_pct = float(g.attrs["slow_pct"])
                    still = g["still_slow"][:].astype(bool)
                    # a pair its own host held back alone is undecided whatever it read
                    held = g["starved"][:].astype(bool)
                    check(np.all(lo <= pct) and np.all(pct <= hi), f"pct {pct} outside its interval {lo}-{hi}")
                    check(np.all(hi[still] < slow_pct) and np.all(~(hi[~still & ~held] < slow_pct)),
                          f"intervals {lo}-{hi} against --slow {slow_pct}: still_slow {still}, held back {held}")
                    # a pair that moved nothing alone, in rounds sized for ten messages at the bound,
                    # did not recover: still slow, never fine or undecided
                    check(np.all((g["alone_bw"][:] > 0) | still), "a retested pair measured nothing alone, and is not still slow")
        elif what == "cut-sweep":
            min_runs, text = int(args[0]), args[1]
            check(int(f.attrs["complete"]) == 0, "complete is 1 after a failure")
            check(status.startswith("incomplete: ") and text in status, f"status {status!r} lacks 'incomplete: ...{text}'")
            check(len(runs) >= min_runs, f"{len(runs)} runs kept, expected at least {min_runs}")
            finished = [r for r in runs if int(r.attrs["interrupted"]) == 0]
            pattern = runs[0].attrs["pattern"] if runs else ""
            check(f"sweeps/{pattern}" in f, f"no /sweeps/{pattern} group")
            if f"sweeps/{pattern}" in f:
                g = f[f"sweeps/{pattern}"]
                sizes = [int(r.attrs["size"]) for r in finished]
                check(list(g["msg_size"][:]) == sizes, f"/sweeps sizes {list(g['msg_size'][:])}, finished runs {sizes}")
                for i, r in enumerate(finished):
                    check(np.array_equal(g["tx_bw"][i], r["tx_bw"][:], equal_nan=True), f"sweep row {i} is not {r.name}")
        else:
            sys.exit(f"unknown check {what}")
    for e in errors:
        print(f"check_faults: {path}: {e}")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
