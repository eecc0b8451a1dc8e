// Simulated jobs judged by the real finder and fold (what rdmamesh does with one bandwidth run),
// and what the verdicts add up to: how often the fault was named, how often anything else was.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rdmamesh/sim/generate.hpp"
#include "rdmamesh/stats/false_alarm.hpp"
#include "rdmamesh/stats/outliers.hpp"
#include "rdmamesh/stats/verdict.hpp"

namespace rdmamesh::sim {

struct judged {
  std::vector<stats::outlier_report> reports;  // by run
  const stats::outlier_report& report() const { return reports.front(); }
  stats::job_verdict verdict;
  stats::false_alarms stated;  // the run's own false-alarm estimate (stated_draws > 0)
  std::size_t alone = 0;       // pairs the retest measured alone (slow, fresh and controls)
};

// --retest, simulated: what the pairs the retest plans measure alone (generate_alone), and the
// level the model judges them at.
struct retest_source {
  std::function<stats::square<double>(std::size_t run, const stats::pair_list&)> alone;
  double false_alarm = 0;  // --false-alarm, as a fraction
};

// A job's bandwidth runs judged as rdmamesh judges them by default (app/assemble.cpp,
// app/ledger.cpp): each run by the finder, the job's verdict folded from all of them; with
// `retest`, as rdmamesh --retest does: each run's slow and named pairs planned, measured alone
// beside controls and judged (app/retest.cpp) at the job's level split over the runs, and the
// verdict folded with that evidence. `stated_draws`: the first run's stated level.
// `leaf_of` (by rank, -1: none): each leaf's uplink is a candidate, as with --topology; `pod_of`
// (a third tier) each pod's too. `cpu_of` (by rank): the CPU of one kernel it is pinned to, as
// fabric::cpu_groups reads it (empty: none shared).
judged judge(std::span<const stats::run_matrices* const> runs, std::uint64_t size, bool counted, std::uint64_t cq_mod,
             const std::vector<std::int32_t>& node_of, const std::vector<std::int32_t>& rail_of, double slow_pct = 90,
             const std::vector<std::int32_t>& leaf_of = {}, std::uint32_t stated_draws = 0,
             const retest_source* retest = nullptr, const std::vector<std::int32_t>& pod_of = {},
             const std::vector<std::int32_t>& cpu_of = {}, double alpha = 1e-3);

// A counted cause in words: node1, nic1.0 (node, rail), rank3, link2-5.
std::string describe(const stats::folded_cause& c);

struct tally {
  std::uint64_t jobs = 0;
  std::uint64_t named = 0;        // jobs that counted the injected fault's part
  std::uint64_t false_jobs = 0;   // jobs that counted anything else
  std::uint64_t false_nodes = 0;  // healthy nodes those causes would drain, summed over jobs
  // ... of which the noise model drew the counted part lastingly below --slow alone (drawn_slow)
  std::uint64_t drawn_slow_nodes = 0;
  std::uint64_t unjudged = 0;                        // jobs whose run could not be judged (too few pairs or messages)
  std::map<std::string, std::uint64_t> false_kinds;  // the wrong causes counted, by kind
  double seconds = 0;                                // spent judging (not drawing the pairs alone)
  double slowest = 0;                                // the longest one job's judging took
  std::uint32_t slowest_job = 0;                     // ... and its number (from 0), for --only-job
  std::uint64_t run_named = 0;  // jobs whose run named a cause before any fold (failed pairs, suspects apart)
  double stated_pct = 0;        // summed over the jobs: each run's stated false-alarm level (stated_draws > 0)
  std::uint64_t retested = 0;   // jobs whose run had pairs to retest (`retest`)
  std::uint64_t alone = 0;      // pairs measured alone, summed over the jobs
  // jobs that missed the injected fault: their number (from 0) and what they counted instead
  std::vector<std::pair<std::uint32_t, std::vector<std::string>>> misses;
};

// `fault` "none" or KIND:PCT (rank, nic, node, link, uplink, pod); throws std::invalid_argument otherwise.
fault parse_fault(const std::string& text);

// `stated_draws` > 0: each run's stated false-alarm level too (stats/false_alarm.hpp), from that
// many healthy runs drawn like it. `retest`: each job runs --retest, as the health job does;
// `false_alarm` (a fraction; 0: rdmamesh's default): the verdict's level, as --false-alarm (the
// run's, and the retest's).
// `only` (< jobs): every job drawn as usual, only that one judged, to look into it alone.
// `runs`: bandwidth runs a job (generate's `first`: one fault, effects that partly last).
tally run_jobs(const fabric_shape& f, const noise_model& nm, const fault& x, std::uint32_t jobs, std::uint64_t seed,
               std::uint32_t stated_draws = 0, bool retest = false, double false_alarm = 0,
               std::optional<std::uint32_t> only = {}, std::uint32_t runs = 1);

}  // namespace rdmamesh::sim
