#!/usr/bin/env bash
# On the host: one VM test. Runs TEST.sh in the SoftRoCE VM (a session's, with --attach DIR, or
# a VM of its own), then runs the file checks it queued (tests/vm/lib.sh `later`) inside HOSTDIR,
# here, where Python starts in a fraction of a second instead of seconds under TCG
# (tests/vm/run_checks.py). Fails when the VM test failed, when a check failed, or when the VM
# test did not reach its end (no end marker: some checks may never have been queued).
#   run_test.sh HOSTDIR [tools/softroce-vm OPTIONS] -- TEST.sh BUILD/rdmamesh
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
hostdir=${1:?usage: run_test.sh HOSTDIR [softroce-vm options] -- TEST.sh BUILD/rdmamesh}
shift
rm -rf "$hostdir" && mkdir -p "$hostdir" || exit 2
hostdir=$(cd "$hostdir" && pwd)

start=$SECONDS
"$root/tools/softroce-vm" "$@" "$hostdir"
rc=$?
echo "host: the VM part took $((SECONDS - start)) s"

start=$SECONDS
"$here/run_checks.py" "$hostdir" "$root"
checks=$?
[ "$checks" = 3 ] && echo "FAIL the VM test did not reach its end (exit $rc)"
# for the log only (where CI's minutes go), never a verdict
echo "host: the file checks took $((SECONDS - start)) s; the VM test exited $rc"
[ "$rc" = 0 ] && [ "$checks" = 0 ]
