// The setup sequence, before any traffic: checks that need every rank (at least two ranks,
// identical options, the fault to inject), the plan (node map, --scaling steps, buffer layout),
// the output file, then the fabric (placement, device, buffers, QPs, the exchange, connections)
// and the engine with its receives posted. Each step is agreed by all ranks: one rank's failure
// stops every rank with one message, and a file created for nothing is removed again.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/engine/pingpong.hpp"
#include "rdmamesh/engine/stream.hpp"
#include "rdmamesh/fabric/endpoint.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/io/results_file.hpp"
#include "rdmamesh/mpi/world.hpp"
#include "rdmamesh/plan/layout.hpp"
#include "rdmamesh/plan/spread.hpp"
#include "rdmamesh/plan/switches.hpp"
#include "rdmamesh/stats/config.hpp"
#include "rdmamesh/stats/outliers.hpp"
#include "rdmamesh/util/fault.hpp"

namespace rdmamesh::app {

// What setup hands the job: everything made once, on every rank.
struct setup {
  std::uint32_t n = 0, me = 0;
  mpi::node_info node;
  std::vector<std::uint32_t> local_of;        // by rank
  std::vector<std::int32_t> node_of;          // by rank
  std::vector<std::int32_t> rail_of;          // by rank: the rail of its NIC (0 with one NIC)
  plan::switch_tree switches;                 // --topology (or Slurm's); empty: none
  std::vector<std::string> hosts;             // by rank
  std::vector<std::int32_t> leaf_of;          // by rank: its leaf switch (-1: none known)
  std::vector<stats::switch_group> uplinks;   // the switches with one above them, and the ranks under each
  std::vector<std::string> uplink_names;      // by switch: "leaf1-spine (node1,node2)"
  std::vector<stats::nic_group> nics;         // the NICs of nodes that drive several (-d all, a list)
  std::string topology_note;                  // Slurm's tree, found and not used: why (a header line)
  std::vector<stats::config_finding> config;  // rank 0: NICs set up unlike the others (compare_nics)
  std::vector<std::uint32_t> steps{0};        // --scaling steps; 0: every rank active
  plan::spread_plan spread;                   // --pattern spread over every rank (empty without it)
  plan::layout layout;
  std::optional<fault> injected;
  std::unique_ptr<io::results_file> file;  // rank 0 with -o only
  std::unique_ptr<fabric::endpoint> ep;
  std::vector<fabric::rank_info> ranks;
  std::unique_ptr<engine::stream> streamer;  // --mode bw
  std::unique_ptr<engine::pingpong> pinger;  // --mode lat
  double expect_floor_bps = 0;               // --expect, resolved against the ports' rates
  std::string expect_how;                    // how, for the verdict
  std::string command_line;
  std::string verdict_path;  // rank 0: where the job's verdict goes ("": nowhere)
  std::string job_id;        // rank 0: the job's key (new_job_id), in the file and the verdict
};

// Collective. Fills `s` and, on rank 0, prints the header; returns exit_ok, or the agreed exit
// code after the error line was printed.
int prepare(const mpi::world& w, const options& o, int argc, char** argv, setup& s);

}  // namespace rdmamesh::app
