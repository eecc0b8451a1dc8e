#!/usr/bin/env bash
# Inside the SoftRoCE VM: --mode bw, every op x every pattern, on 2 and 4 ranks, verified.
# Each pair measured, nothing lost, exact counts, contention and incast shares present.
source "$(dirname "$0")/lib.sh"

pats=mesh,shift,pairs,incast
for np in 2 4; do
  for op in write_imm write send read; do
    mesh "bw-$op-$np" "$np" "--op $op --patterns $pats --sizes 4096 --iters 100 --verify" -- \
      --op "$op" --pattern "$pats" -s 4K -n 100 --verify
  done
done
finish
