// --retest: is a slow pair slow alone (its link or NIC), or only in company (contention)?
// The slow pairs of a mesh, shift or spread run go again, each alone, beside a few healthy pairs of the
// same run as controls measured the same way; each is read by the verdict model's test as a part
// of one pair (stats/model_retest.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rdmamesh/engine/host.hpp"
#include "rdmamesh/stats/matrix.hpp"
#include "rdmamesh/stats/outliers.hpp"
#include "rdmamesh/stats/pair_class.hpp"

namespace rdmamesh::stats {

using pair_list = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

struct retest_plan {
  pair_list slow;      // slowest first
  pair_list controls;  // the measured pairs nearest the run's median
  // of `slow`, the pairs the run named as links (rank 0's; not sent to the other ranks): a pair
  // alone is a link's evidence only where a run named the link (the verdict's fold)
  pair_list links;
};

// From a run's send bandwidth: the pairs below `slow_pct` % of their class's median pair,
// slowest first, to at most `max_slow`, each judged alone by judge_retest (a link's evidence: a
// rank's, NIC's or node's is the model's, stats/model_retest.hpp); and for each path
// (`class_of.path`) of those, up to `controls` healthy pairs of that path (more where the slow
// pairs span few paths: twelve in all, of pairs as clear of their ranks as the clearest; other
// paths' where theirs hold fewer), nearest its median, that share no rank with a slow pair where
// possible (any path's where none of theirs is healthy). Empty `slow` when nothing is slow. A
// pair through one of `named_uplinks` is that uplink's evidence and is not among them.
retest_plan plan_retest(const square<double>& bw, const square<std::uint8_t>& flags, const square<std::int32_t>& round,
                        const pair_classes& class_of, double slow_pct, std::size_t max_slow, std::size_t controls,
                        std::span<const switch_group> named_uplinks = {});

// The pairs a job retests after a run (rdmamesh --retest, and the simulator's), beside the
// model's parts: 2 x N slow pairs at most (a slow rank's row and column), 6 controls per path of
// them (12 in all where as clear ones exist); `uplinks` (--topology): the uplinks named in `found`.
// `links`: the links `found` names, among the slow pairs.
retest_plan plan_job_retest(const square<double>& bw, const square<std::uint8_t>& flags,
                            const square<std::int32_t>& round, const pair_classes& class_of, double slow_pct,
                            std::span<const outlier> found, std::span<const switch_group> uplinks = {});

struct retest_verdict {
  std::uint32_t src = 0, dst = 0;
  double before = 0;  // bytes/s in the run retested (NaN: a fresh partner, not in the run)
  double alone = 0;   // bytes/s alone
  // alone, as % of its path's controls alone (judge_pairs_alone), with its 95 % interval (NaN:
  // no control of its path measured)
  double pct = 0;
  double lo_pct = std::numeric_limits<double>::quiet_NaN();
  double hi_pct = std::numeric_limits<double>::quiet_NaN();
  double p_slow = 1;         // the chance, were it at --slow % alone, of reading this slow or slower
  std::size_t controls = 0;  // the controls alone it was read against
  bool still_slow = false;   // its interval lies below --slow
  bool fine = false;         // its interval lies above --slow; neither: undecided, nothing decided on it
  bool named = false;        // the run named this pair a link (plan.links): alone it can confirm one
  bool counted = false;      // named, and counted by the job's test beside the parts (judge_model_retest)
  // its host alone (pair_host): the share of a CPU of the busy end that had less, the median of its
  // controls' the same, and the share of that end's passes that found nothing to do; NaN: unknown
  double cpu_share = std::numeric_limits<double>::quiet_NaN();
  double controls_cpu_share = std::numeric_limits<double>::quiet_NaN();
  double idle_share = std::numeric_limits<double>::quiet_NaN();
  bool starved = false;  // still slow alone, but its host held it back (judge_retest): undecided
};

// What the host gave each measured pair of a run of rounds, in the round that measured it: of
// its two ranks that found work on most of their engine passes, the one with the lower share of
// a CPU (time on a CPU over the round's measured time); of both where neither did. Its share of
// a CPU and the share of its passes that found nothing to post or poll; NaN where unknown.
// `host` holds every rank's rounds in a row: host[rank * rounds + round].
struct pair_host {
  square<double> cpu, idle;
};
pair_host pair_host_figures(const square<std::int32_t>& round, std::span<const engine::host_use> host,
                            std::uint32_t rounds);

// The verdict of every slow pair from the retest run's send bandwidth: each pair alone against
// the controls of its path (judge_pairs_alone: the verdict model's test of a part of one pair),
// still slow where its 95 % interval lies below --slow, fine where above. A pair that moved
// nothing reads `floor_bps`. With `host` (the retest run's pair_host_figures), a pair still slow
// is undecided (`starved`) where its host held it back: its slower end had less of a CPU than
// its controls' ends by enough to explain its shortfall (host_explains) and found work on most of
// its passes, so the network waited for it, not it for the network (an end that waits on a slow
// link finds nothing to do and, on a crowded host, yields its CPU). Whether a named link counts
// is the job's test's (judge_model_retest), in one family with the parts.
std::vector<retest_verdict> judge_retest(const retest_plan& plan, const square<double>& before,
                                         const square<double>& alone, double slow_pct, const pair_classes& class_of,
                                         double floor_bps, const pair_host* host = nullptr);

// Every control alone, as % of the median of its path's other controls alone (pair_classes::path;
// of all the other controls where its path has fewer than two more): what healthy pairs read
// alone in this retest (/retest/controls_pct). Left out of its own reference, a control reads
// against its path as a pair under test does.
std::vector<double> control_pcts(const retest_plan& plan, const square<double>& alone, const pair_classes& class_of);

// A retest round's seconds: long enough that a pair at half the slowest control's rate in the
// run (`bw`, bytes/s, contention included: alone it is as fast or faster), about the retest's
// bound, completes `messages` messages of `size` bytes, between `least_s` and `most_s`. Then a
// slow pair's count, even of zero, tells it from one at the bound (ten expected, none counted:
// e^-10); a fixed short round on a loaded host left the controls a few messages, and a pair
// slowed to a tenth none that meant anything. No measured control: `most_s`.
double retest_round_seconds(const retest_plan& plan, const square<double>& bw, std::uint64_t size, double least_s,
                            double most_s, double messages);

// "a,b;c,d" and back: how rank 0 hands the plan to every rank.
std::string encode_pairs(const pair_list& pairs);
pair_list decode_pairs(const std::string& text);

}  // namespace rdmamesh::stats
