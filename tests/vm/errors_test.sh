#!/usr/bin/env bash
# Inside the SoftRoCE VM: errors that need a real device, each one clear line, exit 2, fast.
source "$(dirname "$0")/lib.sh"

bad() {
  local name=$1 pattern=$2
  shift 3
  local start=$SECONDS
  timeout 30 mpirun "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$? took=$((SECONDS - start))
  if [ "$rc" != 2 ]; then fail "$name: exit $rc, expected 2"; cat "$tmp/err"; return; fi
  [ "$(grep -c '^rdmamesh: error:' "$tmp/err")" = 1 ] || { fail "$name: not exactly one error line"; cat "$tmp/err"; return; }
  grep -qE -- "$pattern" "$tmp/err" || { fail "$name: error lacks /$pattern/"; cat "$tmp/err"; return; }
  [ "$took" -le 10 ] || { fail "$name: took ${took}s"; return; }
  echo "ok   $name (${took}s): $(grep '^rdmamesh: error:' "$tmp/err")"
}

bad "unknown device"  "'nosuch0' not found; pick one of rxe0 with -d/--ib-dev"  -- -np 2 "$bin" -d nosuch0
bad "missing port"    "rxe0 has no port 2"                                     -- -np 2 "$bin" -d rxe0 -i 2
bad "gid index"       "GID index 9 is not a valid entry of rxe0 port 1"        -- -np 2 "$bin" -x 9
bad "depth too big"   "--tx-depth 2000000 exceeds rxe0's max_qp_wr"            -- -np 2 "$bin" -t 2000000
bad "options differ"  "--op is 'write' on this rank but 'write_imm' on rank 0" -- -np 1 "$bin" : -np 1 "$bin" --op write
finish
