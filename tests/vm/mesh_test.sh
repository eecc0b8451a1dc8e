#!/usr/bin/env bash
# Inside the SoftRoCE VM: a 4-rank write_imm mesh with --verify (2 ranks run in vm.datapath and
# vm.placement); every off-diagonal pair moved messages on both sides, nothing lost, the
# console shows a 12-pair matrix;
# a rank stalled through its whole window is named, on the console and in analysis/report's
# verdict, and measures 0 s.
source "$(dirname "$0")/lib.sh"

mesh mesh4 4 "--op write_imm --sizes 65536 --verify" -- -s 64K -D 1 --warmup 0.3 --verify
grep -qE "^ +mesh +65536 +1 +12 " "$tmp/mesh4.txt" || fail "mesh4: console lacks the 12-pair row"
grep -q "# mesh send bandwidth \[Gb/s\]" "$tmp/mesh4.txt" || fail "mesh4: console lacks the matrix title"
rows=$(grep -cE '^ +[0-3]( +([0-9]+\.[0-9]+|-)){4}$' "$tmp/mesh4.txt")
[ "$rows" = 4 ] || fail "mesh4: matrix has $rows rows of 4 columns, expected 4"
grep -q "# verify: ok" "$tmp/mesh4.txt" || fail "mesh4: verify did not report ok"

# a rank with no CPU for its whole window (RDMAMESH_FAULT=stall:2 sleeps through it): the
# console names it, its figures are NaN over 0 s, every other rank's are measured
echo "== stall3: RDMAMESH_FAULT=stall:2 mpirun -np 3 rdmamesh -s 4K -D 1 --warmup 0.3 --interval 0.25"
if RDMAMESH_FAULT=stall:2 mpirun -np 3 -x RDMAMESH_FAULT "$bin" -s 4K -D 1 --warmup 0.3 --interval 0.25 \
  -o "$tmp/stall3.h5" >"$tmp/stall3.txt" 2>&1; then
  cat "$tmp/stall3.txt"
  grep -qE "^# short window: rank 2 \(.*\) measured 0 s of the 1 s interval .* its figures are NaN$" "$tmp/stall3.txt" ||
    fail "stall3: no short-window line naming rank 2 at 0 s"
  [ "$(grep -c "^# short window:" "$tmp/stall3.txt")" = 1 ] || fail "stall3: a short-window line for another rank"
  later "stall3: results file" "$here/check_results.py" "$tmp/stall3.h5" --ranks 3 --op write_imm --sizes 4096 --stalled 2
  # the report's verdict, read months later without the console, says it too
  later "stall3: analysis/report" "$root/analysis/report" "$tmp/stall3.h5" -o stall3-report
  later "stall3: the report names rank 2's 0 s window" "$here/check_report.py" report "$tmp/stall3.h5" stall3-report \
    --short-rank 2
else
  cat "$tmp/stall3.txt"; fail "stall3: rdmamesh exited non-zero"
fi
finish
