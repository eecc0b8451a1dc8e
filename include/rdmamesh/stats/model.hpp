// The verdict's model, first step (issue 42): a run's pairs explained by effects, not compared
// by rules. The log rate of each measured pair (a, b) is its class's offset (within a node,
// across nodes) + a send effect of a + a receive effect of b + noise. The effects are fit
// together from every pair (Huber M-estimation: a few bad pairs do not move the rest), so a
// rank judged by few pairs (--pattern spread) is not judged by its partners' effects.
//
// Each candidate (a rank's sends or receives; a node's, where it holds several ranks) is tested
// against the null hypothesis that it is one of the run's healthy parts: its effect over the
// spread healthy parts show (the effects' robust scale, which a run estimates from all its ranks)
// and its own standard error (the residuals' scale over its pairs), referred to a Student t
// (healthy ranks stray further than a normal's tails). Every candidate of the run is tested, and
// Holm's step-down keeps the chance of naming any healthy part at most `alpha` per run: Holm
// because a drain is a family-wise decision (one false drain is a healthy node out of service),
// and because, unlike Bonferroni, it loses little power when one part is far off.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "rdmamesh/stats/matrix.hpp"
#include "rdmamesh/stats/outliers.hpp"

namespace rdmamesh::stats {

struct effects_fit {
  std::vector<double> send, recv;             // by rank, log scale (NaN: no pair measured)
  std::vector<std::uint32_t> n_send, n_recv;  // pairs behind each
  double noise = 0;                           // the residuals' robust scale (log)
  double send_scale = 0, recv_scale = 0;      // how much healthy ranks' effects differ (log)
  std::vector<double> class_offset;           // 0: across nodes, 1: within a node
};

// The fit over the pairs that ran (finite, > 0 tx_bw; failed pairs left out).
effects_fit fit_effects(const run_matrices& m, std::span<const std::int32_t> node_of);

struct model_settings {
  double alpha = 1e-3;   // the chance of naming a healthy part in a run (family-wise)
  double slow_pct = 90;  // --slow: never named above this % of the healthy
  double tail_dof = 5;   // the t the healthy effects are referred to
};

struct model_cause {
  outlier_kind kind = outlier_kind::rank;  // rank, nic or node
  std::int32_t node = -1, rank = -1;
  std::int32_t rail = -1;  // nic: its rail
  bool sends = true;
  double effect = 0;  // log
  double p = 1;       // one-sided, before the correction
  // the ranks it holds, ascending: a list, not a mask by rank, since a run of N ranks has about
  // 2N parts (N^2 bytes as masks at thousands of ranks)
  std::vector<std::uint32_t> members;
  bool holds(std::uint32_t r) const { return std::ranges::binary_search(members, r); }
};

// Every part of the run the model can test, each with its effect and its p in this run: a node's
// sends and receives (its ranks' mean effect), a NIC's where a node drives several (`rail_of`), a
// rank's where its NIC or node holds several ranks. A part of one member is that member's larger
// unit (a one-rank NIC is the NIC, a one-NIC node the node): what is replaced.
std::vector<model_cause> model_parts(const effects_fit& f, std::span<const std::int32_t> node_of,
                                     std::span<const std::int32_t> rail_of, const model_settings& s);

// The causes the model names in one run, strongest first; a node named covers its ranks.
std::vector<model_cause> find_by_model(const run_matrices& m, std::span<const std::int32_t> node_of,
                                       const model_settings& s, std::span<const std::int32_t> rail_of = {});

// Whether part `inner` lies inside `outer` (a rank in its NIC or node, a NIC in its node), on the same side.
bool inside(const model_cause& inner, const model_cause& outer);

// P(T > t) for Student's t with `dof` degrees of freedom.
double t_upper(double t, double dof);

}  // namespace rdmamesh::stats
