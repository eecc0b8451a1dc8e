# Shared by the in-VM tests: run a mesh, keep its console output, check its results file.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${1:?usage: TEST.sh BUILD/rdmamesh}
tmp=$(mktemp -d)
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# mesh NAME NP CHECK_ARGS -- RDMAMESH_ARGS...: runs, requires exit 0 and a clean results file
mesh() {
  local name=$1 np=$2 checks=$3
  shift 4
  echo "== $name: mpirun -np $np rdmamesh $* -o $tmp/$name.h5"
  if ! mpirun -np "$np" "$bin" "$@" -o "$tmp/$name.h5" >"$tmp/$name.txt" 2>&1; then
    cat "$tmp/$name.txt"; fail "$name: rdmamesh exited non-zero"; return 1
  fi
  cat "$tmp/$name.txt"
  grep -qE "^# setup \[s\] median/max over ranks: placement .* barrier .*; slowest rank [0-9]+ \(" "$tmp/$name.txt" &&
    grep -qE "^# resources: per rank up to [0-9]+ QPs, [0-9]+ CQ entries" "$tmp/$name.txt" ||
    { fail "$name: the header lacks the setup or resources line"; return 1; }
  # shellcheck disable=SC2086
  "$here/check_results.py" "$tmp/$name.h5" --ranks "$np" $checks || { fail "$name: results file"; return 1; }
}

# rank_pid R: the process id of MPI rank R of the running job
rank_pid() {
  local p
  for p in $(pgrep -x rdmamesh); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && echo "$p"
  done
  return 0
}

finish() {
  rm -rf "$tmp"
  [ "$fails" = 0 ] && echo "all cases passed" || echo "$fails case(s) failed"
  exit $((fails > 0))
}
