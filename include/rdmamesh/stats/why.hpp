// Why, not only where: each cause of the verdict gets a category from the evidence the host and
// the NICs left while the runs that named it ran. An operator's next step depends on it: a
// cable or optic (link), a fabric setting (congestion), a port or path that runs slow with no
// error (rate), a switch uplink (switch), or the host's CPU, nothing to do with the network
// (host). The NICs' settings (config) are judged before any traffic (stats/config).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rdmamesh/engine/host.hpp"
#include "rdmamesh/fabric/port_counters.hpp"
#include "rdmamesh/fabric/rank_info.hpp"

namespace rdmamesh::stats {

struct job_verdict;

enum class category : std::uint8_t { unknown, link, congestion, rate, host, fabric_switch };
const char* to_string(category c);

// What one bandwidth run left beside its rates: per rank, what the host gave its thread over
// its measured intervals; per port (one reading each), its counters over the run.
struct run_evidence {
  std::uint32_t index = 0;
  std::span<const engine::host_use> host;
  std::span<const fabric::port_reading> ports;
};

struct explanation {
  category cat = category::unknown;
  // the counters that set it apart (summed over its ports and the runs that named it), and the
  // job's other ports' median of each over the same runs
  std::vector<std::pair<std::string, std::uint64_t>> counters;
  std::vector<std::pair<std::string, std::uint64_t>> others;
  double cpu_share = -1;         // its ranks' share of a CPU while measured (-1: not known)
  double others_cpu_share = -1;  // the median rank's, in the same runs
  std::string text;              // the evidence, one clause: "completer_retry_err +299 on rxe_node2 (...)"
  std::string brief;             // its first figure, for a drain reason
};

// Fills every cause's `why` in `v`, in order of the evidence's weight:
//  link        a link or transport error counter of the cause's ports counted at least ten, and
//              four times the median of the job's other ports over the same runs (healthy links
//              count near zero; rxe under emulation retransmits by itself, on every port alike)
//  congestion  congestion counters set apart the same way, with no such errors
//  host        its ranks had a smaller share of a CPU than the median rank, enough to explain at
//              least half of its shortfall: the engine polls, and a rank that waits for a CPU
//              moves less whatever the network does. Also ahead of transport counters apart,
//              where its ports refused messages for want of a posted receive (RNR NAKs) and no
//              physical error stands beside them: the retransmits are those refusals' resends.
//              First of all, with no physical error, where its retest found its pairs alone fine
//              or held back by their host (folded_cause::held_cpu)
//  switch      an uplink, with none of the above on the ports under it
//  rate        slow with none of the above: a port or path that runs below its rate
// A failed pair is `link` when its ports' counters say so, else its category stays unknown.
void explain(job_verdict& v, std::span<const run_evidence> runs, std::span<const fabric::rank_info> ranks);

// Whether the host explains a shortfall: ranks that had `cpu_share` of a CPU where their
// reference had `others_cpu_share`, and moved `rate_share` of the reference's rate. The CPU
// deficit must be at least half the rate's: the engine polls, so a rank that waits for a CPU
// moves less whatever the network does, but not less than its CPU alone accounts for.
bool host_explains(double cpu_share, double others_cpu_share, double rate_share);

}  // namespace rdmamesh::stats
