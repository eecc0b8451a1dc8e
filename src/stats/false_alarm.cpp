// Healthy runs drawn like the measured one and judged alike. See the header for the model.
#include "rdmamesh/stats/false_alarm.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "rdmamesh/stats/model.hpp"
#include "rdmamesh/stats/pair_class.hpp"

namespace rdmamesh::stats {
namespace {

// 1.4826 x the median absolute value of a t with 3 degrees of freedom (0.7649): what a robust
// scale of t(3) draws reads, per unit of the t's own scale
constexpr double t3_robust = 1.1341;
constexpr double tail_dof = 3;

using pair_draw = draw_model::pair;

// Whether a pair is a named cause's: an end in a named rank, node or NIC, through a named
// uplink, or the named link itself.
bool of_a_cause(const outlier& o, std::uint32_t a, std::uint32_t b, std::span<const std::int32_t> node_of,
                std::span<const switch_group> uplinks, std::span<const nic_group> nics) {
  const auto node = [&](std::uint32_t r) { return r < node_of.size() ? node_of[r] : -1; };
  const auto in = [](std::span<const std::uint8_t> members, std::uint32_t r) {
    return r < members.size() && members[r];
  };
  switch (o.kind) {
    case outlier_kind::rank: return static_cast<std::int32_t>(a) == o.rank || static_cast<std::int32_t>(b) == o.rank;
    case outlier_kind::node: return node(a) == o.node || node(b) == o.node;
    case outlier_kind::nic:
      return std::ranges::any_of(
          nics, [&](const nic_group& g) { return g.node == o.node && g.rail == o.peer && (g.holds(a) || g.holds(b)); });
    case outlier_kind::uplink:
      return std::ranges::any_of(
          uplinks, [&](const switch_group& u) { return u.sw == o.node && in(u.members, a) != in(u.members, b); });
    case outlier_kind::link: return static_cast<std::int32_t>(a) == o.rank && static_cast<std::int32_t>(b) == o.peer;
    default: return false;
  }
}

// Each measured pair's centre: the median of its cohort (class, round) where that holds three
// pairs, else its class's, over the pairs no named cause touches (a healthy fabric's level: a
// node slow both ways is most of a mesh's pairs across nodes), or over all where none is left.
std::vector<pair_draw> centres(const run_matrices& m, std::span<const std::int32_t> node_of,
                               std::span<const switch_group> uplinks, std::span<const nic_group> nics,
                               const outlier_report& judged) {
  const std::uint32_t n = m.tx_bw.n;
  const pair_classes class_of(n, node_of, uplinks, nics);
  // by (class, round), then by class: [0] the healthy pairs, [1] all of them
  std::map<std::pair<int, int>, std::array<std::vector<double>, 2>> cohort;
  std::map<int, std::array<std::vector<double>, 2>> klass;
  std::vector<std::pair<std::pair<int, int>, pair_draw>> pairs;
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = 0; b < n; ++b) {
      const double bw = m.tx_bw.at(a, b), secs = m.tx_s.at(a, b);
      if (a == b || m.round.at(a, b) < 0 || m.flags.at(a, b) != 0 || !(secs > 0) || !(bw > 0) || !std::isfinite(bw))
        continue;
      const std::pair<int, int> key{class_of(a, b), m.round.at(a, b)};
      const bool healthy = std::ranges::none_of(
          judged.found, [&](const outlier& o) { return of_a_cause(o, a, b, node_of, uplinks, nics); });
      for (int all = healthy ? 0 : 1; all < 2; ++all) {
        cohort[key][all].push_back(std::log(bw));
        klass[key.first][all].push_back(std::log(bw));
      }
      pairs.push_back({key, {a, b, 0, secs}});
    }
  }
  // each cohort's centre once (a mesh is one cohort of N^2 pairs)
  std::map<int, double> class_centre;
  for (auto& [k, v] : klass) class_centre[k] = median_of(v[v[0].empty() ? 1 : 0]);
  std::map<std::pair<int, int>, double> centre;
  for (auto& [key, v] : cohort) {
    centre[key] = v[0].size() >= 3               ? median_of(v[0])
                  : !klass[key.first][0].empty() ? class_centre[key.first]
                  : v[1].size() >= 3             ? median_of(v[1])
                                                 : class_centre[key.first];
  }
  std::vector<pair_draw> out;
  for (auto& [key, p] : pairs) {
    p.centre = centre[key];
    out.push_back(p);
  }
  return out;
}

