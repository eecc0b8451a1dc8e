#!/usr/bin/env bash
# cmake --install of a built tree into a fresh prefix: the binaries and the node check on bin/,
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
for f in bin/rdmamesh bin/rdmamesh-sim bin/rdmamesh-node-check share/rdmamesh/jobs/healthcheck.sbatch \
  share/rdmamesh/jobs/mesh.sbatch share/rdmamesh/jobs/scaling.sbatch share/rdmamesh/jobs/common.sh \
  share/rdmamesh/jobs/nhc/rdmamesh.nhc share/rdmamesh/analysis/report share/rdmamesh/analysis/history \
  share/rdmamesh/analysis/exporter share/rdmamesh/tools/export-runs; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done
"$prefix/bin/rdmamesh" --help | grep -q -- "--pattern" || fail "the installed rdmamesh --help"
"$prefix/bin/rdmamesh-sim" simulate --jobs 5 --nodes 3 --per-node 2 | grep -qE "^ +3 +2 +1" ||
  fail "the installed rdmamesh-sim simulate"
"$prefix/share/rdmamesh/analysis/history" --help | grep -q ingest || fail "the installed analysis/history --help"
# the installed jobs' common.sh finds the installed analysis/, not a checkout's
got=$(cd /tmp && RDMAMESH_BIN="$prefix/bin/rdmamesh" RDMAMESH_RESULTS="$prefix/results" \
  bash -c "source '$prefix/share/rdmamesh/jobs/common.sh' && echo \"\$rm_analysis\"")
[ "$got" = "$prefix/share/rdmamesh/analysis" ] || fail "the installed common.sh finds analysis/ at '$got'"
RDMAMESH_NODE=nodeX "$prefix/bin/rdmamesh-node-check" "$prefix/results" 24 || fail "the installed node check on no verdict"
echo "install: $prefix, $fails problem(s)"
[ "$fails" = 0 ]
