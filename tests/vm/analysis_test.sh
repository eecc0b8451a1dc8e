#!/usr/bin/env bash
# Inside the SoftRoCE VM: analysis/report and analysis/compare on files rdmamesh wrote here. A
# rank that holds back every send (RDMAMESH_FAULT=slow:2:*) opens the report's verdict and the
# comparison against a clean run; every number in summary.md and compare.md is computed again
# from the files; report.html is self-contained.
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
analysis=$here/../../analysis
check=$here/check_report.py
# --slow 60: far from the injected 30 % and from the VM's own noise between pairs
args=(--pattern mesh,pairs --sizes 4K,64K -D 1.5 --warmup 0.3 --slow 60)

mesh clean 4 "--op write_imm --patterns mesh,pairs --sizes 4096,65536" -- "${args[@]}"
echo "== slow: RDMAMESH_FAULT=slow:2:*:30 mpirun -np 4 rdmamesh ${args[*]} --retest"
RDMAMESH_FAULT='slow:2:*:30' mpirun -np 4 -x RDMAMESH_FAULT "$bin" "${args[@]}" --retest -o "$tmp/slow.h5" >"$tmp/slow.txt" 2>&1 ||
  { cat "$tmp/slow.txt"; fail "slow: rdmamesh exited non-zero"; }
mesh lat 3 "--op write_imm --mode lat --patterns pairs --sizes 8,4096" -- --mode lat --sizes 8,4K -n 200
# bandwidth over time: the default 0.5 s slots tile every interval and add up to its bytes; off is off
"$check" series "$tmp/clean.h5" 0.5 || fail "series: clean.h5"
"$check" series "$tmp/slow.h5" 0.5 || fail "series: slow.h5"
mesh flat 2 "--op write --patterns pairs --sizes 4096" -- --op write --pattern pairs -s 4K -D 1 --warmup 0.2 --interval 0
"$check" series "$tmp/flat.h5" 0 || fail "series: --interval 0"
mesh fine 3 "--op send --patterns mesh --sizes 65536" -- --op send -s 64K -D 1.1 --warmup 0.2 --interval 0.25
"$check" series "$tmp/fine.h5" 0.25 || fail "series: --interval 0.25 over 1.1 s"

for f in clean slow lat; do
  "$analysis/report" "$tmp/$f.h5" -o "$tmp/$f-report" >"$tmp/$f-report.txt" 2>&1 || { cat "$tmp/$f-report.txt"; fail "report $f: exit"; }
done
cat "$tmp/slow-report.txt"
"$check" report "$tmp/slow.h5" "$tmp/slow-report" --slow-rank 2 || fail "report slow: summary.md or report.html"
"$check" report "$tmp/clean.h5" "$tmp/clean-report" || fail "report clean: summary.md or report.html"
"$check" report "$tmp/lat.h5" "$tmp/lat-report" || fail "report lat: summary.md or report.html"
# the verdict is on the console too, rank 2 first
sed -n '/^## Verdict/,/^report:/p' "$tmp/slow-report.txt" | grep -qE '^- rank 2 \(softroce-vm, rxe0\): slow in [234] of 4' ||
  fail "report slow: the console verdict does not name rank 2"
# --retest ran rank 2's slow sends alone beside control pairs: they stay slow
sed -n '/^## Verdict/,/^report:/p' "$tmp/slow-report.txt" | grep -qE '^- link rank 2 \(softroce-vm, rxe0\) -> rank [013] .*: still slow alone \(its link or NIC\)' ||
  fail "report slow: no retest verdict says rank 2's sends are still slow alone"
ls "$tmp/slow-report"/heatmap-*.png "$tmp/slow-report"/sweep-mesh.png "$tmp/lat-report/latency.png" >/dev/null ||
  fail "report: a figure is missing"

# --threshold 40: a pair that moved less than that against the median pair's change is noise here
"$analysis/compare" "$tmp/clean.h5" "$tmp/slow.h5" -o "$tmp/cmp" --threshold 40 >"$tmp/cmp.txt" 2>&1 ||
  { cat "$tmp/cmp.txt"; fail "compare: exit"; }
cat "$tmp/cmp.txt"
"$check" compare "$tmp/clean.h5" "$tmp/slow.h5" "$tmp/cmp" --slow-rank 2 || fail "compare: compare.md"
# bad input: one line naming the problem, exit non-zero
out=$("$analysis/compare" "$tmp/clean.h5" "$tmp/lat.h5" -o "$tmp/cmp2" 2>&1) && fail "compare 4 vs 3 ranks: exit 0"
[ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "4 and 3 ranks" || fail "compare 4 vs 3 ranks: $out"
out=$("$analysis/report" "$tmp/nosuch.h5" 2>&1) && fail "report of a missing file: exit 0"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "report of a missing file: $out"
finish
