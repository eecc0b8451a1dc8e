#!/usr/bin/env bash
# Inside the SoftRoCE VM (2 vCPUs): each rank's recorded core and CPUs match the affinity the
# kernel reports for its process; a launcher's binding is kept and recorded as such; CPU
# sharing is warned about once; --scaling yields one point per active-ranks-per-node count.
source "$(dirname "$0")/lib.sh"

# run NAME SAMPLES -- MPIRUN ARGS: run rdmamesh, sampling every rank's affinity while it runs
sampled() {
  local name=$1 samples=$2
  shift 3
  : >"$samples"
  mpirun "$@" -o "$tmp/$name.h5" >"$tmp/$name.txt" 2>&1 &
  local job=$!
  while kill -0 "$job" 2>/dev/null; do
    # from the header on: every rank has placed itself by then (a sample from before a rank
    # pinned itself, the only one of rank 0 when a loaded machine slowed this loop, is no
    # contradiction of what it recorded); -D 2 leaves a loaded machine's slow loop time to
    # see every rank after it
    grep -q '^# rank ' "$tmp/$name.txt" 2>/dev/null || { sleep 0.1; continue; }
    for pid in $(pgrep -x rdmamesh); do
      c=$(awk '/^Cpus_allowed_list/ {print $2}' "/proc/$pid/status" 2>/dev/null) && [ -n "$c" ] && echo "$pid $c" >>"$samples"
    done
    sleep 0.2
  done
  wait "$job" || { cat "$tmp/$name.txt"; fail "$name: rdmamesh exited non-zero"; return 1; }
}

# more ranks than vCPUs: mpirun leaves them unbound, rdmamesh pins them, and says they share
sampled four "$tmp/four.samples" -- -np 4 "$bin" -s 16K -D 2 --warmup 0.3
later "four: placement" "$here/check_placement.py" "$tmp/four.h5" "$tmp/four.samples" --bound-by rdmamesh
[ "$(grep -c 'rdmamesh: warning: on softroce-vm, ranks are pinned to shared CPUs' "$tmp/four.txt")" = 1 ] ||
  fail "four: no single warning about shared CPUs"
[ "$(grep -c '^# rank .* bound by rdmamesh' "$tmp/four.txt")" = 4 ] || fail "four: header lacks the 4 placement lines"

# as many ranks as vCPUs under mpirun's own --bind-to core: kept, and recorded as the launcher's
sampled two "$tmp/two.samples" -- -np 2 --bind-to core "$bin" -s 16K -D 2 --warmup 0.3
later "two: placement" "$here/check_placement.py" "$tmp/two.h5" "$tmp/two.samples" --bound-by launcher --distinct

# the launcher binds nothing: rdmamesh pins one rank per core
sampled own "$tmp/own.samples" -- -np 2 --bind-to none "$bin" -s 16K -D 2 --warmup 0.3
later "own: placement" "$here/check_placement.py" "$tmp/own.h5" "$tmp/own.samples" --bound-by rdmamesh --distinct
grep -q "warning" "$tmp/own.txt" && fail "own: warned although no CPU is shared"

# --scaling: one point per active-ranks-per-node count (steps that leave one rank active are skipped)
# (3 ranks: the odd step; vm.slurm's scaling job runs 2 per node on 3 nodes)
for np in 3; do
  mpirun -np "$np" "$bin" --scaling -s 16K -D 0.5 --warmup 0.2 --pattern mesh,pairs -o "$tmp/scale$np.h5" >"$tmp/scale$np.txt" 2>&1 ||
    { cat "$tmp/scale$np.txt"; fail "scaling $np: exit"; continue; }
  later "scaling $np: results" "$here/check_scaling.py" steps "$tmp/scale$np.h5" "$np"
  grep -q "# scaling: 2 rank(s) per node active" "$tmp/scale$np.txt" || fail "scaling $np: console line"
done

# analysis draws the curve from the file; the points it prints are the file's
later "plot_scaling: the curve and its printed points" "$here/check_scaling.py" plot "$tmp/scale3.h5"
finish
