#!/usr/bin/env bash
# rdmamesh-sim refuses a shape it cannot draw: exit 2, one line naming the flag and its bound,
# never a hang or a row of NaN. The only clock is the hang bound.
set -uo pipefail
sim=${1:?usage: sim_cli_test.sh BUILD/rdmamesh-sim}
fails=0
hang_bound=120
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# refused NAME PATTERN -- ARGS...: exit 2 and one stderr line matching PATTERN, nothing on stdout
refused() {
  local name=$1 pattern=$2
  shift 3
  timeout "$hang_bound" "$sim" simulate "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" != 2 ] || [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -qE -- "^rdmamesh-sim: .*$pattern" "$tmp/err" ||
    [ -s "$tmp/out" ]; then
    echo "FAIL $name: exit $rc"; sed 's/^/    /' "$tmp/err" "$tmp/out" | head -5; fails=$((fails + 1)); return
  fi
  echo "ok   $name"
}

refused "one node"              "--nodes: .*range 2"              -- --nodes 1 --jobs 3
refused "no rank on a node"     "--per-node: .*range 1"           -- --per-node 0 --jobs 3
refused "a NIC without a rank"  "--rails 3 needs --per-node 3"    -- --nodes 3 --per-node 2 --rails 3 --jobs 3
refused "a leaf without a node" "--leaves 5 is more than --nodes 4" -- --nodes 4 --leaves 5 --jobs 3
refused "no job"                "--jobs: .*range 1"               -- --jobs 0
refused "a spread of no round"  "--partners: .*range 1"           -- --pattern spread --partners 0 --jobs 3
refused "an unknown flag"       "--bogus.*simulate --help"        -- --bogus

# a shape it can draw: one row of figures, no NaN
out=$(timeout "$hang_bound" "$sim" simulate --nodes 3 --per-node 2 --jobs 20 --seed 3)
if grep -qE "^ +3 +2 +1 +0 +mesh +emulator +none +20 \|" <<<"$out" && ! grep -qi nan <<<"$out"; then
  echo "ok   a 3 x 2 row"
else
  echo "FAIL a 3 x 2 row: $out"; fails=$((fails + 1))
fi
echo "sim_cli_test: $fails failure(s)"
[ "$fails" = 0 ]
