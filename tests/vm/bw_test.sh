#!/usr/bin/env bash
# Inside the SoftRoCE VM: --mode bw, every op x every pattern on 4 ranks, verified. Each pair
# measured, nothing lost, exact counts, contention and incast shares present. (2 ranks run in
# vm.mesh and vm.datapath; a launch costs seconds under TCG.)
source "$(dirname "$0")/lib.sh"

pats=mesh,shift,pairs,incast
for op in write_imm write send read; do
  mesh "bw-$op-4" 4 "--op $op --patterns $pats --sizes 4096 --iters 100 --verify" -- \
    --op "$op" --pattern "$pats" -s 4K -n 100 --verify
done
finish
