// Cross-rank option comparison over the canonical describe() list.
#include "rdmamesh/app/same_options.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "rdmamesh/util/error.hpp"

namespace rdmamesh::app {

void check_same_options(const mpi::world& w, const options& o) {
  auto mine = describe(o);
  // the environment variables rdmamesh reads count as options too
  for (const char* name : {"RDMAMESH_FAULT"}) {
    const char* v = std::getenv(name);
    mine.emplace_back(fmt::format("${}", name), v ? v : "(unset)");
  }
  std::string flat;
  for (const auto& [k, v] : mine) flat.append(k).append(1, '=').append(v).append(1, '\n');
  const std::string root = w.bcast_string(flat);
  if (root == flat) return;
  std::size_t pos = 0;
  for (const auto& [k, v] : mine) {
    const std::size_t eol = root.find('\n', pos);
    const std::string line = root.substr(pos, eol - pos);
    pos = eol == std::string::npos ? root.size() : eol + 1;
    if (line != fmt::format("{}={}", k, v)) {
      if (k.front() == '$') {
        throw usage_error(
            fmt::format("environment variable {} is '{}' on this rank but '{}' on rank 0; give every rank the same "
                        "environment (mpirun -x {}, srun --export)",
                        k.substr(1), v, line.substr(line.find('=') + 1), k.substr(1)));
      }
      throw usage_error(
          fmt::format("option --{} is '{}' on this rank but '{}' on rank 0; launch every rank with the "
                      "same options",
                      k, v, line.substr(line.find('=') + 1)));
    }
  }
  throw usage_error("options differ from rank 0's; launch every rank with the same options");
}

}  // namespace rdmamesh::app
