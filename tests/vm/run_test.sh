#!/usr/bin/env bash
# On the host: one VM test. Runs TEST.sh in the SoftRoCE VM (a session's, with --attach DIR, or
# a VM of its own), then runs the file checks it queued (tests/vm/lib.sh `later`) inside HOSTDIR,
# here, where Python starts in a fraction of a second instead of seconds under TCG
# (tests/vm/run_checks.py). Fails when the VM test failed, when a check failed, or when the VM
# test did not reach its end (no end marker: some checks may never have been queued).
#
# One rerun, loud: rxe under TCG emulation can fail an RC connection on a path nothing shaped
# (its transport retries run out when the emulated CPUs fall behind), which is the emulator's
# failure, not rdmamesh's. A test that failed and met such a transport failure runs once more;
# the log says so in one `RERUN` line, the line goes to RERUNS_FILE (tools/check counts them),
# and a second failure fails the test. A test that failed without one is not rerun.
#   run_test.sh HOSTDIR [tools/softroce-vm OPTIONS] -- TEST.sh BUILD/rdmamesh
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
hostdir=${1:?usage: run_test.sh HOSTDIR [softroce-vm options] -- TEST.sh BUILD/rdmamesh}
shift
name=vm.$(basename "$hostdir" | sed 's/^vm-//')
reruns_file=${RERUNS_FILE:-$(dirname "$hostdir")/reruns.log}
# what a transport failure looks like in a test's log: a completion status, or rdmamesh's line
transport='transport retry counter exceeded|remote invalid request|RDMA retries to .* ran out|RDMA paths? to .* failed'

# stamp: the test's seconds so far after each case's "== " line, where CI's minutes go (the log
# only, never a verdict)
stamp() {
  local line t0=$SECONDS
  while IFS= read -r line; do
    [[ "$line" == "== "* ]] && line+="  [at $((SECONDS - t0)) s]"
    printf '%s\n' "$line"
  done
}

attempt() {
  rm -rf "$hostdir" && mkdir -p "$hostdir" || exit 2
  hostdir=$(cd "$hostdir" && pwd)
  local start=$SECONDS rc checks
  "$root/tools/softroce-vm" "$@" "$hostdir" 2>&1 | stamp | tee "$hostdir.log"
  rc=${PIPESTATUS[0]}
  echo "host: the VM part took $((SECONDS - start)) s"
  start=$SECONDS
  "$here/run_checks.py" "$hostdir" "$root"
  checks=$?
  [ "$checks" = 3 ] && echo "FAIL the VM test did not reach its end (exit $rc)"
  # for the log only (where CI's minutes go), never a verdict
  echo "host: the file checks took $((SECONDS - start)) s; the VM test exited $rc"
  [ "$rc" = 0 ] && [ "$checks" = 0 ]
}

rm -rf "$hostdir.first" "$hostdir.first.log"  # an earlier invocation's, not this one's
attempt "$@" && exit 0
why=$(grep -m1 -E "$transport" "$hostdir.log" | cut -c1-240)
[ -n "$why" ] || exit 1
rm -rf "$hostdir.first" && mv "$hostdir" "$hostdir.first" && mv "$hostdir.log" "$hostdir.first.log"
echo "RERUN $name: it failed and met a transport failure ($why); running it once more (first attempt kept in $hostdir.first)"
echo "$name: $why" >>"$reruns_file"
attempt "$@"
