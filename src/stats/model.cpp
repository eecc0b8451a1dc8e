#include "rdmamesh/stats/model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "rdmamesh/stats/median.hpp"

namespace rdmamesh::stats {
namespace {

struct obs {
  std::uint32_t a = 0, b = 0;
  int cls = 0;  // 0 across nodes, 1 within one
  double y = 0;
};

// The regularized incomplete beta I_x(a, b), by its continued fraction (modified Lentz).
double inc_beta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - inc_beta(1 - x, b, a);  // where the fraction converges fast
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x)) / a;
  constexpr double tiny = 1e-300;
  double f = 1, c = 1, d = 0;
  for (int i = 0; i <= 400; ++i) {
    const int m = i / 2;
    double num = 1;
    if (i > 0) {
      num = i % 2 == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                       : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    }
    d = 1 + num * d;
    d = 1 / (std::fabs(d) < tiny ? tiny : d);
    c = 1 + num / (std::fabs(c) < tiny ? tiny : c);
    f *= c * d;
    if (std::fabs(1 - c * d) < 1e-12) break;
  }
  return front * (f - 1);
}

// Sweeps of the fit (backfitting: each moves every effect by what its pairs leave unexplained);
// thirty settle a mesh or a spread plan's sparser design to far below the noise
constexpr int sweeps = 30;

}  // namespace

double t_upper(double t, double dof) {
  const double tail = 0.5 * inc_beta(dof / (dof + t * t), dof / 2, 0.5);
  return t >= 0 ? tail : 1 - tail;
}

effects_fit fit_effects(const run_matrices& m, std::span<const std::int32_t> node_of) {
  const std::uint32_t n = m.tx_bw.n;
  const auto node = [&](std::uint32_t r) { return r < node_of.size() ? node_of[r] : -1; };
  std::vector<obs> pairs;
  for (std::size_t i = 0; i < m.tx_bw.slots(); ++i) {
    const auto a = m.tx_bw.src(i), b = m.tx_bw.dst(i);
    const double bw = m.tx_bw.v[i];
    if (a == b || !(bw > 0) || !std::isfinite(bw) || (!m.flags.v.empty() && m.flags.at(a, b) != 0)) continue;
    const int cls = node(a) >= 0 && node(a) == node(b) ? 1 : 0;
    pairs.push_back({a, b, cls, std::log(bw)});
  }
  effects_fit f;
  f.send.assign(n, 0);
  f.recv.assign(n, 0);
  f.n_send.assign(n, 0);
  f.n_recv.assign(n, 0);
  f.class_offset.assign(2, 0);
  for (const auto& p : pairs) {
    ++f.n_send[p.a];
    ++f.n_recv[p.b];
  }
  const auto residual = [&](const obs& p) { return p.y - f.class_offset[p.cls] - f.send[p.a] - f.recv[p.b]; };
  // each part's offset moved by the Huber-weighted mean of its pairs' residuals: least squares
  // where residuals are within 1.345 scales (exact on exact data, whatever pairs ran), a bounded
  // pull beyond (a few bad pairs do not move their ranks' effects)
  double scale = 0;
  const auto step = [&](auto&& key, std::vector<double>& what) {
    std::vector<double> sum(what.size(), 0), weight(what.size(), 0);
    for (const auto& p : pairs) {
      const double r = residual(p), bound = 1.345 * scale;
      const double w = scale > 0 && std::fabs(r) > bound ? bound / std::fabs(r) : 1;
      sum[key(p)] += w * r;
      weight[key(p)] += w;
    }
    for (std::size_t i = 0; i < what.size(); ++i) {
      if (weight[i] > 0) what[i] += sum[i] / weight[i];
    }
  };
  for (int s = 0; s < sweeps; ++s) {
    std::vector<double> res;
    for (const auto& p : pairs) res.push_back(residual(p));
    scale = s == 0 ? 0 : mad_scale(std::move(res));
    step([](const obs& p) { return static_cast<std::size_t>(p.cls); }, f.class_offset);
    step([](const obs& p) { return static_cast<std::size_t>(p.a); }, f.send);
    step([](const obs& p) { return static_cast<std::size_t>(p.b); }, f.recv);
  }
  // the effects centred on the median rank, the class offsets absorbing the shift
  const auto centre = [&](std::vector<double>& e, const std::vector<std::uint32_t>& count) {
    std::vector<double> seen;
    for (std::size_t r = 0; r < e.size(); ++r)
      if (count[r] > 0) seen.push_back(e[r]);
    const double mid = median_of(seen);
    for (std::size_t r = 0; r < e.size(); ++r) e[r] = count[r] > 0 ? e[r] - mid : nan;
    for (auto& o : f.class_offset) o += std::isfinite(mid) ? mid : 0;
    std::vector<double> centred;
    for (std::size_t r = 0; r < e.size(); ++r)
      if (count[r] > 0) centred.push_back(e[r]);
    return mad_scale(std::move(centred));
  };
  f.send_scale = centre(f.send, f.n_send);
  f.recv_scale = centre(f.recv, f.n_recv);
  std::vector<double> res;
  for (const auto& p : pairs) res.push_back(residual(p));
  f.noise = mad_scale(std::move(res));
  return f;
}

