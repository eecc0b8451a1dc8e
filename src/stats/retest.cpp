#include "rdmamesh/stats/retest.hpp"
#include "rdmamesh/stats/median.hpp"
#include "rdmamesh/stats/outliers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <span>
#include <sstream>

#include <fmt/format.h>

namespace rdmamesh::stats {
retest_plan plan_retest(const square<double>& bw, const square<std::uint8_t>& flags, const square<std::int32_t>& round,
                        std::span<const std::int32_t> node_of, double slow_pct, std::size_t max_slow,
                        std::size_t controls, const pair_list& named) {
  struct entry {
    double v;
    std::uint32_t a, b;
  };
  std::vector<entry> measured;
  for (std::uint32_t a = 0; a < bw.n; ++a) {
    for (std::uint32_t b = 0; b < bw.n; ++b) {
      if (a == b || round.at(a, b) < 0 || flags.at(a, b) != 0 || !std::isfinite(bw.at(a, b))) continue;
      measured.push_back({bw.at(a, b), a, b});
    }
  }
  retest_plan plan;
  std::vector<double> values;
  for (const auto& e : measured) values.push_back(e.v);
  const double median = median_of(values);
  if (!(median > 0)) return plan;
  std::vector<entry> slow, fine;
  const auto was_named = [&](const entry& e) { return std::ranges::find(named, std::pair{e.a, e.b}) != named.end(); };
  for (const auto& e : measured) (e.v < median * slow_pct / 100 || was_named(e) ? slow : fine).push_back(e);
  std::sort(slow.begin(), slow.end(), [](const entry& x, const entry& y) { return x.v < y.v; });
  if (slow.size() > max_slow) slow.resize(max_slow);
  std::vector<std::uint32_t> involved(bw.n, 0);  // slow pairs each rank is in
  for (const auto& e : slow) {
    plan.slow.emplace_back(e.a, e.b);
    ++involved[e.a];
    ++involved[e.b];
  }
  if (plan.slow.empty()) return plan;
  // controls of the slow pairs' class (across nodes, or within one: loopback runs up to twice
  // as fast, and mixed controls once spread so wide that a node at 15 % read as noise), where
  // that class has healthy pairs
  auto across = [&](const entry& e) { return across_nodes(node_of, e.a, e.b); };
  const auto n_across = std::count_if(slow.begin(), slow.end(), across);
  const bool want_across = 2 * static_cast<std::size_t>(n_across) >= slow.size();
  std::vector<entry> same;
  for (const auto& e : fine)
    if (across(e) == want_across) same.push_back(e);
  if (!same.empty()) fine = std::move(same);
  std::vector<double> fine_values;
  for (const auto& e : fine) fine_values.push_back(e.v);
  const double centre = fine_values.empty() ? median : median_of(fine_values);
  // nearest the class's median, away from the ranks the slow pairs share most (a slow NIC
  // would make a control slow too)
  std::stable_sort(fine.begin(), fine.end(),
                   [&](const entry& x, const entry& y) { return std::abs(x.v - centre) < std::abs(y.v - centre); });
  std::stable_sort(fine.begin(), fine.end(), [&](const entry& x, const entry& y) {
    return involved[x.a] + involved[x.b] < involved[y.a] + involved[y.b];
  });
  for (std::size_t i = 0; i < fine.size() && plan.controls.size() < controls; ++i) {
    plan.controls.emplace_back(fine[i].a, fine[i].b);
  }
  return plan;
}

pair_list named_pairs(std::span<const outlier> found, std::span<const std::int32_t> node_of,
                      std::span<const nic_group> nics, std::uint32_t n) {
  pair_list out;
  for (const auto& o : found) {
    if (o.kind != outlier_kind::rank && o.kind != outlier_kind::node && o.kind != outlier_kind::nic) continue;
    std::vector<std::uint8_t> member(n, 0);
    for (std::uint32_t r = 0; r < n; ++r) {
      member[r] = o.kind == outlier_kind::rank ? r == static_cast<std::uint32_t>(o.rank)
                  : o.kind == outlier_kind::node
                      ? r < node_of.size() && node_of[r] == o.node
                      : std::ranges::any_of(nics, [&](const nic_group& g) {
                          return g.node == o.node && g.rail == o.peer && r < g.members.size() && g.members[r];
                        });
    }
    for (std::uint32_t a = 0; a < n; ++a) {
      for (std::uint32_t b = 0; b < n; ++b) {
        const bool send = std::isfinite(o.send_pct) && member[a] && !member[b];
        const bool recv = std::isfinite(o.recv_pct) && !member[a] && member[b];
        // a node's pairs among its own ranks stay inside it, as the finder judged them
        if ((send || recv) && (o.kind != outlier_kind::node || across_nodes(node_of, a, b))) out.emplace_back(a, b);
      }
    }
  }
  std::ranges::sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double retest_bound_pct(const std::vector<double>& controls, double slow_pct) {
  const double reference = median_of(controls);
  if (!(reference > 0)) return slow_pct;
  std::vector<double> dev;
  for (double c : controls) dev.push_back(std::abs(std::log(c / reference)));
  // MAD of the log rates, as a standard deviation, held between two bounds: four controls that
  // happen to agree would bring back the bare --slow bound that healthy pairs fall under, and one
  // fast control once stretched it so far that a sick node's pairs at 21 % alone read fine
  // (under half speed alone is slow whatever the controls do)
  constexpr double mad_to_sd = 1.4826, k = 3, least_s = 0.1, most_s = std::numbers::ln2 / k;
  const double s = std::clamp(mad_to_sd * median_of(dev), least_s, most_s);
  return std::min(slow_pct, 100 * std::exp(-k * s));
}

std::vector<retest_verdict> judge_retest(const retest_plan& plan, const square<double>& before,
                                         const square<double>& alone, double slow_pct) {
  std::vector<double> ctl;
  for (const auto& [a, b] : plan.controls) {
    if (std::isfinite(alone.at(a, b)) && alone.at(a, b) > 0) ctl.push_back(alone.at(a, b));
  }
  const double reference = median_of(ctl);
  const double bound = retest_bound_pct(ctl, slow_pct);
  std::vector<retest_verdict> out;
  for (const auto& [a, b] : plan.slow) {
    retest_verdict v{.src = a, .dst = b, .before = before.at(a, b), .alone = alone.at(a, b), .bound_pct = bound};
    v.pct = reference > 0 ? 100 * v.alone / reference : std::numeric_limits<double>::quiet_NaN();
    v.still_slow = !(v.pct >= bound);  // unmeasured alone counts as slow: it did not recover
    out.push_back(v);
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
