// rdmamesh entry point: MPI lifetime around the driver. An exception that escapes the driver
// is a bug or a broken MPI; abort the job rather than risk ranks hanging in MPI_Finalize.
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "rdmamesh/app/run.hpp"
#include "rdmamesh/fabric/topology.hpp"
#include "rdmamesh/util/error.hpp"
#include "rdmamesh/util/memory.hpp"
#include "rdmamesh/util/stop.hpp"

int main(int argc, char** argv) {
  rdmamesh::reuse_freed_memory();  // rank 0 judges the run
  rdmamesh::fabric::skip_unused_hwloc_plugins();
  std::optional<rdmamesh::mpi::environment> env;
  try {
    env.emplace(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "rdmamesh: error: {}\n", e.what());
    return rdmamesh::exit_system;
  }
  rdmamesh::install_stop_handlers();  // after MPI_Init, so ours are the handlers that count
  rdmamesh::mpi::world w;
  try {
    return rdmamesh::app::run(w, argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "rdmamesh: error: rank {}: {}\n", w.rank(), e.what());
    w.abort(rdmamesh::exit_system);
  }
}
