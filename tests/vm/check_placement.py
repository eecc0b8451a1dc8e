#!/usr/bin/python3
"""Compare what rdmamesh recorded about each rank's placement with what the kernel said while
the ranks ran (samples of /proc/PID/status taken from outside). Exit 1 naming each mismatch."""
import argparse
import sys

import h5py


def expand(cpus):
    out = set()
    for part in cpus.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.update(range(int(a), int(b) + 1))
        elif part:
            out.add(int(part))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("samples", help="lines 'PID CPU-LIST', the last one per PID counts")
    ap.add_argument("--bound-by", required=True, help="expected /ranks/bound_by of every rank")
    ap.add_argument("--distinct", action="store_true", help="no two ranks may share a CPU")
    a = ap.parse_args()
    seen = {}
    for line in open(a.samples):
        pid, cpus = line.split()
        seen[int(pid)] = expand(cpus)
    errors = []
    with h5py.File(a.file, "r") as f:
        r = f["ranks"]
        pids, cpus, bound = r["pid"][()], r["cpus"].asstr()[:], r["bound_by"].asstr()[:]
        cores, pus = r["core"][()], r["pu"][()]
        for rank, pid in enumerate(pids):
            recorded = expand(cpus[rank])
            if int(pid) not in seen:
                errors.append(f"rank {rank} (pid {pid}) was never seen running")
            elif seen[int(pid)] != recorded:
                errors.append(f"rank {rank}: recorded CPUs {sorted(recorded)}, the kernel had {sorted(seen[int(pid)])}")
            if bound[rank] != a.bound_by:
                errors.append(f"rank {rank}: bound by {bound[rank]}, expected {a.bound_by}")
            if a.bound_by == "rdmamesh" and (cores[rank] < 0 or recorded != {int(pus[rank])}):
                errors.append(f"rank {rank}: pinned by rdmamesh but core {cores[rank]} pu {pus[rank]} cpus {cpus[rank]}")
        if a.distinct:
            sets = [expand(c) for c in cpus]
            for i in range(len(sets)):
                for j in range(i + 1, len(sets)):
                    if sets[i] & sets[j]:
                        errors.append(f"ranks {i} and {j} share CPUs {sorted(sets[i] & sets[j])}")
    for e in errors:
        print(f"check_placement: {e}", file=sys.stderr)
    if not errors:
        print(f"check_placement: {len(pids)} ranks, recorded placement matches the kernel's affinity")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
