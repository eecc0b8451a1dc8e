#!/usr/bin/python3
"""Assert what a user relies on in an rdmamesh results file; exit 1 naming each violation."""
import argparse
import sys

import h5py
import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--op", required=True)
    ap.add_argument("--size", type=int)
    ap.add_argument("--iters", type=int, help="iterations mode: exact message counts per pair")
    ap.add_argument("--verify", action="store_true", help="payloads were verified")
    a = ap.parse_args()
    errors = []

    def check(cond, what):
        if not cond:
            errors.append(what)

    n = a.ranks
    off = ~np.eye(n, dtype=bool)
    with h5py.File(a.file, "r") as f:
        check(f.attrs["schema"] == "rdmamesh/1", f"schema is {f.attrs['schema']!r}")
        check(int(f.attrs["n_ranks"]) == n, f"n_ranks is {f.attrs['n_ranks']}, expected {n}")
        check(len(f.attrs["command_line"]) > 0, "command_line is empty")
        check(len(f.attrs["tool_version"]) > 0, "tool_version is empty")
        check(int(f.attrs["complete"]) == 1, f"complete is {f.attrs['complete']} ({f.attrs['status']})")
        check(f["ranks/hostname"].shape == (n,), f"ranks/hostname has shape {f['ranks/hostname'].shape}")
        check(all(len(h) > 0 for h in f["ranks/hostname"].asstr()[:]), "a hostname is empty")
        run = f["runs/0000"]
        check(run.attrs["op"] == a.op, f"op is {run.attrs['op']!r}, expected {a.op!r}")
        if a.size is not None:
            check(int(run.attrs["size"]) == a.size, f"size is {run.attrs['size']}, expected {a.size}")
        m = {k: run[k][()] for k in ("tx_bw", "rx_bw", "tx_msgs", "rx_msgs", "tx_bytes", "rx_bytes", "tx_total",
                                     "rx_total", "verify_errors", "flags")}
        for k, v in m.items():
            check(v.shape == (n, n), f"{k} has shape {v.shape}, expected {(n, n)}")
        check(np.isnan(np.diag(m["tx_bw"])).all(), "tx_bw diagonal is not NaN")
        check(np.isnan(np.diag(m["rx_bw"])).all(), "rx_bw diagonal is not NaN")
        check((m["tx_bw"][off] > 0).all(), f"a tx_bw pair is not > 0:\n{m['tx_bw']}")
        check((m["tx_msgs"][off] > 0).all(), f"a tx_msgs pair is 0:\n{m['tx_msgs']}")
        size = int(run.attrs["size"])
        check((m["tx_bytes"] == m["tx_msgs"] * size).all(), "tx_bytes != tx_msgs * size")
        if a.op in ("write_imm", "send"):
            check((m["rx_bw"][off] > 0).all(), f"an rx_bw pair is not > 0:\n{m['rx_bw']}")
            check((m["rx_msgs"][off] > 0).all(), f"an rx_msgs pair is 0:\n{m['rx_msgs']}")
            # nothing lost: every message a sender saw complete was received
            check((m["rx_total"] == m["tx_total"]).all(),
                  f"rx_total differs from tx_total:\n{m['tx_total']}\n{m['rx_total']}")
        else:
            check(np.isnan(m["rx_bw"]).all(), f"rx_bw is measured for one-sided {a.op}:\n{m['rx_bw']}")
        check((m["flags"] == 0).all(), f"failed pairs:\n{m['flags']}")
        check(len(run["events"]) == 0, f"events: {list(run['events'].asstr()[:])}")
        if a.verify:
            check(int(run.attrs["verify"]) == 1, "run was not verified")
            check((m["verify_errors"] == 0).all(), f"verify errors:\n{m['verify_errors']}")
        if a.iters is not None:
            check((m["tx_msgs"][off] == a.iters).all(), f"tx_msgs is not {a.iters} per pair:\n{m['tx_msgs']}")
            if a.op in ("write_imm", "send"):
                check((m["rx_msgs"][off] == a.iters).all(), f"rx_msgs is not {a.iters} per pair:\n{m['rx_msgs']}")

    if errors:
        for e in errors:
            print(f"check_results: {a.file}: {e}", file=sys.stderr)
        return 1
    print(f"check_results: {a.file}: ok ({n} ranks, {n * (n - 1)} pairs, op {a.op})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
