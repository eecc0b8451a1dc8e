// What every step of the measured job reads, on every rank: the world and options, this rank's
// place, the connected endpoint, rank 0's ledger, and the failure paths (the watchdog that
// bounds each collective, liveness, and give_up for a peer that fell silent). run_job makes it
// once; the run loop, a run's rounds, its assembly and the retests take it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "rdmamesh/app/ledger.hpp"
#include "rdmamesh/app/liveness.hpp"
#include "rdmamesh/app/watchdog.hpp"
#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/engine/core.hpp"
#include "rdmamesh/fabric/endpoint.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/mpi/world.hpp"
#include "rdmamesh/stats/outliers.hpp"
#include "rdmamesh/stats/pair_class.hpp"
#include "rdmamesh/util/fault.hpp"

namespace rdmamesh::app {

struct context {
  const mpi::world& w;
  const options& o;
  std::uint32_t n;
  std::uint32_t me;
  ledger& book;  // rank 0 keeps the records; elsewhere it stays empty
  std::uint32_t inline_size;
  std::uint32_t window;
  const std::vector<fabric::rank_info>& ranks;
  std::span<const std::int32_t> node_of;
  std::span<const stats::switch_group> uplinks;  // --topology
  std::span<const std::string> uplink_names;     // by switch
  std::span<const stats::nic_group> nics;        // the NICs of nodes with several
  const stats::pair_classes& classes;            // which pairs are like one another (the retest's)
  std::uint32_t nodes;
  watchdog& dog;
  liveness& live;
  fabric::endpoint& ep;
  const std::optional<fault>& injected;
  double expect_floor_bps;  // --expect per pair, bytes/s (0: none)
  // liveness named a silent peer: report the line, make sure rank 0 records why, exit
  std::function<void(const std::string&, const liveness::verdict&)> give_up;
};

// stdout, flushed: rank 0's lines must not sit in a buffer when a rank dies.
void print(const std::string& text);

// The line a rank prints when a peer stopped answering: who, how this rank knows, and what
// it was waiting for. Without a verdict the engine's suspects (peers whose NIC stopped
// acknowledging) are named, if any.
std::string stuck_line(const context& c, const std::optional<liveness::verdict>& v,
                       const std::vector<std::uint32_t>& suspects, const std::string& what);

// Waits for a non-blocking collective under the same bound, still hearing liveness: rank 0's
// word on a silent rank reaches a rank that waits here (a survivor blocked in MPI_Allreduce
// could only time out and name nobody), and a rank's report that it gives up reaches rank 0.
// `judge`: silence is judged too (rank 0 names a rank it has not heard for --timeout), for a
// wait every rank enters straight from a round, where all still beat; the bound grows by half
// a --timeout so that the judgement comes first. Elsewhere a rank may be busy without beating
// (rank 0 writing the file between runs) and only the bound applies.
void wait_listening(const context& c, const engine::core& base, const char* what, mpi::request& req,
                    bool judge = false);

// Runs `collective` under the watchdog: if a peer never comes, the watchdog names the engine's
// suspects and ends the job after collective_bound_s (--timeout on rank 0, twice it elsewhere).
template <class F>
auto guarded(const context& c, const engine::core& base, const char* what, F&& collective) {
  const double bound = collective_bound_s(c.me, c.o.timeout_s);
  guarded_wait g(c.dog, stuck_line(c, std::nullopt, base.suspects(), fmt::format("{} (waited {:g} s)", what, bound)),
                 bound);
  return collective();
}

}  // namespace rdmamesh::app
