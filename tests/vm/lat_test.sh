#!/usr/bin/env bash
# Inside the SoftRoCE VM: --mode lat, every op x every pattern, on 2 and 4 ranks, verified.
# Every pair gets exactly -n samples, percentiles ordered, the latency definition stated.
source "$(dirname "$0")/lib.sh"

pats=pairs,mesh,shift,incast
for np in 2 4; do
  for op in write write_imm send read; do
    mesh "lat-$op-$np" "$np" "--op $op --mode lat --patterns $pats --sizes 64 --iters 50 --verify" -- \
      --mode lat --op "$op" --pattern "$pats" -s 64 -n 50 --verify
  done
done
grep -q "half the ping-pong round trip" "$tmp/lat-write-2.txt" || fail "lat: the console does not say what latency means"
grep -q "READ takes to complete" "$tmp/lat-read-2.txt" || fail "lat: the READ definition is not stated"
finish
