// The verdict's model (issue 42): a run's pairs explained by effects, not compared by rules. The
// log rate of each measured pair (a, b) is its cohort's offset (its class, and its round where
// asked) + a send effect of a + a receive effect of b (+ the effect of each uplink the pair crosses,
// up out of a's subtree or down into b's) + noise. The effects are fit together from every pair
// (Huber M-estimation: a few bad pairs do not move the rest), so a rank judged by few pairs
// (--pattern spread) is not judged by its partners' effects.
//
// Each part (a rank's, a NIC's, a node's sends or receives, an uplink's way up or down) is tested
// against the null hypothesis that it is one of the run's healthy parts: its effect over the
// spread healthy parts of its kind show (the effects' robust scale, which a run estimates from
// all of them) and never over less than its own standard error (its pairs' noise and counts),
// referred to a Student t (healthy parts stray further than a normal's tails). The finder
// (outliers.hpp) tests every part of the run in one family (holm); the retest (model_retest.hpp)
// the parts a run chose, from their pairs alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "rdmamesh/stats/matrix.hpp"
#include "rdmamesh/stats/outliers.hpp"
#include "rdmamesh/stats/pair_class.hpp"

namespace rdmamesh::stats {

struct effects_fit {
  std::vector<double> send, recv;             // by rank, log scale (NaN: no pair measured)
  std::vector<std::uint32_t> n_send, n_recv;  // pairs behind each
  std::vector<double> var_send, var_recv;     // by rank, the sum of its pairs' counting variances
  double noise = 0;                           // the residuals' robust scale (log)
  double send_scale = 0, recv_scale = 0;      // how much healthy ranks' effects differ (log)
  std::vector<double> class_offset;           // by cohort
  // by uplink (fit_options::uplinks): its effect on the pairs up out of its subtree and down into it
  std::vector<double> up, down;
  std::vector<std::uint32_t> n_up, n_down;
  struct pair {
    std::uint32_t a = 0, b = 0, cohort = 0;
    std::size_t slot = 0;  // in the run's matrices
    double y = 0;          // log bytes/s
    double var = 0;        // its count's variance on the log scale (0: exact)
  };
  std::vector<pair> pairs;                       // those fit
  double fitted(const pair& p) const;            // class offset, both ends' effects and the uplinks it crosses
  std::vector<std::vector<std::uint32_t>> over;  // by rank, the uplinks over it (ascending)
};

// What a run's pairs are read against. The defaults: a class within a node or across nodes, rates
// as measured (pairs that moved nothing left out).
struct fit_options {
  const pair_classes* classes = nullptr;  // a pair's class; null: within a node or across
  // a class's pairs of one round apart, where the round holds three or more of them (a shift run's
  // rounds run different paths at once)
  bool by_round = false;
  std::span<const switch_group> uplinks;  // each its own effect each way on the pairs through it
  // duration mode: counts move by the quantum, so a pair's log rate has a variance of about
  // quantum / (its cohort's median count), and a count of 0 reads half a quantum (0: exact counts)
  double quantum = 0;
  std::uint64_t msg_size = 0;  // with quantum: bytes a message
};

// The fit over the pairs that ran (finite, > 0 tx_bw, or with a quantum any count over a window;
// failed pairs left out).
effects_fit fit_effects(const run_matrices& m, std::span<const std::int32_t> node_of, const fit_options& o = {});

// The run's model as the finder fits it: by its classes, each round apart, with its uplinks, its
// counts moving by `quantum` messages of `msg_size` bytes (0: exact counts). The stated level's
// draws read a run the same way.
effects_fit fit_run(const run_matrices& m, std::span<const std::int32_t> node_of, const pair_classes& classes,
                    std::span<const switch_group> uplinks, double quantum, std::uint64_t msg_size);

// Several runs of one job as one fit: each rank's (and uplink's) effect the mean of its runs',
// each weighted by the pairs behind it over its run's spread of healthy ranks squared, those pairs
// and their counts' variances summed, the noise their pairs' root mean square, and how far healthy
// ranks stray read again from the pooled effects. A part's error is then its mean's over every run, and how far healthy
// parts stray is read from the pooled parts: what lasts across runs stays in it, what one run drew averages out. The
// fits' pairs are not kept. One fit is its own pool.
effects_fit pool_fits(std::span<const effects_fit* const> fits);
struct model_settings {
  double alpha = 1e-3;   // the chance of naming a healthy part in a run (family-wise)
  double slow_pct = 90;  // --slow: never named above this % of the healthy
  double tail_dof = 5;   // the t the healthy effects are referred to
  // Where ranks of one kernel share CPUs: how far one CPU's pairs alone stray from another's
  // (log sd), for a pair on one CPU read against pairs on others, its own too few. On the
  // emulated cluster's two vCPUs 0.29 (tools/fit-noise --retest); elsewhere no pair is on one.
  double cpu_sd = 0.29;
  double cpu_dof = 17;  // of cpu_sd: the pairs of CPUs it was measured over
  // Where a part's ranks share CPUs with other ranks of their kernel: how far a healthy rank's or
  // node's pairs alone stray together (log sd), a draw the part's pairs all share, so that its
  // pairs are not independent evidence (a rank short of a CPU in the retest slows every pair it
  // sends). On the emulated cluster 0.05, the largest of a rank's and a node's shares
  // (tools/fit-noise --retest over 50 healthy retests); with a core a rank, too small to measure.
  double part_sd = 0.05;
  double part_dof = 50;  // of part_sd: the retests it was measured over
};

// Every part of the run the model can test, each with its effect and its p in this run: a node's
// sends and receives (its ranks' mean effect), a NIC's where a node drives several (`rail_of`), a
// rank's where its NIC or node holds several ranks. A part of one member is that member's larger
// unit (a one-rank NIC is the NIC, a one-NIC node the node): what is replaced.
// Every part of a job that can be replaced, as its sends (members, kind): each node; each NIC of a
// node that drives several (`rail_of`); each rank its NIC or node shares with another; each uplink.
std::vector<model_cause> job_parts(std::uint32_t n, std::span<const std::int32_t> node_of,
                                   std::span<const std::int32_t> rail_of, std::span<const switch_group> uplinks = {});

// With the fit's uplinks, each uplink's way up (sends) and down (receives): against its own
// standard error and never less than how far healthy nodes stray.
std::vector<model_cause> model_parts(const effects_fit& f, std::span<const std::int32_t> node_of,
                                     std::span<const std::int32_t> rail_of, const model_settings& s,
                                     std::span<const switch_group> uplinks = {});

// Holm's step-down over a family of p-values: the r-th smallest against alpha / (m - r), stopping
// at the first that fails; by member, the bar it passed (0: not rejected). Holm, not
// Benjamini-Hochberg: a drain is a family-wise decision, and it loses little power where one
// member is far off.
std::vector<double> holm(std::span<const double> p, double alpha);

// Whether part `inner` lies inside `outer` (a rank in its NIC or node, a NIC in its node), on the same side.
bool inside(const model_cause& inner, const model_cause& outer);

// P(T > t) for Student's t with `dof` degrees of freedom.
double t_upper(double t, double dof);

}  // namespace rdmamesh::stats
