// How often the finder names a cause on a healthy fabric as noisy as this run: a run's stated
// false-alarm level, measured rather than assumed.
//
// Healthy runs are drawn like the measured one: the same pairs, rounds, windows and count steps;
// each pair's rate its cohort's median (its class in its round) times a send effect of its source
// and a receive effect of its destination, drawn from a Student t (3 degrees of freedom: a few
// ranks far off by chance) at the spread this run's own ranks show (the finder's fit, with its
// classes, rounds, uplinks and count steps; robust: a slow part among them does not widen it),
// and the count drawn around that rate in the run's steps.
// Each is judged by the same finder with the same settings; the share that names a cause is the
// false-alarm rate of one run on such a fabric (the retest, where asked for, is what clears them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "rdmamesh/stats/matrix.hpp"
#include "rdmamesh/stats/median.hpp"
#include "rdmamesh/stats/outliers.hpp"

namespace rdmamesh::stats {

struct false_alarms {
  std::uint32_t drawn = 0;  // healthy runs drawn like this one and judged
  std::uint32_t named = 0;  // ... in which the finder named a cause (failed pairs and suspects apart)
  double pct() const { return drawn > 0 ? 100.0 * named / drawn : nan; }
};

struct false_alarm_settings {
  std::uint32_t max_draws = 200;
  // the draws stop here: a run of thousands of ranks takes a second per judgement (its figure
  // then rests on fewer draws, and says how many)
  double max_seconds = 2;
  std::uint64_t seed = 1;  // the same run, the same figure
};

// What the draws need of a measured run: each measured pair's healthy centre, the spreads drawn
// around them, and the shape (round, seconds, flags) of every scheduled pair. A few words per
// pair, so that rank 0 can hand it to every rank and each draws a share.
struct draw_model {
  struct pair {
    std::uint32_t a, b;
    double centre;  // log bytes/s: its cohort's healthy median
    double secs;
  };
  struct slot {
    std::uint32_t a, b;
    std::int32_t round;
    std::uint8_t flags;
    double secs;
  };
  std::uint32_t n = 0;
  std::uint64_t msg_size = 0;
  double send_t = 0, recv_t = 0;  // t scales of the ranks' send and receive effects
  double pair_sd = 0;             // a pair's own spread beyond its count's step
  double step = 0;                // the count step (0: -n, exact counts)
  std::vector<pair> pairs;        // empty: nothing to draw (a run the finder could not judge)
  std::vector<slot> slots;
};

// `judged`: the finder's report on this run (its count step).
// By rank: whether it is in a rank, node or NIC cause of `found`.
std::vector<std::uint8_t> named_ranks(std::span<const outlier> found, std::span<const std::int32_t> node_of,
                                      std::span<const nic_group> nics, std::uint32_t n);

draw_model model_for_draws(const run_matrices& m, std::uint64_t msg_size, std::span<const std::int32_t> node_of,
                           const finder_settings& s, std::span<const switch_group> uplinks,
                           std::span<const nic_group> nics, const outlier_report& judged);

// The memory one rank's draws take: the model and the n x n matrices each draw fills and judges.
std::size_t draw_bytes(const draw_model& model);

// Draws first, first + stride, ... below fa.max_draws (for fa.max_seconds at most), each from its
// own seed: split over ranks, the shares add up to what one rank drawing them all states.
false_alarms draw_false_alarms(const draw_model& model, std::span<const std::int32_t> node_of, const finder_settings& s,
                               std::span<const switch_group> uplinks, std::span<const nic_group> nics,
                               std::uint32_t first, std::uint32_t stride, const false_alarm_settings& fa = {});

// The two above on one rank. Nothing is drawn for a run the finder could not judge.
false_alarms estimate_false_alarms(const run_matrices& m, std::uint64_t msg_size, std::span<const std::int32_t> node_of,
                                   const finder_settings& s, std::span<const switch_group> uplinks,
                                   std::span<const nic_group> nics, const outlier_report& judged,
                                   const false_alarm_settings& fa = {});

}  // namespace rdmamesh::stats
