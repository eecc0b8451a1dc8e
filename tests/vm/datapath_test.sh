#!/usr/bin/env bash
# Inside the SoftRoCE VM: the data-path options, each verified end to end: post lists, CQ
# moderation, inline off, several QPs per peer, depth 1, edge sizes, a sweep, a duration run
# with contention, and -b pairs.
source "$(dirname "$0")/lib.sh"

# (cases share a launch where one proves both: a launch costs seconds under TCG)
# post lists, and 1-byte messages through them (the smallest slot, rotated 2000 times)
mesh postlist 3 "--op write_imm --sizes 1,64 --iters 2000 --verify" -- --sizes 1,64 -n 2000 -l 16 -Q 16 --verify
mesh modq 3 "--op write --sizes 256 --iters 700 --verify" -- --op write -s 256 -n 700 -Q 7 -q 3 --verify
# inline off and 4 QPs per peer, small and large SEND
mesh lanes 4 "--op send --sizes 64,8192 --iters 301 --verify" -- --op send --sizes 64,8K -n 301 -q 4 -I 0 --verify
mesh shallow 2 "--op write_imm --sizes 8192 --verify" -- -s 8K -D 1 --warmup 0.2 -t 1 -r 1 --verify
# a sweep up to 1 MiB with /sweeps, by READ (the reader checks every byte it fetched)
mesh sweep 3 "--op read --sizes 2,64,4096,65536,1048576 --iters 30 --verify" -- --op read --sizes 2,64,4K,64K,1M -n 30 --verify
# contention of mesh vs pairs (and shift: every single-node pattern reads healthy under -D);
# in the pairs rounds under -D, a rank that only receives measures the whole interval too
mesh contention 4 "--op write_imm --patterns mesh,pairs,shift --sizes 16384 --verify" -- --pattern mesh,pairs,shift -s 16K -D 0.4 \
  --warmup 0.1 --verify
grep -q "# contention at 16384 B: mesh / pairs" "$tmp/contention.txt" || fail "contention: no contention line"
# -D 1: on a starved CPU a 0.5 s interval can end before one 100-WR moderation group completes
mesh dursend 3 "--op send --patterns incast --sizes 4096 --verify" -- --op send --pattern incast -s 4K -D 1 --warmup 0.2 --verify
mesh bidir 4 "--op write_imm --patterns pairs --sizes 4096 --iters 200 --verify" -- --pattern pairs -b -s 4K -n 200 --verify
finish
