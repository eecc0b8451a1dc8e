#include "rdmamesh/sim/tally.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/stats/model.hpp"
#include "rdmamesh/stats/model_retest.hpp"
#include "rdmamesh/stats/pair_class.hpp"
#include "rdmamesh/stats/retest.hpp"

namespace rdmamesh::sim {
namespace {

// The leaf switches of a run (their indexes 0..L-1; the pods' follow them).
std::int32_t leaves_of(const std::vector<std::int32_t>& leaf_of) {
  return leaf_of.empty() ? 0 : *std::ranges::max_element(leaf_of) + 1;
}

// Whether a counted cause names the injected fault's part. A NIC that one rank drives is that
// rank too: either name points at the same port.
bool names_fault(const stats::folded_cause& c, const simulated_run& r, fault_kind k) {
  using K = stats::outlier_kind;
  switch (k) {
    case fault_kind::node: return c.kind == K::node && c.node == r.fault_node;
    case fault_kind::nic:
      return (c.kind == K::nic && c.node == r.fault_node && c.peer == r.fault_rail) ||
             (c.kind == K::rank && c.rank == r.fault_rank);
    case fault_kind::rank: return c.kind == K::rank && c.rank == r.fault_rank;
    case fault_kind::link: return c.kind == K::link && c.rank == r.fault_rank && c.peer == r.fault_peer;
    case fault_kind::uplink: return c.kind == K::uplink && c.node == r.fault_leaf;
    case fault_kind::pod:  // of two pods, the other's uplink down is the same link (the finder's `peer`)
      return c.kind == K::uplink &&
             (c.node == leaves_of(r.leaf_of) + r.fault_pod || c.peer == leaves_of(r.leaf_of) + r.fault_pod);
    case fault_kind::none: return false;
  }
  return false;
}

// Every switch's uplink as --topology makes them candidates: each leaf's, then each pod's (its
// index after the leaves'); a tier of one switch has none (no pair leaves it).
std::vector<stats::switch_group> uplinks_of(const std::vector<std::int32_t>& leaf_of,
                                            const std::vector<std::int32_t>& pod_of) {
  std::vector<stats::switch_group> uplinks;
  const auto tier = [&](const std::vector<std::int32_t>& of, std::int32_t first) {
    std::vector<stats::switch_group> out;
    for (std::int32_t sw = 0; std::ranges::count(of, sw) > 0; ++sw) {
      stats::switch_group u{first + sw, {}};
      for (auto x : of) u.members.push_back(x == sw);
      out.push_back(std::move(u));
    }
    if (out.size() >= 2) uplinks.insert(uplinks.end(), out.begin(), out.end());
  };
  tier(leaf_of, 0);
  tier(pod_of, leaves_of(leaf_of));
  return uplinks;
}

}  // namespace

judged judge(std::span<const stats::run_matrices* const> runs, std::uint64_t size, bool counted, std::uint64_t cq_mod,
             const std::vector<std::int32_t>& node_of, const std::vector<std::int32_t>& rail_of, double slow_pct,
             const std::vector<std::int32_t>& leaf_of, std::uint32_t stated_draws, const retest_source* retest,
             const std::vector<std::int32_t>& pod_of, const std::vector<std::int32_t>& cpu_of, double alpha) {
  const auto nics = stats::nic_groups(node_of, rail_of);
  const auto uplinks = uplinks_of(leaf_of, pod_of);
  const stats::finder_settings s{
      .slow_pct = slow_pct, .counted = counted, .alpha = alpha, .max_quantum = cq_mod, .min_pair_s = 0.1};
  const auto n = static_cast<std::uint32_t>(node_of.size());
  const stats::pair_classes classes(n, node_of, uplinks, nics, cpu_of);
  judged j;
  j.reports.reserve(runs.size());  // the judged runs point into it
  std::vector<stats::judged_run> judged_runs;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& m = *runs[i];
    const auto& report = j.reports.emplace_back(stats::find_outliers(m, size, node_of, s, uplinks, nics));
    auto& run = judged_runs.emplace_back(stats::judged_run{static_cast<std::uint32_t>(i),
                                                           fmt::format("mesh {}", i),
                                                           &report,
                                                           stats::is_judged(report),
                                                           {},
                                                           {},
                                                           {},
                                                           false,
                                                           0});
    if (retest == nullptr) continue;
    // as app/retest.cpp plans it and app/assemble.cpp judges it: the job's level split over its runs
    const auto split = static_cast<std::uint32_t>(runs.size());
    const stats::model_settings ms{.alpha = retest->false_alarm / split, .slow_pct = slow_pct};
    const auto plan = stats::plan_full_retest(m, classes, ms, report, node_of, nics, uplinks);
    if (plan.pairs.slow.empty()) continue;
    stats::pair_list all = plan.pairs.slow;
    all.insert(all.end(), plan.pairs.controls.begin(), plan.pairs.controls.end());
    j.alone += all.size();
    const auto alone = retest->alone(i, all);
    // a pair that moved nothing alone reads half a message over the simulated second
    const double floor_bps = static_cast<double>(size) / 2;
    run.alone = stats::judge_retest(plan.pairs, m.tx_bw, alone, slow_pct, classes, floor_bps);
    run.parts = stats::judge_model_retest(plan.model, alone, classes, ms, floor_bps, {}, run.alone);
    run.retested = true;
    run.alpha = ms.alpha;
    run.alpha_runs = split;
  }
  j.verdict = stats::fold(judged_runs, node_of, uplinks, nics);
  if (stated_draws > 0) {
    j.stated = stats::estimate_false_alarms(*runs.front(), size, node_of, s, uplinks, nics, j.reports.front(),
                                            {stated_draws, 600, stated_draws});
  }
  return j;
}

