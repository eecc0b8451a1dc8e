// The job's verdict: every run's causes folded into one list, each with the runs that named it.
// A NIC, node or uplink counts (and is acted on: its node drained by the health job) where the
// job's runs, their fits pooled as one (pool_fits), name it as one run's test would, at the runs'
// level (one fitted run: what it named). Other causes count when named in more than half of the
// judged runs; a suspect (a link, or a rank one run named) needs two runs, or its pair still slow
// alone beyond chance. With --retest the model decides a run's rank, NIC and
// node causes (stats/model_retest.hpp): the parts the run showed slow or named are measured alone,
// and a part counts where Holm's test over every part retested rejects "at least --slow % alone"
// at the job's false-alarm level; a named part cleared alone counts not, whatever the runs'
// majority, nor one undecided (its interval across --slow, or its pairs alone held back by their
// host: the retest tested its CPU, not its network); a part no run named counts on that evidence
// (basis retest). Failed pairs fail the job; counted causes make it degraded; a job with
// bandwidth runs none of which could be judged is unjudged; else it is healthy.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rdmamesh/stats/config.hpp"
#include "rdmamesh/stats/false_alarm.hpp"
#include "rdmamesh/stats/model_retest.hpp"
#include "rdmamesh/stats/outliers.hpp"
#include "rdmamesh/stats/retest.hpp"
#include "rdmamesh/stats/why.hpp"

namespace rdmamesh::stats {

// In order of what an operator must act on: `unjudged` is no evidence either way (no bandwidth
// run could be judged: too few pairs, messages or seconds), never read as healthy.
enum class health : std::uint8_t { healthy, unjudged, degraded, failed };
const char* to_string(health h);

// One bandwidth run as the verdict sees it (retests are not runs of their own here).
struct judged_run {
  std::uint32_t index = 0;
  std::string label;  // "mesh 64 KiB"
  const outlier_report* report = nullptr;
  bool judged = false;  // the finder could measure the run's noise (or the run had causes)
  // --retest: its slow pairs measured alone beside control pairs (still slow or fine)
  std::vector<retest_verdict> alone;
  false_alarms stated{};  // its stated false-alarm level (nothing drawn: none)
  // --retest: the parts (ranks', NICs' and nodes' sides) the model measured alone, judged at
  // `alpha` (judge_model_retest); where a run has them, they decide its rank, NIC and node causes
  std::vector<lasting_effect> parts;
  bool retested = false;
  double alpha = 0;
  std::uint32_t alpha_runs = 1;  // the job's level, split evenly over this many runs, gave `alpha`
};

struct folded_cause {
  outlier_kind kind = outlier_kind::link;
  outlier_basis basis = outlier_basis::noise;
  std::int32_t node = -1, rank = -1, peer = -1;
  std::vector<std::uint32_t> runs;  // indexes of the runs that named it
  std::vector<std::string> labels;  // and their labels
  double send_lo = 0, send_hi = 0;  // its sends' % over those runs (NaN: never named by them)
  double recv_lo = 0, recv_hi = 0;
  std::uint32_t pairs = 0;  // the most slow pairs it explained in one run (basis retest: of its
                            // pairs alone, those below --slow % of their controls)
  std::uint32_t fine = 0;   // ... and its fine pairs then (basis retest: the others alone)
  bool counted = false;     // acted on: see fold
  bool cleared = false;     // named by the runs, found fine alone by the retest
  bool narrowed = false;    // a node the retest narrowed to its NIC(s), an uplink to node(s) under it: slow
                            // alone, the others fine
  bool within = false;      // a rank or NIC of a node whose own cause counts: that node's, named once
  bool undecided = false;   // named by the runs, but alone its pairs were held back by their host (held_cpu):
                            // no test of its network, so nothing is counted or drained on it
  bool explained = false;   // named by the runs; alone slow only toward a counted part of the other side
                            // (lasting_effect::explained): that part's evidence, not counted
  explanation why{};        // its category and the evidence behind it (explain, after fold)
  // the retest found its named sides fine alone or held back by their host (its busy ends with
  // less of a CPU than the controls'): the median share of a CPU of those held pairs' busy ends,
  // and their controls'; NaN where not so (explain: a host cause; `undecided`)
  double held_cpu = std::numeric_limits<double>::quiet_NaN();
  double held_controls_cpu = std::numeric_limits<double>::quiet_NaN();
  // the model's retest of it (a rank, NIC or node): its pairs alone as % of the controls alone,
  // the 95 % interval, and the chance of reading that slow were it at --slow % (NaN: not retested)
  double alone_pct = std::numeric_limits<double>::quiet_NaN();
  double alone_lo = std::numeric_limits<double>::quiet_NaN();
  double alone_hi = std::numeric_limits<double>::quiet_NaN();
  double alone_p = std::numeric_limits<double>::quiet_NaN();
  std::uint32_t alone_pairs = 0;
  // a NIC, node or uplink of a job of two or more fitted runs: those runs pooled as one fit,
  // its effect there (% of the median, the side with the smaller p) and that p before the
  // correction (pool_runs 0: not pooled). `by_pool`: named by no run alone, counted on the pool
  // (`runs` then the runs pooled)
  std::uint32_t pool_runs = 0;
  double pool_pct = std::numeric_limits<double>::quiet_NaN();
  double pool_p = std::numeric_limits<double>::quiet_NaN();
  bool by_pool = false;
};

struct job_verdict {
  health status = health::healthy;
  std::uint32_t runs = 0;              // bandwidth runs
  std::uint32_t runs_judged = 0;       // of those, judged
  std::vector<folded_cause> causes;    // counted first (failed, fabric, node, rank, link), then by runs
  std::vector<config_finding> config;  // NICs set up unlike the others (compare_nics): each counts
  // the noisiest judged run's stated false-alarm level: how often a healthy fabric that noisy has
  // a cause named in one run (before any retest)
  false_alarms stated{};
  std::int32_t stated_run = -1;
  // the model's retest: the parts it measured alone, and the false-alarm level they were counted
  // at (the chance of counting any healthy part in the job; 0: no retest), each run's tests at an
  // even share of it over `false_alarm_runs` runs
  std::size_t parts_retested = 0;
  double false_alarm = 0;
  std::uint32_t false_alarm_runs = 1;
};

// The NICs' configuration joins the runs' verdict: each finding a counted cause, the job
// degraded by it whatever the runs said (a config fault needs no traffic to be judged).
void add_config(job_verdict& v, std::vector<config_finding> findings);

// `node_of`: each rank's node (empty: unknown), to tell a rank's or node's fault from the pairs
// it shares with one slow peer node. `uplinks` (--topology): the pairs through a counted uplink,
// either way, are its evidence: the retest's word on them names no rank or node, and a link
// among them is not a cause apart.
job_verdict fold(std::span<const judged_run> runs, std::span<const std::int32_t> node_of = {},
                 std::span<const switch_group> uplinks = {}, std::span<const nic_group> nics = {});

}  // namespace rdmamesh::stats