std::vector<model_cause> model_parts(const effects_fit& f, std::span<const std::int32_t> node_of,
                                     std::span<const std::int32_t> rail_of, const model_settings& s) {
  const std::size_t n = f.send.size();
  const auto node = [&](std::size_t r) { return r < node_of.size() ? node_of[r] : -1 - static_cast<int>(r); };
  const auto rail = [&](std::size_t r) { return r < rail_of.size() ? rail_of[r] : -1; };
  // each part once: its kind, node, rail and rank, and its members
  std::map<std::int32_t, std::vector<std::uint32_t>> on_node;
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<std::uint32_t>> on_nic;
  for (std::uint32_t r = 0; r < n; ++r) {
    on_node[node(r)].push_back(r);
    if (rail(r) >= 0) on_nic[{node(r), rail(r)}].push_back(r);
  }
  std::map<std::int32_t, int> nics_of;
  for (const auto& [key, ranks] : on_nic) ++nics_of[key.first];
  struct unit {
    outlier_kind kind = outlier_kind::node;
    std::int32_t node = -1, rail = -1, rank = -1;
    std::vector<std::uint32_t> ranks;
  };
  std::vector<unit> units;
  for (const auto& [nd, ranks] : on_node) units.push_back({outlier_kind::node, nd, -1, -1, ranks});
  for (const auto& [key, ranks] : on_nic) {
    if (nics_of[key.first] >= 2) units.push_back({outlier_kind::nic, key.first, key.second, -1, ranks});
  }
  for (std::uint32_t r = 0; r < n; ++r) {
    // a rank alone on its NIC (or its node, with one NIC) is that NIC: not a part of its own
    const bool own_nic = rail(r) >= 0 && nics_of[node(r)] >= 2;
    const auto& holder = own_nic ? on_nic[{node(r), rail(r)}] : on_node[node(r)];
    if (holder.size() >= 2) units.push_back({outlier_kind::rank, node(r), rail(r), static_cast<std::int32_t>(r), {r}});
  }

  std::vector<model_cause> out;
  for (bool sends : {true, false}) {
    const auto& e = sends ? f.send : f.recv;
    const auto& count = sends ? f.n_send : f.n_recv;
    const double rank_scale = sends ? f.send_scale : f.recv_scale;
    // a part's effect (its ranks' mean) and how far healthy parts of its kind stray: the robust
    // scale of every such part's effect in the run
    std::map<outlier_kind, std::vector<double>> of_kind;
    std::vector<std::pair<double, double>> effect_k(units.size(), {nan, 0});
    for (std::size_t u = 0; u < units.size(); ++u) {
      double sum = 0, k = 0, pairs = 0;
      for (auto r : units[u].ranks) {
        if (count[r] == 0) continue;
        sum += e[r];
        k += 1;
        pairs += count[r];
      }
      if (k == 0) continue;
      effect_k[u] = {sum / k, pairs};
      of_kind[units[u].kind].push_back(sum / k);
    }
    std::map<outlier_kind, double> spread;
    for (auto& [kind, v] : of_kind) spread[kind] = kind == outlier_kind::rank ? rank_scale : mad_scale(v);
    for (std::size_t u = 0; u < units.size(); ++u) {
      const auto [effect, k] = effect_k[u];
      if (std::isnan(effect)) continue;
      // its effect over how far healthy ones stray, and never over less than its own standard
      // error (a median of k residuals: about 1.25 noise / sqrt(k))
      const double se = 1.2533 * f.noise / std::sqrt(std::max(k, 1.0));
      const double p = t_upper(-effect / std::max({spread[units[u].kind], se, 1e-12}), s.tail_dof);
      model_cause c{units[u].kind, units[u].node, units[u].rank, units[u].rail, sends, effect, p, units[u].ranks};
      std::ranges::sort(c.members);
      out.push_back(std::move(c));
    }
  }
  return out;
}

bool inside(const model_cause& inner, const model_cause& outer) {
  return inner.sends == outer.sends && inner.members != outer.members &&
         std::ranges::includes(outer.members, inner.members);
}

std::vector<model_cause> find_by_model(const run_matrices& m, std::span<const std::int32_t> node_of,
                                       const model_settings& s, std::span<const std::int32_t> rail_of) {
  auto candidates = model_parts(fit_effects(m, node_of), node_of, rail_of, s);
  // Holm: the i-th smallest p against alpha / (m - i), stopping at the first that fails
  std::ranges::sort(candidates, {}, &model_cause::p);
  std::vector<model_cause> named;
  const double floor = std::log(s.slow_pct / 100);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    if (c.p >= s.alpha / static_cast<double>(candidates.size() - i)) break;
    if (c.effect >= floor) continue;  // beyond the noise, but not slow enough to matter
    const bool covered = std::ranges::any_of(named, [&](const model_cause& x) { return inside(c, x); });
    if (!covered) named.push_back(c);
  }
  return named;
}

}  // namespace rdmamesh::stats
