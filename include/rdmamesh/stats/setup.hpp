// Where setup time goes: each rank's seconds per phase, and what the job holds per rank.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace rdmamesh::stats {

// In the order a rank goes through them; names are the file's /ranks/setup_s columns.
inline constexpr std::array<const char*, 8> setup_phase_names{
    "placement",  // device discovery, hwloc topology, pinning, port and GID choice
    "device",     // ibv_open_device, PD, CQs, the inline probe
    "buffers",    // allocation on the NIC's NUMA node and MR registration
    "qps",        // QP creation and RESET -> INIT
    "exchange",   // rank records and connection records over MPI
    "connect",    // INIT -> RTR -> RTS of every QP
    "receives",   // the engine: receives posted before any peer can send
    "barrier",    // the first barrier: waiting for the slowest rank
};
inline constexpr std::size_t setup_phases = setup_phase_names.size();
using setup_times = std::array<double, setup_phases>;  // seconds, one rank

// What one rank holds on its device.
struct setup_resources {
  std::uint64_t qps = 0;
  std::uint64_t cq_entries = 0;
  std::uint64_t registered_bytes = 0;
};

struct phase_summary {
  double median = 0;
  double max = 0;
  std::uint32_t slowest = 0;  // the rank with the max
};

struct setup_summary {
  std::array<phase_summary, setup_phases> phases{};
  phase_summary total;  // over each rank's sum of phases
};

setup_summary summarize_setup(std::span<const setup_times> per_rank);

// The most any rank, and any node (its ranks summed: they share its NIC), holds.
struct resource_peaks {
  setup_resources rank;
  setup_resources node;
};
resource_peaks peak_resources(std::span<const setup_resources> per_rank, std::span<const std::int32_t> node_of);

}  // namespace rdmamesh::stats
