#include "rdmamesh/stats/retest.hpp"
#include "rdmamesh/stats/median.hpp"
#include "rdmamesh/stats/model_retest.hpp"
#include "rdmamesh/stats/outliers.hpp"
#include "rdmamesh/stats/why.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <sstream>
#include <utility>

#include <fmt/format.h>

namespace rdmamesh::stats {
namespace {

struct entry {
  double v;  // its rate in the run (NaN: a pair the run did not measure)
  std::uint32_t a, b;
  int cls;   // its class: what the run's slow pairs are read against
  int path;  // its path (pair_classes::path): what a pair alone is read against
};

bool slower(const entry& x, const entry& y) {
  return x.v < y.v;
}

// Up to `controls` pairs of `fine` for each path a slow pair is on, more where the slow pairs
// span fewer than two paths (min_controls in all), where that path has healthy pairs (a pair
// within a node, between rails or between ranks that share a CPU runs at its own rate, so it is
// read against its own kind); of all `fine` where none does. From each pool: nearest its
// median, away from the ranks the slow pairs share most (a slow NIC would make a control slow too).
void pick_controls(const std::vector<entry>& slow, const std::vector<entry>& fine, std::uint32_t n,
                   std::size_t controls, retest_plan& plan) {
  std::vector<std::uint32_t> involved(n, 0);  // slow pairs each rank is in
  std::set<int> slow_paths;
  for (const auto& e : slow) {
    ++involved[e.a];
    ++involved[e.b];
    slow_paths.insert(e.path);
  }
  const auto pick = [&](std::vector<entry> pool, std::size_t take) {
    std::vector<double> v;
    for (const auto& e : pool) v.push_back(e.v);
    const double centre = median_of(v);
    std::stable_sort(pool.begin(), pool.end(),
                     [&](const entry& x, const entry& y) { return std::abs(x.v - centre) < std::abs(y.v - centre); });
    const auto involvement = [&](const entry& e) { return involved[e.a] + involved[e.b]; };
    std::stable_sort(pool.begin(), pool.end(),
                     [&](const entry& x, const entry& y) { return involvement(x) < involvement(y); });
    // past `controls`, only pairs as clear of the slow pairs' ranks as the clearest: more
    // controls that share a slow NIC would pull the reference down with it
    for (std::size_t i = 0; i < pool.size() && i < take; ++i) {
      if (i >= controls && involvement(pool[i]) > involvement(pool[0])) break;
      plan.controls.emplace_back(pool[i].a, pool[i].b);
    }
  };
  // a pair alone is read against its path's controls, its noise from all of them: a test of one
  // pair on a few degrees of freedom (a Student t of 2 puts 1 % beyond 7 scales) counts nothing at
  // the job's level, so where its paths hold too few healthy pairs, other paths lend theirs
  constexpr std::size_t min_controls = 12;
  const std::size_t each = std::max(controls, (min_controls + slow_paths.size() - 1) / slow_paths.size());
  std::map<int, std::vector<entry>> of_path;
  for (const auto& e : fine) of_path[e.path].push_back(e);
  for (int k : slow_paths) pick(of_path[k], each);
  // the other paths', largest first; a path lends two at least (one control has no centre)
  std::vector<std::pair<std::size_t, int>> others;
  for (const auto& [k, pool] : of_path)
    if (!slow_paths.contains(k) && pool.size() >= 2) others.emplace_back(pool.size(), k);
  std::ranges::sort(others, std::greater<>{});
  for (const auto& [size, k] : others) {
    if (plan.controls.size() >= min_controls) break;
    pick(of_path[k], std::max<std::size_t>(2, min_controls - plan.controls.size()));
  }
  if (plan.controls.empty()) pick(fine, std::max(controls, min_controls));
}

}  // namespace

retest_plan plan_retest(const square<double>& bw, const square<std::uint8_t>& flags, const square<std::int32_t>& round,
                        const pair_classes& class_of, double slow_pct, std::size_t max_slow, std::size_t controls,
                        std::span<const switch_group> named_uplinks) {
  const auto was_measured = [&](std::uint32_t a, std::uint32_t b) {
    return a != b && a < bw.n && b < bw.n && round.at(a, b) >= 0 && flags.at(a, b) == 0 && std::isfinite(bw.at(a, b));
  };
  std::vector<entry> measured;
  std::map<int, std::vector<double>> by_class;
  for (std::size_t i = 0; i < bw.slots(); ++i) {
    const auto a = bw.src(i), b = bw.dst(i);
    if (!was_measured(a, b)) continue;
    measured.push_back({bw.v[i], a, b, class_of(a, b), class_of.path(a, b)});
    by_class[measured.back().cls].push_back(bw.v[i]);
  }
  // slow against its class's median, as the finder judges it: pairs of a slower class (within a
  // node, between rails) are not all slow against the run's median
  std::map<int, double> median;
  for (auto& [k, v] : by_class) median[k] = median_of(std::move(v));
  // a pair through a named uplink is the uplink's evidence, not a link's: the model's parts under
  // it are what its retest measures
  const auto through_named = [&](std::uint32_t a, std::uint32_t b) {
    return std::ranges::any_of(named_uplinks, [&](const switch_group& u) { return u.crosses(a, b); });
  };
  std::vector<entry> slow, fine;
  for (const auto& e : measured) {
    if (through_named(e.a, e.b)) continue;
    (e.v < median.at(e.cls) * slow_pct / 100 ? slow : fine).push_back(e);
  }
  std::ranges::sort(slow, slower);  // the slowest, to at most max_slow
  if (slow.size() > max_slow) slow.resize(max_slow);
  retest_plan plan;
  for (const auto& e : slow) plan.slow.emplace_back(e.a, e.b);
  if (plan.slow.empty()) return plan;
  pick_controls(slow, fine, bw.n, controls, plan);
  return plan;
}

retest_plan plan_job_retest(const square<double>& bw, const square<std::uint8_t>& flags,
                            const square<std::int32_t>& round, const pair_classes& class_of, double slow_pct,
                            std::span<const outlier> found, std::span<const switch_group> uplinks) {
  std::vector<switch_group> named_uplinks;
  for (const auto& o : found) {
    const auto u = std::ranges::find(uplinks, o.node, &switch_group::sw);
    if (o.kind == outlier_kind::uplink && u != uplinks.end()) named_uplinks.push_back(*u);
  }
  auto plan = plan_retest(bw, flags, round, class_of, slow_pct, std::size_t{2} * bw.n, 6, named_uplinks);
  const std::set<std::pair<std::uint32_t, std::uint32_t>> slow(plan.slow.begin(), plan.slow.end());
  for (const auto& o : found) {
    const std::pair<std::uint32_t, std::uint32_t> pair(static_cast<std::uint32_t>(o.rank),
                                                       static_cast<std::uint32_t>(o.peer));
    if (o.kind == outlier_kind::link && o.rank >= 0 && o.peer >= 0 && slow.contains(pair)) plan.links.push_back(pair);
  }
  return plan;
}

std::vector<retest_verdict> judge_retest(const retest_plan& plan, const square<double>& before,
                                         const square<double>& alone, double slow_pct, const pair_classes& class_of,
                                         double floor_bps, const pair_host* host) {
  const auto effects = judge_pairs_alone(plan.slow, plan.controls, alone, class_of, {.slow_pct = slow_pct}, floor_bps);
  // the controls' share of a CPU alone, by path (all of them where its path has none)
  std::map<int, std::vector<double>> cpu_of;
  std::vector<double> cpu_all;
  for (const auto& [a, b] : plan.controls) {
    if (!host || !std::isfinite(host->cpu.at(a, b)) || !std::isfinite(alone.at(a, b))) continue;
    cpu_of[class_of.path(a, b)].push_back(host->cpu.at(a, b));
    cpu_all.push_back(host->cpu.at(a, b));
  }
  const std::set<std::pair<std::uint32_t, std::uint32_t>> links(plan.links.begin(), plan.links.end());
  const double slow = std::log(slow_pct / 100);
  std::vector<retest_verdict> out;
  for (std::size_t i = 0; i < plan.slow.size(); ++i) {
    const auto [a, b] = plan.slow[i];
    const lasting_effect& l = effects[i];
    retest_verdict v{.src = a,
                     .dst = b,
                     .before = before.at(a, b),
                     .alone = alone.at(a, b),
                     .pct = 100 * std::exp(l.effect),
                     .lo_pct = 100 * std::exp(l.lo),
                     .hi_pct = 100 * std::exp(l.hi),
                     .p_slow = l.p_slow,
                     .controls = l.controls,
                     .still_slow = l.hi < slow,
                     .fine = l.cleared,
                     .named = links.contains({a, b})};
    if (host) {
      v.cpu_share = host->cpu.at(a, b);
      v.idle_share = host->idle.at(a, b);
      const auto it = cpu_of.find(class_of.path(a, b));
      const auto& ctl = it != cpu_of.end() ? it->second : cpu_all;
      if (!ctl.empty()) v.controls_cpu_share = median_of(ctl);
    }
    if (v.still_slow && v.idle_share < 0.5 && host_explains(v.cpu_share, v.controls_cpu_share, v.pct / 100)) {
      v.still_slow = false;
      v.starved = true;
    }
    out.push_back(v);
  }
  return out;
}

double retest_round_seconds(const retest_plan& plan, const square<double>& bw, std::uint64_t size, double least_s,
                            double most_s, double messages) {
  double slowest = std::numeric_limits<double>::infinity();  // bytes/s
  for (const auto& [a, b] : plan.controls)
    if (bw.at(a, b) > 0) slowest = std::min(slowest, bw.at(a, b));
  if (!std::isfinite(slowest)) return most_s;
  return std::clamp(messages * static_cast<double>(size) / (0.5 * slowest), least_s, std::max(least_s, most_s));
}

std::vector<double> control_pcts(const retest_plan& plan, const square<double>& alone, const pair_classes& class_of) {
  struct control {
    double bw;
    int path;
  };
  std::vector<control> measured;
  for (const auto& [a, b] : plan.controls)
    if (std::isfinite(alone.at(a, b)) && alone.at(a, b) > 0) measured.push_back({alone.at(a, b), class_of.path(a, b)});
  std::vector<double> out;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    std::vector<double> same, all;
    for (std::size_t j = 0; j < measured.size(); ++j) {
      if (j == i) continue;
      all.push_back(measured[j].bw);
      if (measured[j].path == measured[i].path) same.push_back(measured[j].bw);
    }
    const double reference = median_of(same.size() >= 2 ? same : all);
    if (reference > 0) out.push_back(100 * measured[i].bw / reference);
  }
  return out;
}

