#include "rdmamesh/stats/retest.hpp"
#include "rdmamesh/stats/median.hpp"
#include "rdmamesh/stats/outliers.hpp"
#include "rdmamesh/stats/why.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
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
  int cls;
};

bool slower(const entry& x, const entry& y) {
  return x.v < y.v;
}

// Up to `controls` pairs of `fine` for each class a slow pair is in, more where the slow pairs
// span fewer than two classes (min_controls in all), where that class has healthy pairs (a pair
// within a node or between rails runs at its own rate, so it is compared with its own kind); of
// all `fine` where none does. From each pool: nearest its median, away from the ranks the slow
// pairs share most (a slow NIC would make a control slow too).
void pick_controls(const std::vector<entry>& slow, const std::vector<entry>& fine, std::uint32_t n,
                   std::size_t controls, retest_plan& plan) {
  std::vector<std::uint32_t> involved(n, 0);  // slow pairs each rank is in
  std::set<int> slow_classes;
  for (const auto& e : slow) {
    ++involved[e.a];
    ++involved[e.b];
    slow_classes.insert(e.cls);
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
  // the verdict ranks a side's pairs alone among all the controls alone (lower_rank_p): with
  // fewer than eight, four pairs below them all are no evidence at the job's level
  constexpr std::size_t min_controls = 8;
  const std::size_t each = std::max(controls, (min_controls + slow_classes.size() - 1) / slow_classes.size());
  for (int k : slow_classes) {
    std::vector<entry> same;
    for (const auto& e : fine)
      if (e.cls == k) same.push_back(e);
    pick(std::move(same), each);
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
    measured.push_back({bw.v[i], a, b, class_of(a, b)});
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
  auto plan = plan_retest(bw, flags, round, class_of, slow_pct, std::size_t{2} * bw.n, 4, named_uplinks);
  const std::set<std::pair<std::uint32_t, std::uint32_t>> slow(plan.slow.begin(), plan.slow.end());
  for (const auto& o : found) {
    const std::pair<std::uint32_t, std::uint32_t> pair(static_cast<std::uint32_t>(o.rank),
                                                       static_cast<std::uint32_t>(o.peer));
    if (o.kind == outlier_kind::link && o.rank >= 0 && o.peer >= 0 && slow.contains(pair)) plan.links.push_back(pair);
  }
  return plan;
}

namespace {

// --slow %, or e^(-3s) where lower: s the robust spread (1.4826 x MAD) of the controls' log
// rates, held to [least_s, most_s]
double spread_bound_pct(const std::vector<double>& controls, double slow_pct, double least_s, double most_s) {
  const double reference = median_of(controls);
  if (!(reference > 0)) return slow_pct;
  std::vector<double> dev;
  for (double c : controls) dev.push_back(std::abs(std::log(c / reference)));
  constexpr double mad_to_sd = 1.4826, k = 3;
  const double s = std::max(least_s, std::min(mad_to_sd * median_of(dev), most_s));
  return std::min(slow_pct, 100 * std::exp(-k * s));
}

}  // namespace

double retest_bound_pct(const std::vector<double>& controls, double slow_pct) {
  // held to half speed: one fast control must not stretch the spread so far that a sick node's
  // pairs alone read fine (a side's several pairs outvote one control's noise); and at least
  // 0.1: four controls that happen to agree would bring back the bare --slow bound that healthy
  // pairs fall under
  return spread_bound_pct(controls, slow_pct, 0.1, std::numbers::ln2 / 3);
}

double retest_fine_bound_pct(const std::vector<double>& controls, double slow_pct) {
  return std::max(retest_bound_pct(controls, slow_pct),
                  spread_bound_pct(controls, slow_pct, 0, std::numeric_limits<double>::infinity()));
}

double retest_link_bound_pct(const std::vector<double>& controls, double slow_pct) {
  // one pair alone is one sample: below the controls' spread not held to half speed (a busy
  // host's healthy link alone can read well under half of widely spread controls), or below
  // half the slowest control, so that wide controls still confirm a link far beneath them all
  const double reference = median_of(controls);
  if (!(reference > 0)) return slow_pct;
  const double spread = spread_bound_pct(controls, slow_pct, 0.1, std::numeric_limits<double>::infinity());
  const double under_all = 50 * std::ranges::min(controls) / reference;
  return std::min(retest_bound_pct(controls, slow_pct), std::max(spread, under_all));
}

std::vector<retest_verdict> judge_retest(const retest_plan& plan, const square<double>& before,
                                         const square<double>& alone, double slow_pct, const pair_classes& class_of,
                                         const pair_host* host) {
  struct controls_of {
    std::vector<double> bw, cpu;
    // what a slow pair is read against, once per class (a retest at thousands of ranks holds
    // thousands of slow pairs and of controls)
    double reference = 0, bound = 0, link_bound = 0, fine_bound = 0, cpu_share = 0;
    void bounds(double slow_pct) {
      reference = median_of(bw);
      bound = retest_bound_pct(bw, slow_pct);
      link_bound = retest_link_bound_pct(bw, slow_pct);
      fine_bound = retest_fine_bound_pct(bw, slow_pct);
      cpu_share = cpu.empty() ? std::numeric_limits<double>::quiet_NaN() : median_of(cpu);
    }
  };
  std::map<int, controls_of> by_class;
  controls_of all;
  for (const auto& [a, b] : plan.controls) {
    if (!(std::isfinite(alone.at(a, b)) && alone.at(a, b) > 0)) continue;
    for (auto* into : {&by_class[class_of(a, b)], &all}) {
      into->bw.push_back(alone.at(a, b));
      if (host && std::isfinite(host->cpu.at(a, b))) into->cpu.push_back(host->cpu.at(a, b));
    }
  }
  all.bounds(slow_pct);
  for (auto& [cls, ctl] : by_class) ctl.bounds(slow_pct);
  const std::set<std::pair<std::uint32_t, std::uint32_t>> links(plan.links.begin(), plan.links.end());
  std::vector<retest_verdict> out;
  for (const auto& [a, b] : plan.slow) {
    // its own class's controls; all of them where its class measured fewer than two (one
    // control is one sample, no median)
    const auto it = by_class.find(class_of(a, b));
    const controls_of& ctl = it != by_class.end() && it->second.bw.size() >= 2 ? it->second : all;
    const double reference = ctl.reference;
    retest_verdict v{.src = a,
                     .dst = b,
                     .before = before.at(a, b),
                     .alone = alone.at(a, b),
                     .bound_pct = ctl.bound,
                     .link_bound_pct = ctl.link_bound,
                     .fine_bound_pct = ctl.fine_bound,
                     .controls = ctl.bw.size(),
                     .named = links.contains({a, b})};
    v.pct = reference > 0 ? 100 * v.alone / reference : std::numeric_limits<double>::quiet_NaN();
    // unmeasured alone counts as slow: it did not recover; with no control alone to read it
    // against, nothing is decided
    const bool read = reference > 0;
    v.still_slow = read && !(v.pct >= v.bound_pct);
    v.beyond_spread = read && !(v.pct >= v.link_bound_pct);
    v.fine = v.pct >= v.fine_bound_pct;
    if (host) {
      v.cpu_share = host->cpu.at(a, b);
      v.idle_share = host->idle.at(a, b);
      v.controls_cpu_share = ctl.cpu_share;  // NaN where its class had no host figure
    }
    if (v.still_slow && v.idle_share < 0.5 && host_explains(v.cpu_share, v.controls_cpu_share, v.pct / 100)) {
      v.still_slow = v.beyond_spread = false;
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
    int cls;
  };
  std::vector<control> measured;
  for (const auto& [a, b] : plan.controls)
    if (std::isfinite(alone.at(a, b)) && alone.at(a, b) > 0) measured.push_back({alone.at(a, b), class_of(a, b)});
  std::vector<double> out;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    std::vector<double> same, all;
    for (std::size_t j = 0; j < measured.size(); ++j) {
      if (j == i) continue;
      all.push_back(measured[j].bw);
      if (measured[j].cls == measured[i].cls) same.push_back(measured[j].bw);
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
