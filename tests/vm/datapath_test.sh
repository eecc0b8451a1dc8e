#!/usr/bin/env bash
# Inside the SoftRoCE VM: the data-path options, each verified end to end: post lists, CQ
# moderation, inline off, several QPs per peer, depth 1, edge sizes, a sweep, a duration run
# with contention, and -b pairs.
source "$(dirname "$0")/lib.sh"

mesh postlist 3 "--op write_imm --sizes 64 --iters 1000 --verify" -- -s 64 -n 1000 -l 16 -Q 16 --verify
mesh modq 3 "--op write --sizes 256 --iters 700 --verify" -- --op write -s 256 -n 700 -Q 7 -q 3 --verify
mesh noinline 2 "--op send --sizes 64 --iters 500 --verify" -- --op send -s 64 -n 500 -I 0 --verify
mesh lanes 4 "--op send --sizes 8192 --iters 301 --verify" -- --op send -s 8K -n 301 -q 4 --verify
mesh shallow 2 "--op write_imm --sizes 8192 --verify" -- -s 8K -D 1 --warmup 0.2 -t 1 -r 1 --verify
mesh tiny 2 "--op write_imm --sizes 1 --iters 2000 --verify" -- -s 1 -n 2000 --verify
mesh big 2 "--op read --sizes 1048576 --iters 40 --verify" -- --op read -s 1M -n 40 --verify
mesh sweep 3 "--op write_imm --sizes 2,64,4096,65536,1048576 --iters 30 --verify" -- --sizes 2,64,4K,64K,1M -n 30 --verify
mesh contention 4 "--op write --patterns mesh,pairs --sizes 16384 --verify" -- --op write --pattern mesh,pairs -s 16K -D 1 --warmup 0.3 --verify
grep -q "# contention at 16384 B: mesh / pairs" "$tmp/contention.txt" || fail "contention: no contention line"
# one-way rounds under -D: a rank that only receives measures the whole interval too
mesh durpairs 2 "--op write_imm --patterns pairs --sizes 4096 --verify" -- --pattern pairs -s 4K -D 1 --warmup 0.2 --verify
# -D 2: on a starved CPU a 0.5 s interval can end before one 100-WR moderation group completes
mesh dursend 3 "--op send --patterns incast --sizes 4096 --verify" -- --op send --pattern incast -s 4K -D 2 --warmup 0.2 --verify
mesh bidir 4 "--op write_imm --patterns pairs --sizes 4096 --iters 200 --verify" -- --pattern pairs -b -s 4K -n 200 --verify
finish
