#!/usr/bin/env bash
# Inside the SoftRoCE VM: 2- and 4-rank write_imm meshes with --verify; every off-diagonal
# pair moved messages on both sides, nothing lost, the 4-rank console shows a 12-pair matrix.
source "$(dirname "$0")/lib.sh"

mesh mesh2 2 "--op write_imm --sizes 65536 --verify" -- -s 64K -D 1 --warmup 0.5 --verify
grep -qE "^ +mesh +65536 +1 +2 " "$tmp/mesh2.txt" || fail "mesh2: console lacks the 2-pair row"

mesh mesh4 4 "--op write_imm --sizes 65536 --verify" -- -s 64K -D 2 --warmup 0.5 --verify
grep -qE "^ +mesh +65536 +1 +12 " "$tmp/mesh4.txt" || fail "mesh4: console lacks the 12-pair row"
grep -q "# mesh send bandwidth \[Gb/s\]" "$tmp/mesh4.txt" || fail "mesh4: console lacks the matrix title"
rows=$(grep -cE '^ +[0-3]( +([0-9]+\.[0-9]+|-)){4}$' "$tmp/mesh4.txt")
[ "$rows" = 4 ] || fail "mesh4: matrix has $rows rows of 4 columns, expected 4"
grep -q "# verify: ok" "$tmp/mesh4.txt" || fail "mesh4: verify did not report ok"
finish
