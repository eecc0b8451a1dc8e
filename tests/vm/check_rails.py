#!/usr/bin/python3
"""Checks a results file of a job on nodes with several NICs (tools/softroce-vm --nodes K --rails R)
against what the launch asked for.

  check_rails.py FILE --rails R [--aligned]

Every rank drove the NIC of its rail on its own node (/ranks/rail, /ranks/device rxe_nodeI_R
on host nodeI, /ranks/nics = R), chosen by the spread over equally near NICs; every NIC of every
node drove a rank. In every run, every same-rail pair across nodes moved data, verified end to
end where the run verified; cross-rail pairs did too (--rails all), or (--aligned) were not run
and read NaN, not 0, in every matrix."""
import argparse
import sys

import h5py
import numpy as np

errors = []


def check(ok, msg):
    if not ok:
        errors.append(msg)
        print(f"check_rails: {msg}", file=sys.stderr)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--rails", type=int, required=True)
    ap.add_argument("--aligned", action="store_true")
    a = ap.parse_args()
    with h5py.File(a.file, "r") as f:
        rk = f["ranks"]
        hosts = [text(h) for h in rk["hostname"][()]]
        devices = [text(d) for d in rk["device"][()]]
        rail = rk["rail"][()].astype(int)
        nics = rk["nics"][()].astype(int)
        how = [text(h) for h in rk["nic_chosen"][()]]
        n = len(hosts)
        for r in range(n):
            check(devices[r] == f"rxe_{hosts[r]}_{rail[r]}",
                  f"rank {r} on {hosts[r]} drove {devices[r]}, its rail is {rail[r]}")
            check(nics[r] == a.rails, f"rank {r}: /ranks/nics {nics[r]}, expected {a.rails}")
            check(how[r] == "spread", f"rank {r}: NIC chosen by {how[r]!r}, expected the spread")
        for h in sorted(set(hosts)):
            used = sorted(rail[r] for r in range(n) if hosts[r] == h)
            check(sorted(set(used)) == list(range(a.rails)), f"{h}: its ranks drove rails {used}")
        check(text(f["config"].attrs["rails"]) == ("aligned" if a.aligned else "all"),
              f"/config rails {text(f['config'].attrs['rails'])!r}")
        same = rail[:, None] == rail[None, :]
        off = ~np.eye(n, dtype=bool)
        runs = [f["runs"][k] for k in sorted(f["runs"]) if "retest_of" not in f["runs"][k].attrs]
        check(bool(runs), "no run")
        for g in runs:
            tx, rx = g["tx_bw"][()], g["rx_bw"][()]
            run = off & (same if a.aligned else True)
            check((tx[run] > 0).all() and (g["rx_msgs"][()][run] > 0).all(),
                  f"{g.name}: pairs that should have run moved nothing:\n{tx}")
            if a.aligned:
                cross = off & ~same
                check(np.isnan(tx[cross]).all() and np.isnan(rx[cross]).all(),
                      f"{g.name}: cross-rail pairs are not NaN (not run):\n{tx}")
            if int(g.attrs.get("verify", 0)) == 1:
                errs = g["verify_errors"][()]
                check((errs[run] == 0).all(), f"{g.name}: verify errors:\n{errs}")
    sys.exit(1 if errors else 0)


main()
