# shellcheck shell=bash disable=SC2034  # sourced by jobs/*.sbatch, which use the rm_* variables
# Shared by the rdmamesh batch jobs (sourced, not run). Every knob is an environment variable
# with a default; export it before sbatch (sbatch passes the environment on) or set it inline:
#   RDMAMESH_SIZES=64K,1M sbatch -N 8 jobs/mesh.sbatch
#
#   RDMAMESH_BIN       the binary (default: rdmamesh on PATH, else build/rdmamesh of the checkout)
#   RDMAMESH_RESULTS   results folder (default: results/ under the submit directory)
#   RDMAMESH_LAUNCHER  srun | mpirun | auto (default: srun --mpi=pmix when Slurm offers it)
#   RDMAMESH_BIND      launcher | rdmamesh (default launcher; see rm_launch)
#   RDMAMESH_ARGS      extra rdmamesh flags, appended last (e.g. "--op send -q 2", "--rails aligned")
#   RDMAMESH_NICS      all | mlx5_0,mlx5_3,...: test every NIC of each node (-d): the job runs as
#                      many ranks per node as the node has NICs (at least), one rank per NIC at
#                      least (default: unset, -d auto, the ranks per node the job asks for)
#   RDMAMESH_ANALYSIS  the folder whose report and plot_scaling.py the jobs call (default: the
#                      analysis/ beside this jobs/ folder, in a checkout or an install)
#   RDMAMESH_JOBS      this jobs/ folder, where the job cannot find it from the submit directory
#                      (an install: PREFIX/share/rdmamesh/jobs)
#   RDMAMESH_DRY_RUN   1: print what the job would launch, on which nodes, then stop (exit 0)
#   RDMAMESH_SITE      the site's settings file (default /etc/rdmamesh/site.conf): the knobs above
#                      as VAR=value lines (see jobs/site.conf.example), the site's defaults; what
#                      the submitter exports wins over them

# Site setup, as examples: the modules that provide Open MPI, rdma-core, hwloc and HDF5.
# module load openmpi/4.1 hdf5/1.10 hwloc/2.9
# module load python/3.11   # for the report: h5py, numpy, matplotlib

set -uo pipefail

# the site's defaults, under whatever the submitter set: the environment is restored over them
rm_site=${RDMAMESH_SITE:-/etc/rdmamesh/site.conf}
if [ -f "$rm_site" ]; then
  rm_env=$(for v in $(compgen -e | grep '^RDMAMESH_'); do declare -p "$v"; done)
  # shellcheck source=/dev/null
  source "$rm_site" || { echo "rdmamesh job: cannot read the site settings $rm_site (RDMAMESH_SITE)" >&2; exit 2; }
  eval "$rm_env"
elif [ -n "${RDMAMESH_SITE:-}" ]; then
  echo "rdmamesh job: no site settings file at RDMAMESH_SITE=$RDMAMESH_SITE" >&2
  exit 2
fi

# sbatch runs a copy of the script from its spool folder: find the checkout from where the job
# was submitted (the checkout root, or its jobs/ folder)
submit=${SLURM_SUBMIT_DIR:-$PWD}
if [ -f "$submit/jobs/common.sh" ]; then repo=$submit; elif [ -f "$submit/common.sh" ]; then repo=$(dirname "$submit"); else repo=$submit; fi

rm_bin=${RDMAMESH_BIN:-$(command -v rdmamesh || echo "$repo/build/rdmamesh")}
rm_results=${RDMAMESH_RESULTS:-$submit/results}
# analysis/ beside this file's jobs/ folder: the checkout's, or an install's share/rdmamesh/
rm_analysis=${RDMAMESH_ANALYSIS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/analysis}
rm_job=${SLURM_JOB_ID:-local-$$}
rm_out=$rm_results/rdmamesh-$rm_job.h5
read -r -a rm_extra <<<"${RDMAMESH_ARGS:-}"

rm_die() { echo "rdmamesh job: $*" >&2; exit 2; }
[ -x "$rm_bin" ] || rm_die "no rdmamesh binary at '$rm_bin': set RDMAMESH_BIN or put rdmamesh on PATH"
mkdir -p "$rm_results" || rm_die "cannot create the results folder '$rm_results' (set RDMAMESH_RESULTS)"

