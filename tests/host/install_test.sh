#!/usr/bin/env bash
# cmake --install of a built tree into a fresh prefix: the binaries, the node check and the recheck on bin/,
# the Slurm jobs and analysis/ under share/rdmamesh, each runnable from there (the installed jobs
# find the installed analysis/ without a checkout).
#   tests/host/install_test.sh BUILD_DIR
set -uo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
cmake --install "$build" --prefix "$prefix" >/dev/null || { echo "FAIL cmake --install $build"; exit 1; }
for f in bin/rdmamesh bin/rdmamesh-sim bin/rdmamesh-node-check bin/rdmamesh-recheck share/rdmamesh/jobs/healthcheck.sbatch \
  share/rdmamesh/jobs/mesh.sbatch share/rdmamesh/jobs/scaling.sbatch share/rdmamesh/jobs/common.sh \
  share/rdmamesh/jobs/nhc/rdmamesh.nhc share/rdmamesh/analysis/report share/rdmamesh/analysis/history \
  share/rdmamesh/analysis/exporter share/rdmamesh/tools/export-runs; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done
# every library path a binary carries is absolute, built or installed: an empty or relative
# entry makes the loader search the directory a rank starts in (CMake's build tree once had one)
for f in "$build/rdmamesh" "$build/rdmamesh-sim" "$prefix/bin/rdmamesh" "$prefix/bin/rdmamesh-sim"; do
  path=$(readelf -d "$f" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]$/\1/p')
  bad=0
  [[ -n $path && ($path == :* || $path == *: || $path == *::*) ]] && bad=1
  for entry in ${path//:/ }; do [[ $entry == /* ]] || bad=1; done
  [ "$bad" = 0 ] || fail "${f#"$prefix"/}: a library path that is not absolute: '$path'"
done
# (grep reads the whole output: under pipefail, grep -q quitting early can end the writer with
# SIGPIPE and fail the pipeline, as an ASan build's --help did in CI)
grep -q -- "--pattern" <<<"$("$prefix/bin/rdmamesh" --help)" || fail "the installed rdmamesh --help"
grep -qE "^ +3 +2 +1" <<<"$("$prefix/bin/rdmamesh-sim" simulate --jobs 5 --nodes 3 --per-node 2)" ||
  fail "the installed rdmamesh-sim simulate"
grep -q ingest <<<"$("$prefix/share/rdmamesh/analysis/history" --help)" || fail "the installed analysis/history --help"
# the installed analysis judges compare's ratios with the installed rdmamesh-sim, found without a
# checkout, PATH or RDMAMESH_SIM: node 1's sends to the other nodes at half, and only node 1 named
got=$(cd /tmp && env -u RDMAMESH_SIM PATH=/usr/bin:/bin python3 -c "
import os, sys
sys.path.insert(0, '$prefix/share/rdmamesh/analysis')
import numpy as np
from rdmamesh_analysis import finder
print(os.path.realpath(finder.simulator()))
n, nodes = 6, np.repeat(np.arange(3), 2)
v = 1 + 0.01 * (np.arange(n * n).reshape(n, n) % 3)
v[2:4, :] *= 0.5
v[2, 3] *= 2
v[3, 2] *= 2
print(' '.join(f\"{c['kind']}:{c['node']}\" for c in finder.judge(v, ~np.eye(n, dtype=bool), nodes, np.zeros((n, n), int), 90)))
" 2>&1)
[ "$got" = "$(realpath "$prefix/bin/rdmamesh-sim")
node:1" ] || fail "the installed analysis' finder (rdmamesh-sim judge): $got"
# the installed jobs' common.sh finds the installed analysis/, not a checkout's
got=$(cd /tmp && RDMAMESH_BIN="$prefix/bin/rdmamesh" RDMAMESH_RESULTS="$prefix/results" \
  bash -c "source '$prefix/share/rdmamesh/jobs/common.sh' && echo \"\$rm_analysis\"")
[ "$got" = "$prefix/share/rdmamesh/analysis" ] || fail "the installed common.sh finds analysis/ at '$got'"
RDMAMESH_NODE=nodeX "$prefix/bin/rdmamesh-node-check" "$prefix/results" 24 || fail "the installed node check on no verdict"
grep -q "reference" <<<"$("$prefix/bin/rdmamesh-recheck" --help)" || fail "the installed rdmamesh-recheck --help"
# the site's settings file gives the jobs their defaults, the submitter's environment wins over
# it, and a dry run says what it would launch without launching (no Slurm, no MPI job here)
printf 'RDMAMESH_SIZES=1M\nRDMAMESH_DURATION=3\nRDMAMESH_LAUNCHER=mpirun\n' >"$prefix/site.conf"
got=$(cd /tmp && RDMAMESH_SITE="$prefix/site.conf" RDMAMESH_DURATION=7 RDMAMESH_DRY_RUN=1 RDMAMESH_BIN="$prefix/bin/rdmamesh" \
  RDMAMESH_RESULTS="$prefix/results" RDMAMESH_JOBS="$prefix/share/rdmamesh/jobs" \
  bash "$prefix/share/rdmamesh/jobs/healthcheck.sbatch" 2>&1)
rc=$?
grep -qE "dry run on .*: would run mpirun $prefix/bin/rdmamesh .*--sizes 1M -D 7 .*nothing run, nothing drained" <<<"$got" &&
  [ "$rc" = 0 ] || fail "the health job's dry run with a site file (exit $rc): $got"
# above RDMAMESH_SPREAD_ABOVE nodes (64 by default) the health job plays rounds of disjoint pairs,
# not the mesh, and says so; a count that is not one is refused by name
health_dry() {
  (cd /tmp && RDMAMESH_DRY_RUN=1 RDMAMESH_LAUNCHER=mpirun RDMAMESH_BIN="$prefix/bin/rdmamesh" \
    RDMAMESH_RESULTS="$prefix/results" RDMAMESH_JOBS="$prefix/share/rdmamesh/jobs" "$@" \
    bash "$prefix/share/rdmamesh/jobs/healthcheck.sbatch" 2>&1)
}
got=$(health_dry env SLURM_JOB_NUM_NODES=64)
grep -q "would run mpirun .* --pattern mesh " <<<"$got" && ! grep -q spread <<<"$got" ||
  fail "a 64-node health job's dry run: $got"
got=$(health_dry env SLURM_JOB_NUM_NODES=65 RDMAMESH_PARTNERS=6)
grep -q "65 nodes, above RDMAMESH_SPREAD_ABOVE=64: --pattern spread --partners 6" <<<"$got" &&
  grep -q "would run mpirun .* --pattern spread --partners 6 " <<<"$got" || fail "a 65-node health job's dry run: $got"
got=$(health_dry env SLURM_JOB_NUM_NODES=3 RDMAMESH_SPREAD_ABOVE=2)
grep -q "would run mpirun .* --pattern spread --partners 8 " <<<"$got" || fail "RDMAMESH_SPREAD_ABOVE=2 on 3 nodes: $got"
got=$(health_dry env RDMAMESH_SPREAD_ABOVE=many)
rc=$?
[ "$rc" = 2 ] && grep -q "RDMAMESH_SPREAD_ABOVE=many: a node count" <<<"$got" || fail "RDMAMESH_SPREAD_ABOVE=many (exit $rc): $got"
got=$(cd /tmp && RDMAMESH_SITE="$prefix/nope.conf" RDMAMESH_JOBS="$prefix/share/rdmamesh/jobs" \
  bash "$prefix/share/rdmamesh/jobs/mesh.sbatch" 2>&1)
rc=$?
[ "$rc" = 2 ] && grep -q "no site settings file at RDMAMESH_SITE=$prefix/nope.conf" <<<"$got" ||
  fail "a missing RDMAMESH_SITE file (exit $rc): $got"
echo "install: $prefix, $fails problem(s)"
[ "$fails" = 0 ]