std::string describe(const stats::folded_cause& c) {
  switch (c.kind) {
    case stats::outlier_kind::node: return fmt::format("node{}", c.node);
    case stats::outlier_kind::nic: return fmt::format("nic{}.{}", c.node, c.peer);
    case stats::outlier_kind::rank: return fmt::format("rank{}", c.rank);
    case stats::outlier_kind::link: return fmt::format("link{}-{}", c.rank, c.peer);
    case stats::outlier_kind::uplink: return fmt::format("uplink{}", c.node);
    default: return stats::to_string(c.kind);
  }
}

fault parse_fault(const std::string& text) {
  if (text == "none") return {};
  const auto colon = text.find(':');
  const std::map<std::string, fault_kind> kinds{{"rank", fault_kind::rank},     {"nic", fault_kind::nic},
                                                {"node", fault_kind::node},     {"link", fault_kind::link},
                                                {"uplink", fault_kind::uplink}, {"pod", fault_kind::pod}};
  const auto it = kinds.find(text.substr(0, colon));
  double pct = 50;
  if (colon != std::string::npos) {
    std::size_t used = 0;
    try {
      pct = std::stod(text.substr(colon + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || !(pct >= 0 && pct < 100))
      throw std::invalid_argument(
          fmt::format("--fault {}: the rate left is a percentage from 0 to 100, e.g. nic:50", text));
  }
  if (it == kinds.end())
    throw std::invalid_argument(
        fmt::format("--fault {}: one of none, rank:PCT, nic:PCT, node:PCT, link:PCT, uplink:PCT, pod:PCT", text));
  return {it->second, pct / 100};
}

namespace {

// Whether the noise model drew a counted rank, NIC or node lastingly below --slow: what its ranks
// keep of their run's effects alone (noise_model::keep), averaged over them, below the bound on
// either side. Such a part is slow by --slow's own definition, whatever fault was injected.
bool drawn_slow(const stats::folded_cause& c, const simulated_run& r, const noise_model& nm, double slow_pct) {
  if (c.kind != stats::outlier_kind::rank && c.kind != stats::outlier_kind::nic && c.kind != stats::outlier_kind::node)
    return false;
  double send = 0, recv = 0, k = 0;
  for (std::size_t a = 0; a < r.node_of.size(); ++a) {
    const bool in = c.kind == stats::outlier_kind::rank  ? static_cast<std::int32_t>(a) == c.rank
                    : c.kind == stats::outlier_kind::nic ? r.node_of[a] == c.node && r.rail_of[a] == c.peer
                                                         : r.node_of[a] == c.node;
    if (!in) continue;
    send += r.send[a];
    recv += r.recv[a];
    k += 1;
  }
  return k > 0 && nm.keep * std::min(send, recv) / k < std::log(slow_pct / 100);
}

}  // namespace

tally run_jobs(const fabric_shape& f, const noise_model& nm, const fault& x, std::uint32_t jobs, std::uint64_t seed,
               std::uint32_t stated_draws, bool retest, double false_alarm, std::optional<std::uint32_t> only,
               std::uint32_t runs) {
  std::mt19937_64 g(seed);
  tally t;
  for (std::uint32_t j = 0; j < jobs; ++j) {
    std::vector<simulated_run> drawn;
    std::vector<std::uint64_t> alone_seeds;
    for (std::uint32_t k = 0; k < std::max(runs, 1U); ++k) {
      drawn.push_back(generate(f, nm, x, g, drawn.empty() ? nullptr : &drawn.front()));
      alone_seeds.push_back(g());  // the run's draws stay the same whatever its retest plans
    }
    const auto& r = drawn.front();
    if (only && j != *only) continue;
    std::vector<const stats::run_matrices*> ms;
    for (const auto& d : drawn) ms.push_back(&d.m);
    double drawing = 0;  // the pairs alone drawn: what rdmamesh measures, not what it judges
    const retest_source alone{[&](std::size_t k, const stats::pair_list& pairs) {
                                const auto d0 = std::chrono::steady_clock::now();
                                auto out = generate_alone(drawn[k], nm, x, pairs, alone_seeds[k]);
                                drawing += std::chrono::duration<double>(std::chrono::steady_clock::now() - d0).count();
                                return out;
                              },
                              false_alarm > 0 ? false_alarm : default_false_alarm_pct / 100};
    const auto t0 = std::chrono::steady_clock::now();
    auto v = judge(ms, 4096, true, 1, r.node_of, r.rail_of, 90, r.leaf_of, stated_draws, retest ? &alone : nullptr,
                   r.pod_of, r.cpu_of, alone.false_alarm);
    t.retested += v.alone > 0;
    t.alone += v.alone;
    t.run_named += std::ranges::any_of(v.reports, [](const stats::outlier_report& rep) {
      return std::ranges::any_of(rep.found, stats::names_a_cause);
    });
    t.stated_pct += v.stated.drawn > 0 ? v.stated.pct() : 0;
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - drawing;
    t.seconds += took;
    // a long row's slow job is worth knowing about while the row still runs
    if (took > 60) fmt::print(stderr, "rdmamesh-sim: job {} took {:.0f} s to judge\n", j, took);
    if (took > t.slowest) {
      t.slowest = took;
      t.slowest_job = j;
    }
    ++t.jobs;
    t.unjudged += v.verdict.runs_judged == 0;
    bool hit = false, other = false;
    std::set<std::int32_t> drained, slow_drained;
    for (const auto& c : v.verdict.causes) {
      if (!c.counted) continue;
      if (names_fault(c, r, x.kind)) {
        hit = true;
        continue;
      }
      other = true;
      ++t.false_kinds[stats::to_string(c.kind)];
      if (c.kind == stats::outlier_kind::uplink || c.kind == stats::outlier_kind::fabric) continue;  // no node drained
      const bool of_rank = c.kind == stats::outlier_kind::rank || c.kind == stats::outlier_kind::link;
      const std::int32_t node = of_rank ? r.node_of[static_cast<std::size_t>(c.rank)] : c.node;
      if (node < 0 || node == r.fault_node) continue;
      drained.insert(node);
      if (drawn_slow(c, r, nm, 90)) slow_drained.insert(node);
    }
    t.named += hit;
    if (!hit && x.kind != fault_kind::none) {
      std::vector<std::string> counted;
      for (const auto& c : v.verdict.causes)
        if (c.counted) counted.push_back(describe(c));
      t.misses.emplace_back(j, std::move(counted));
    }
    t.false_jobs += other;
    t.false_nodes += drained.size();
    t.drawn_slow_nodes += slow_drained.size();
  }
  return t;
}

}  // namespace rdmamesh::sim