pair_host pair_host_figures(const square<std::int32_t>& round, std::span<const engine::host_use> host,
                            std::uint32_t rounds) {
  constexpr double unknown = std::numeric_limits<double>::quiet_NaN();
  pair_host out{square<double>(round.n, unknown), square<double>(round.n, unknown)};
  const auto at = [&](std::uint32_t rank, std::int32_t r) -> const engine::host_use* {
    const std::size_t i = std::size_t{rank} * rounds + static_cast<std::size_t>(r);
    return i < host.size() && host[i].known && host[i].wall_s > 0 ? &host[i] : nullptr;
  };
  for (std::uint32_t a = 0; a < round.n; ++a) {
    for (std::uint32_t b = 0; b < round.n; ++b) {
      const std::int32_t r = round.at(a, b);
      if (a == b || r < 0 || static_cast<std::uint32_t>(r) >= rounds) continue;
      // the end that held the pair back: of the ends that found work on most passes, the one
      // with less of a CPU; an end that mostly found nothing waited on the other end or the
      // network, whatever CPU it had (a receiver of a few thousand messages a second polls an
      // empty queue on nearly every pass, starved or not). Of both where neither was busy.
      const engine::host_use* ends[2] = {at(a, r), at(b, r)};
      const auto busy = [](const engine::host_use* e) { return e->passes > 0 && e->idle_passes < 0.5 * e->passes; };
      const auto share = [](const engine::host_use* e) { return e->cpu_s / e->wall_s; };
      const auto rank = [&](const engine::host_use* e) { return std::pair(!busy(e), share(e)); };
      const engine::host_use* less = nullptr;
      for (const auto* e : ends) {
        if (e && (!less || rank(e) < rank(less))) less = e;
      }
      if (!less) continue;
      out.cpu.at(a, b) = share(less);
      if (less->passes > 0) out.idle.at(a, b) = less->idle_passes / less->passes;
    }
  }
  return out;
}

std::string encode_pairs(const pair_list& pairs) {
  std::string out;
  for (const auto& [a, b] : pairs) out += fmt::format("{}{},{}", out.empty() ? "" : ";", a, b);
  return out;
}

pair_list decode_pairs(const std::string& text) {
  pair_list out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ';')) {
    const auto comma = item.find(',');
    if (comma == std::string::npos) continue;
    out.emplace_back(static_cast<std::uint32_t>(std::stoul(item.substr(0, comma))),
                     static_cast<std::uint32_t>(std::stoul(item.substr(comma + 1))));
  }
  return out;
}

}  // namespace rdmamesh::stats
