// The driver: runs the layers in order (cli -> plan -> fabric -> engine -> stats -> io) for
// one MPI job and turns every failure into a reported message and an exit code.
#pragma once

#include "rdmamesh/mpi/world.hpp"

namespace rdmamesh::app {

// Returns the process exit code (see rdmamesh::exit_code); every rank returns the same one.
int run(const mpi::world& w, int argc, char** argv);

}  // namespace rdmamesh::app
