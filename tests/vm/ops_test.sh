#!/usr/bin/env bash
# Inside the SoftRoCE VM: one-sided WRITE, iterations mode, and edge message sizes, all verified.
source "$(dirname "$0")/lib.sh"

mesh write3 3 "--op write --verify" -- --op write -s 16K -D 1 --warmup 0.3 --verify
grep -q "receive bandwidth: not measurable with --op write" "$tmp/write3.txt" || fail "write3: rx not reported as unmeasurable"

mesh iters3 3 "--op write_imm --iters 300 --verify" -- -n 300 -s 4K --verify
mesh tiny2 2 "--op write_imm --size 1 --verify" -- -s 1 -n 2000 --verify
mesh big2 2 "--op write_imm --size 1048576 --verify" -- -s 1M -n 40 --verify
mesh shallow2 2 "--op write_imm --verify" -- -s 8K -D 1 --warmup 0.2 -t 1 -r 1 --verify
finish
