// The retest as the model's second look (issue 42): the parts a run shows below --slow go again,
// their pairs alone beside control pairs, and each part's lasting effect is what its pairs alone
// fall short of the controls of their path (pair_classes::path: the class, and which uplinks the
// pair crosses which way), the same additive model as the run's (a class
// offset, the part's effect, noise), fit to fresh data.
//
// The run chooses what to retest; the retest alone decides. A run's effects hold passing
// contention whose tails are heavy (a rank that lost the CPU for the whole window), so pooling
// the run's evidence with the alone rows would let one run's lottery outvote them. The pairs
// alone are drawn after the choice and independently of it, so their tests are valid whatever
// chose them, and Holm's step-down over the parts retested keeps the chance of counting any
// healthy part in a job at most alpha. Parts inside a screened one are retested too, only to name: one counts (at
// alpha) only inside a counted whole, which it moves no drain out of. A part is counted when the test rejects "at least
// --slow % of the healthy alone" (an interval null: a part 2 % slow is healthy by --slow's definition, so no
// significance on a long run drains it), cleared when its 95 % interval lies above --slow, and undecided otherwise:
// nothing is counted or drained on it (unlike today's fold, where an undecided retest leaves the run's reading
// standing).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "rdmamesh/stats/matrix.hpp"
#include "rdmamesh/stats/median.hpp"
#include "rdmamesh/stats/model.hpp"
#include "rdmamesh/stats/pair_class.hpp"
#include "rdmamesh/stats/retest.hpp"

namespace rdmamesh::stats {

struct model_retest_plan {
  std::vector<model_cause> parts;     // every part of the run the model tests
  std::vector<std::size_t> screened;  // of those, the ones below --slow in the run (or with a rank that is): retested
  std::vector<std::uint8_t> naming;   // parallel to screened: 1 where retested only to name inside a screened part
  std::vector<pair_list>
      sides;              // parallel to screened: each part's pairs, in turn from each of its ranks, slowest first
  pair_list controls;     // for each screened part, per path, pairs that do not touch it, nearest the median
  pair_list all() const;  // every pair the retest measures, once
};

// The retest of a run judged by the model: of `parts` (the run's, as its finder read them:
// outlier_report::parts), up to `per_side` of each screened part's pairs, and for each, up to
// `controls` pairs of each of their paths that do not touch it (clear of the other screened parts
// first). A run the finder did not fit has no parts, and no part is retested.
// `named`, by rank: the sides of the rank, NIC or node causes the run's finder named it in
// (named_sides' bits): every part holding one on such a side is screened too, so that the retest
// decides what the run named. A side the run did not name, and did not read below --slow, is no
// choice of the run's: testing it too would only widen Holm's family. An uplink the run reads
// below --slow is screened with the ranks under it on that side; its controls are pairs of the
// same route through its tier's other uplinks.
model_retest_plan plan_model_retest(const run_matrices& m, std::span<const model_cause> parts,
                                    std::span<const std::int32_t> node_of, const pair_classes& classes,
                                    const model_settings& s, std::size_t per_side = 8, std::size_t controls = 8,
                                    std::span<const std::uint8_t> named = {});

struct lasting_effect {
  model_cause part;                         // as the run read it (effect, p: the run's)
  double effect = nan, lo = nan, hi = nan;  // alone against the controls, log; its 95 % interval
  double dof = 0;                           // of the interval and the tests
  std::size_t pairs = 0, controls = 0;      // behind it
  std::size_t below = 0;                    // of its pairs, those alone below --slow % of their controls
  double p_slow = 1;                        // the chance, were it at --slow % alone, of reading this slow or slower
  bool counted = false;                     // Holm over the parts retested, at alpha
  bool cleared = false;                     // its interval above --slow
  bool within = false;                      // counted, inside a counted larger part that stands for it
  bool narrowed = false;  // counted, but a counted part inside it stands for it: its other parts are fine
  // counted at first, but alone slow only toward a stronger counted part of the other side (a
  // receiver's pairs from a slow sender): that part's evidence, not its own; not counted
  bool explained = false;
  std::size_t held = 0;    // of its pairs, those its host held back alone (left out)
  bool held_back = false;  // most of its pairs were: alone it measured its host, not its network (undecided)
  bool stands() const { return counted && !within && !narrowed; }  // a cause of the verdict
};

// Every screened part's lasting effect from `alone` (bytes/s of the planned pairs; a pair that
// moved nothing reads `floor_bps`, half a message in the round), counted, cleared or undecided.
// A counted part holding counted parts stands for them (`within`) unless its other parts are
// fine (not below --slow in the run, or cleared alone): then the parts inside stand (`narrowed`).
// A counted uplink under which parts stand is refit without their pairs, and `narrowed` to them
// where it no longer passes its bar (they are read against controls through it, so their being
// fine alone says nothing of it). A counted part is `explained` (and not counted) where, its pairs toward a counted
// part of the other side, or toward one that reads below --slow alone without its pairs toward it and is not
// cleared, and its counted links, left out, it no longer passes the bar it passed. `held`: pairs
// alone that their host held back (judge_retest's `starved`): a part's are left out, and a part most of whose pairs
// were is `held_back`, neither counted nor cleared. `links`: the slow pairs judged alone (judge_retest); those the run
// named as links are tested in the same family as the parts, and `counted` where the test rejects.
std::vector<lasting_effect> judge_model_retest(const model_retest_plan& plan, const square<double>& alone,
                                               const pair_classes& classes, const model_settings& s, double floor_bps,
                                               std::span<const std::pair<std::uint32_t, std::uint32_t>> held = {},
                                               std::span<retest_verdict> links = {});

// Each of `pairs` alone as a part of one pair: against the `controls` of its path (those that share
// an end with it too), its lasting effect, 95 % interval and p under "at least --slow % alone".
// A pair that did not run alone reads as one that moved nothing (`floor_bps`).
std::vector<lasting_effect> judge_pairs_alone(const pair_list& pairs, const pair_list& controls,
                                              const square<double>& alone, const pair_classes& classes,
                                              const model_settings& s, double floor_bps);

// By rank, the sides the finder named it in (a rank, NIC or node cause of `found`): bit
// named_sends for its sends, named_receives for its receives; 0 where it is in none.
constexpr std::uint8_t named_sends = 1, named_receives = 2;
std::vector<std::uint8_t> named_sides(std::span<const outlier> found, std::span<const std::int32_t> node_of,
                                      std::span<const nic_group> nics, std::uint32_t n);

// The retest rdmamesh runs after a run (--retest, and the simulator's): the run's slow pairs
// (plan_job_retest, each judged alone by judge_retest: the links' evidence) and the parts of the
// run's model (plan_model_retest from `run`'s parts, every part holding a rank its finder named
// screened too), each pair measured once: `pairs` holds them all.
struct full_retest {
  retest_plan pairs;
  model_retest_plan model;
};
full_retest plan_full_retest(const run_matrices& m, const pair_classes& classes, const model_settings& s,
                             const outlier_report& run, std::span<const std::int32_t> node_of,
                             std::span<const nic_group> nics, std::span<const switch_group> uplinks = {});

// The t quantile: the t for which P(T > t) = p, `dof` degrees of freedom.
double t_quantile(double p, double dof);

}  // namespace rdmamesh::stats
