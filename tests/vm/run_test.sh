#!/usr/bin/env bash
# On the host: one VM test. Boots the SoftRoCE VM for TEST.sh, then runs the file checks it
# queued (tests/vm/lib.sh `later`) inside HOSTDIR, here, where Python starts in a fraction of a
# second instead of seconds under TCG. Fails when the VM test failed, when a check failed, or
# when the VM test did not reach its end (no end marker: some checks may never have been queued).
#   run_test.sh HOSTDIR [tools/softroce-vm OPTIONS] -- TEST.sh BUILD/rdmamesh
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
hostdir=${1:?usage: run_test.sh HOSTDIR [softroce-vm options] -- TEST.sh BUILD/rdmamesh}
shift
rm -rf "$hostdir" && mkdir -p "$hostdir" || exit 2
hostdir=$(cd "$hostdir" && pwd)

"$root/tools/softroce-vm" "$@" "$hostdir"
rc=$?

fails=0 n=0 ended=0
[ -f "$hostdir/checks" ] && while IFS= read -r line; do
  [ "$line" = "# end" ] && { ended=1; continue; }
  eval "args=($line)"
  msg=${args[0]} tool=${args[1]}
  case "$tool" in /*) ;; *) tool=$root/$tool ;; esac
  n=$((n + 1))
  (cd "$hostdir" && "$tool" "${args[@]:2}") || { echo "FAIL $msg"; fails=$((fails + 1)); }
done <"$hostdir/checks"
[ "$ended" = 1 ] || { echo "FAIL the VM test did not reach its end (exit $rc)"; fails=$((fails + 1)); }
echo "host: $n file check(s), $fails failed; the VM test exited $rc"
[ "$rc" = 0 ] && [ "$fails" = 0 ]
