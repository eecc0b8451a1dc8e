#!/usr/bin/env bash
# Inside the SoftRoCE VM: --mode lat, every op x every pattern on 3 ranks (odd: every pairs
# round has a rank without a partner), verified. Every pair gets exactly -n samples,
# percentiles ordered, the latency definition stated.
source "$(dirname "$0")/lib.sh"

pats=pairs,mesh,shift,incast
for op in write write_imm send read; do
  mesh "lat-$op-3" 3 "--op $op --mode lat --patterns $pats --sizes 64 --iters 50 --verify" -- \
    --mode lat --op "$op" --pattern "$pats" -s 64 -n 50 --verify
done
grep -q "half the ping-pong round trip" "$tmp/lat-write-3.txt" || fail "lat: the console does not say what latency means"
grep -q "READ takes to complete" "$tmp/lat-read-3.txt" || fail "lat: the READ definition is not stated"
finish
