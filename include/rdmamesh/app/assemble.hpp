// Assembling and printing one run: what every rank measured over the run's rounds is gathered
// to rank 0, which builds the run's record (matrices, time series, latency histograms, events,
// outliers or retest verdicts), prints it and hands it to the ledger (which writes it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rdmamesh/app/context.hpp"
#include "rdmamesh/engine/host.hpp"
#include "rdmamesh/io/run_record.hpp"
#include "rdmamesh/plan/schedule.hpp"
#include "rdmamesh/stats/counters.hpp"
#include "rdmamesh/stats/histogram.hpp"
#include "rdmamesh/stats/latency.hpp"
#include "rdmamesh/stats/matrix.hpp"
#include "rdmamesh/stats/model_retest.hpp"
#include "rdmamesh/stats/retest.hpp"

namespace rdmamesh::app {

// What one rank measured over all rounds of one run.
struct rank_run {
  std::vector<stats::pair_counters> counters;     // bw, by peer rank
  std::vector<double> tx_t, rx_t;                 // bw --interval: [peer][slot] bytes/s
  std::uint32_t slots = 0;                        // bw --interval: slots per pair (0: off)
  std::vector<stats::latency_summary> latencies;  // lat, by peer rank (as initiator)
  std::vector<std::uint64_t> lat_failed;          // lat, 1 per peer whose flow failed
  stats::histogram lat_all;                       // lat, every flow of this rank
  std::vector<std::string> events;
  std::uint32_t rounds_done = 0;  // the last one maybe cut short by a stop request
  double connect_s = 0;           // --connect round: re-targeting QPs, outside every interval
  // bw: what the host gave this rank in each round's measured interval ({} where it had no pair)
  std::vector<engine::host_use> host_rounds;
  std::string port_text;  // the port's counters over the run, on the rank that reads them

  bool clean() const;  // no event, no failed pair, no mismatch on this rank
};

// A retest run: the plan it runs and, on rank 0, the send bandwidth of the run it retests.
struct retest_of {
  std::int32_t index = -1;
  const stats::retest_plan* plan = nullptr;
  const stats::square<double>* before = nullptr;
  double seconds = 0;                               // each round's measured seconds (retest_slow_pairs sizes them)
  const stats::model_retest_plan* model = nullptr;  // rank 0: the parts the model judges from it
};

// Collective. Rank 0 gets the run's record; the other ranks an empty one. `base` names the
// suspects when a gather never completes.
io::run_record assemble(const context& c, const engine::core& base, const plan::subset_schedule& sched,
                        std::uint64_t size, std::uint32_t active_per_node, std::uint32_t index, bool stopped,
                        rank_run& acc, const retest_of& retest);

// Rank 0: prints the run's table row, short windows, outliers, retest verdicts and scaling
// line, then hands the record to the ledger.
void publish(const context& c, io::run_record r);

}  // namespace rdmamesh::app
