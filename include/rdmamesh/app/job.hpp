// The measured part of the job, after setup: its failure paths (a stop request, a peer that
// fell silent, a collective that never completes) around the run loop, and how it ends: the
// file's status, the last line, and the exit code every rank returns.
#pragma once

#include "rdmamesh/app/setup.hpp"
#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/mpi/world.hpp"

namespace rdmamesh::app {

// Collective; returns the process exit code (rdmamesh::exit_code).
int run_job(const mpi::world& w, const options& o, setup& s);

}  // namespace rdmamesh::app