# srun --mpi=pmix when this Slurm has it (Debian's slurm-wlm ships pmix_v4, and Debian's Open MPI
# uses the same PMIx); otherwise mpirun, which reads the allocation from Slurm's environment.
rm_launcher=${RDMAMESH_LAUNCHER:-auto}
if [ "$rm_launcher" = auto ]; then
  if srun --mpi=list 2>&1 | grep -q pmix; then rm_launcher=srun; else rm_launcher=mpirun; fi
fi

# rm_launch RANKS_PER_NODE RDMAMESH_ARGS…: one rank per slot of every node in the allocation.
# Binding: with RDMAMESH_BIND=launcher (default) srun --cpu-bind=cores / mpirun --bind-to core
# pin the ranks and rdmamesh keeps that (/ranks/bound_by = launcher); with rdmamesh, the
# launcher binds nothing and rdmamesh pins each rank to a core near its NIC, on the NIC's NUMA
# node. The launcher wins whenever it binds: rdmamesh never overrides a binding it finds.
rm_launch() {
  local per_node=$1
  shift
  # several NICs per node: at least a rank per NIC, counted on this (the batch) node, which has
  # what every node has (rdmamesh refuses a job whose nodes differ, naming the node)
  if [ -n "${RDMAMESH_NICS:-}" ]; then
    local nics
    if [ "$RDMAMESH_NICS" = all ]; then
      # the devices with a port up: rdmamesh -d all uses those and refuses a DOWN one by name
      nics=$(ibv_devinfo 2>/dev/null | awk '/^hca_id:/ { dev = $2 } /state:/ && /PORT_ACTIVE/ { up[dev] = 1 }
        END { print length(up) }')
      [ "${nics:-0}" -gt 0 ] || nics=$(ibv_devices 2>/dev/null | awk 'NR > 2 && NF' | wc -l)
    else
      nics=$(tr ',' '\n' <<<"$RDMAMESH_NICS" | grep -c .)
    fi
    [ "$nics" -gt 0 ] || rm_die "RDMAMESH_NICS=$RDMAMESH_NICS: no RDMA device on $(hostname) (ibv_devices lists none)"
    [ "$per_node" -ge "$nics" ] || per_node=$nics
    # an allocation holds what it was given: a job of one task per node cannot start two
    [ -z "${SLURM_CPUS_ON_NODE:-}" ] || [ "$SLURM_CPUS_ON_NODE" -ge "$per_node" ] ||
      rm_die "RDMAMESH_NICS=$RDMAMESH_NICS: $(hostname) has $nics NICs, a rank each, and the job holds $SLURM_CPUS_ON_NODE CPU(s) a node: submit with sbatch --ntasks-per-node=$per_node (or --exclusive)"
    set -- -d "$RDMAMESH_NICS" "$@"
  fi
  local bind=${RDMAMESH_BIND:-launcher}
  case "$bind" in launcher | rdmamesh) ;; *) rm_die "RDMAMESH_BIND=$bind: use launcher or rdmamesh" ;; esac
  if [ "$rm_launcher" = srun ] && [ "$bind" = launcher ] &&
    ! scontrol show config 2>/dev/null | grep -Eq '^TaskPlugin .*(affinity|cgroup)'; then
    # srun --cpu-bind needs task/affinity or task/cgroup; without them it refuses to launch
    echo "rdmamesh job $rm_job: this Slurm cannot bind CPUs (TaskPlugin has no affinity or cgroup): rdmamesh binds instead"
    bind=rdmamesh
  fi
  echo "rdmamesh job $rm_job: $rm_launcher, ${SLURM_JOB_NUM_NODES:-1} node(s) x $per_node, binding by $bind, $*"
  if [ "${RDMAMESH_DRY_RUN:-0}" = 1 ]; then
    local nodes=${SLURM_JOB_NODELIST:-$(hostname -s)}
    echo "rdmamesh job $rm_job: dry run on $nodes: would run $rm_launcher $rm_bin $* ${rm_extra[*]}; nothing run, nothing drained"
    exit 0
  fi
  if [ "$rm_launcher" = srun ]; then
    local cpu=cores
    [ "$bind" = rdmamesh ] && cpu=none
    srun --mpi=pmix --ntasks=$((${SLURM_JOB_NUM_NODES:-1} * per_node)) --ntasks-per-node="$per_node" --cpu-bind="$cpu" "$rm_bin" "$@" "${rm_extra[@]}"
  else
    local to=core
    [ "$bind" = rdmamesh ] && to=none
    mpirun --map-by "ppr:$per_node:node" --bind-to "$to" "$rm_bin" "$@" "${rm_extra[@]}"
  fi
}