// How much the ranks no named cause holds differ, one side's effects (1.4826 x MAD): the run's
// healthy spread. A named node's ranks among six would set the median deviation to the healthy
// ranks' largest. The whole run's where fewer than three are left.
double healthy_scale(const std::vector<double>& e, const std::vector<std::uint32_t>& count,
                     const std::vector<std::uint8_t>& named, double whole) {
  std::vector<double> v;
  for (std::size_t r = 0; r < e.size(); ++r)
    if (count[r] > 0 && !named[r] && std::isfinite(e[r])) v.push_back(e[r]);
  if (v.size() < 3) return whole;
  const double mid = median_of(v);
  for (auto& x : v) x = std::fabs(x - mid);
  return 1.4826 * median_of(std::move(v));
}

// The t scale of the effects behind a robust scale measured from k pairs a rank: less what the
// pairs' own noise adds to each estimated effect (its mean over k residuals)
double effect_scale(double robust, double noise, double k) {
  const double own = k > 0 ? noise * noise / k : 0;
  return std::sqrt(std::max(robust * robust - own, 0.0)) / t3_robust;
}

}  // namespace

std::vector<std::uint8_t> named_ranks(std::span<const outlier> found, std::span<const std::int32_t> node_of,
                                      std::span<const nic_group> nics, std::uint32_t n) {
  std::vector<std::uint8_t> out(n, 0);
  for (const auto& o : found) {
    // a NIC's ranks from its group, not a scan of every rank against every NIC
    if (o.kind == outlier_kind::nic) {
      for (const auto& g : nics)
        if (g.node == o.node && g.rail == o.peer)
          for (const auto r : g.members)
            if (r < n) out[r] = 1;
      continue;
    }
    if (o.kind != outlier_kind::rank && o.kind != outlier_kind::node) continue;
    // a rank is its own pairs' both ends: one of them, the named cause's
    for (std::uint32_t r = 0; r < n; ++r) out[r] |= of_a_cause(o, r, r, node_of, {}, nics);
  }
  return out;
}

draw_model model_for_draws(const run_matrices& m, std::uint64_t msg_size, std::span<const std::int32_t> node_of,
                           const finder_settings& s, std::span<const switch_group> uplinks,
                           std::span<const nic_group> nics, const outlier_report& judged) {
  draw_model out;
  if (!std::isfinite(judged.threshold_pct) || msg_size == 0) return out;
  out.pairs = centres(m, node_of, uplinks, nics, judged);
  if (out.pairs.empty()) return out;
  const std::uint32_t n = m.tx_bw.n;
  out.n = n;
  out.msg_size = msg_size;
  // the finder's own model: what it reads as the ranks' spread and the noise, not what a plainer
  // model leaves unexplained (a shift run's rounds)
  const pair_classes classes(n, node_of, uplinks, nics);
  const effects_fit fit =
      fit_run(m, node_of, classes, uplinks, s.counted ? static_cast<double>(judged.quantum) : 0, msg_size);
  const auto typical = [&](const std::vector<std::uint32_t>& count) {
    std::vector<double> k;
    for (auto c : count)
      if (c > 0) k.push_back(c);
    return median_of(std::move(k));
  };
  const auto named = named_ranks(judged.found, node_of, nics, n);
  out.send_t = effect_scale(healthy_scale(fit.send, fit.n_send, named, fit.send_scale), fit.noise, typical(fit.n_send));
  out.recv_t = effect_scale(healthy_scale(fit.recv, fit.n_recv, named, fit.recv_scale), fit.noise, typical(fit.n_recv));
  out.step = s.counted ? static_cast<double>(std::max<std::uint64_t>(judged.quantum, 1)) : 0;
  // what the pairs spread beyond their counts' own steps (-n: all of it)
  std::vector<double> lambdas;
  for (const auto& p : out.pairs) lambdas.push_back(std::exp(p.centre) * p.secs / static_cast<double>(msg_size));
  const double count_var = out.step > 0 ? out.step / std::max(median_of(lambdas), 1.0) : 0;
  out.pair_sd = std::sqrt(std::max(fit.noise * fit.noise - count_var, 0.0));
  // the run's shape, which every draw keeps: each scheduled pair's round, seconds and flags
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = 0; b < n; ++b) {
      const double secs = m.tx_s.at(a, b);
      if (m.round.at(a, b) >= 0 || m.flags.at(a, b) != 0 || !std::isnan(secs))
        out.slots.push_back({a, b, m.round.at(a, b), m.flags.at(a, b), secs});
    }
  }
  return out;
}

