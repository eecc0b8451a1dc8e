#!/usr/bin/env bash
# In the VM's Slurm jobs: the job's call of analysis/plot_scaling.py, deferred to the host (see
# ./report in this folder for why).   plot_scaling.py FILE -o PNG
set -euo pipefail
file=${1:?usage: plot_scaling.py FILE -o PNG}
[ "${2:-}" = -o ] && [ -n "${3:-}" ] || { echo "deferred plot: usage: plot_scaling.py FILE -o PNG" >&2; exit 2; }
hostdir=${RDMAMESH_TEST_HOSTDIR:?the deferred plot needs RDMAMESH_TEST_HOSTDIR}
cp "$file" "$hostdir/"
printf '%q ' "job's scaling plot of ${file##*/}" analysis/plot_scaling.py "${file##*/}" -o "${3##*/}" >>"$hostdir/checks"
echo >>"$hostdir/checks"
echo "plot_scaling: deferred to the host: analysis/plot_scaling.py ${file##*/} -o ${3##*/}"
