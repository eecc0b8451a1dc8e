// Options must be identical on every rank (one plan, one buffer layout): compared before
// anything connects, and the first difference is named.
#pragma once

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/mpi/world.hpp"

namespace rdmamesh::app {

// Collective. Throws usage_error on a rank whose options differ from rank 0's.
void check_same_options(const mpi::world& w, const options& o);

}  // namespace rdmamesh::app