std::size_t draw_bytes(const draw_model& model) {
  // tx_bw, tx_msgs, tx_s, flags and round of draw_false_alarms' run
  constexpr std::size_t per_pair =
      2 * sizeof(double) + sizeof(std::uint64_t) + sizeof(std::uint8_t) + sizeof(std::int32_t);
  const std::size_t n = model.n;
  return n * n * per_pair + model.pairs.size() * sizeof(draw_model::pair) +
         model.slots.size() * sizeof(draw_model::slot);
}

false_alarms draw_false_alarms(const draw_model& model, std::span<const std::int32_t> node_of, const finder_settings& s,
                               std::span<const switch_group> uplinks, std::span<const nic_group> nics,
                               std::uint32_t first, std::uint32_t stride, const false_alarm_settings& fa) {
  false_alarms out;
  if (model.pairs.empty() || stride == 0 || first >= fa.max_draws) return out;
  const std::uint32_t n = model.n;
  const double size = static_cast<double>(model.msg_size);
  // --expect's floor is the user's, not noise: a fabric below it is below it in every draw
  finder_settings noise_only = s;
  noise_only.expect_bps = 0;
  run_matrices r = unmeasured_run(n);
  for (const auto& sl : model.slots) {
    r.tx_s.at(sl.a, sl.b) = sl.secs;
    r.flags.at(sl.a, sl.b) = sl.flags;
    r.round.at(sl.a, sl.b) = sl.round;
  }
  std::vector<double> send(n), recv(n);
  const auto start = std::chrono::steady_clock::now();
  for (std::uint32_t k = first; k < fa.max_draws; k += stride) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= fa.max_seconds) break;
    // draw k from its own seed: the same figure whichever rank draws it
    std::seed_seq seed{fa.seed, std::uint64_t{k}};
    std::mt19937_64 g(seed);
    // fresh distributions too: a normal keeps the second value of each pair it makes
    std::student_t_distribution<double> t(tail_dof);
    std::normal_distribution<double> z(0, 1);
    for (auto& e : send) e = model.send_t * t(g);
    for (auto& e : recv) e = model.recv_t * t(g);
    for (const auto& p : model.pairs) {
      const double rate = std::exp(p.centre + send[p.a] + recv[p.b] + model.pair_sd * z(g));
      const double expected = rate * p.secs / size;
      // duration mode: a count in the run's steps (Poisson in steps); -n: exact counts, its time drawn
      double msgs = expected;
      if (model.step > 0)
        msgs = model.step * static_cast<double>(std::poisson_distribution<std::uint64_t>(expected / model.step)(g));
      r.tx_msgs.at(p.a, p.b) = static_cast<std::uint64_t>(std::llround(msgs));
      r.tx_bw.at(p.a, p.b) = msgs * size / p.secs;
    }
    const auto rep = find_outliers(r, model.msg_size, node_of, noise_only, uplinks, nics);
    ++out.drawn;
    out.named += std::ranges::any_of(rep.found, names_a_cause);
  }
  return out;
}

false_alarms estimate_false_alarms(const run_matrices& m, std::uint64_t msg_size, std::span<const std::int32_t> node_of,
                                   const finder_settings& s, std::span<const switch_group> uplinks,
                                   std::span<const nic_group> nics, const outlier_report& judged,
                                   const false_alarm_settings& fa) {
  return draw_false_alarms(model_for_draws(m, msg_size, node_of, s, uplinks, nics, judged), node_of, s, uplinks, nics,
                           0, 1, fa);
}

}  // namespace rdmamesh::stats
