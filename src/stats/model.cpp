#include "rdmamesh/stats/model.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "rdmamesh/stats/median.hpp"

namespace rdmamesh::stats {
namespace {

struct obs {
  std::uint32_t a, b;
  int cls;  // 0 across nodes, 1 within one
  double y;
};

// 1.4826 x the median absolute deviation from 0: a normal's sd, robust to a few far values
double robust_scale(std::vector<double> v) {
  for (auto& x : v) x = std::fabs(x);
  const double m = median_of(std::move(v));
  return std::isfinite(m) ? 1.4826 * m : 0;
}

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
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = 0; b < n; ++b) {
      const double bw = m.tx_bw.at(a, b);
      if (a == b || !(bw > 0) || !std::isfinite(bw) || (!m.flags.v.empty() && m.flags.at(a, b) != 0)) continue;
      const int cls = node(a) >= 0 && node(a) == node(b) ? 1 : 0;
      pairs.push_back({a, b, cls, std::log(bw)});
    }
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
    scale = s == 0 ? 0 : robust_scale(std::move(res));
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
    return robust_scale(std::move(centred));
  };
  f.send_scale = centre(f.send, f.n_send);
  f.recv_scale = centre(f.recv, f.n_recv);
  std::vector<double> res;
  for (const auto& p : pairs) res.push_back(residual(p));
  f.noise = robust_scale(std::move(res));
  return f;
}

std::vector<model_cause> find_by_model(const run_matrices& m, std::span<const std::int32_t> node_of,
                                       const model_settings& s) {
  const auto f = fit_effects(m, node_of);
  const std::size_t n = f.send.size();
  std::map<std::int32_t, std::vector<std::uint32_t>> on_node;
  for (std::uint32_t r = 0; r < n; ++r)
    on_node[r < node_of.size() ? node_of[r] : -1 - static_cast<int>(r)].push_back(r);

  std::vector<model_cause> candidates;
  for (bool sends : {true, false}) {
    const auto& e = sends ? f.send : f.recv;
    const auto& count = sends ? f.n_send : f.n_recv;
    const double scale = sends ? f.send_scale : f.recv_scale;
    // a part's effect over how far healthy ones stray, and never over less than its own
    // standard error (a median of k residuals: about 1.25 noise / sqrt(k))
    const auto test = [&](double effect, double k, double spread) {
      const double se = 1.2533 * f.noise / std::sqrt(std::max(k, 1.0));
      return t_upper(-effect / std::max({spread, se, 1e-12}), s.tail_dof);
    };
    std::vector<double> node_effects;
    std::map<std::int32_t, double> node_effect;
    for (const auto& [nd, ranks] : on_node) {
      double sum = 0, k = 0;
      for (auto r : ranks)
        if (count[r] > 0) sum += e[r], k += 1;
      if (k == 0) continue;
      node_effect[nd] = sum / k;
      node_effects.push_back(sum / k);
    }
    const double node_spread = robust_scale(node_effects);
    for (const auto& [nd, effect] : node_effect) {
      double k = 0;
      for (auto r : on_node[nd]) k += count[r];
      candidates.push_back({outlier_kind::node, nd, -1, sends, effect, test(effect, k, node_spread)});
      if (on_node[nd].size() < 2) continue;  // a node's only rank is the node: what is replaced
      for (auto r : on_node[nd]) {
        if (count[r] == 0) continue;
        candidates.push_back(
            {outlier_kind::rank, nd, static_cast<std::int32_t>(r), sends, e[r], test(e[r], count[r], scale)});
      }
    }
  }
  // Holm: the i-th smallest p against alpha / (m - i), stopping at the first that fails
  std::ranges::sort(candidates, {}, &model_cause::p);
  std::vector<model_cause> named;
  const double floor = std::log(s.slow_pct / 100);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    if (c.p >= s.alpha / static_cast<double>(candidates.size() - i)) break;
    if (c.effect >= floor) continue;  // beyond the noise, but not slow enough to matter
    const bool covered = c.kind == outlier_kind::rank && std::ranges::any_of(named, [&](const model_cause& x) {
                           return x.kind == outlier_kind::node && x.node == c.node && x.sends == c.sends;
                         });
    if (!covered) named.push_back(c);
  }
  return named;
}

}  // namespace rdmamesh::stats
