// Runs recorded by rdmamesh, read back for the judging code: the matrices the finder reads, as
// tools/export-runs writes them from results files (one text record per bandwidth run).
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "rdmamesh/stats/matrix.hpp"

namespace rdmamesh::sim {

struct recorded_run {
  std::string label;     // FILE:RUN
  std::string recorded;  // the kinds the recording rdmamesh named, comma-separated ("-": none)
  std::uint64_t size = 0;
  bool counted = true;  // duration mode
  std::uint64_t cq_mod = 0;
  double slow_pct = 90;  // --slow of the run
  std::vector<std::int32_t> node_of, rail_of;
  stats::run_matrices m;
};

// Every record of the stream; throws std::runtime_error naming the line that does not parse.
std::vector<recorded_run> read_runs(std::istream& in);

}  // namespace rdmamesh::sim
