#include "rdmamesh/stats/model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <ranges>
#include <set>
#include <utility>
#include <vector>

#include "rdmamesh/stats/median.hpp"

namespace rdmamesh::stats {
namespace {

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

// Sweeps of the fit (backfitting: each moves every effect by what its pairs leave unexplained),
// until no effect moves by more than `settled` (a millionth) or at most `sweeps`: a mesh settles
// in tens, an uplink with the ranks under it (effects that share most of their pairs) in a few
// hundred
constexpr int sweeps = 400;
constexpr double settled = 1e-6;
constexpr int polish_sweeps = 10;

}  // namespace

double t_upper(double t, double dof) {
  const double tail = 0.5 * inc_beta(dof / (dof + t * t), dof / 2, 0.5);
  return t >= 0 ? tail : 1 - tail;
}

double effects_fit::fitted(const pair& p) const {
  double v = class_offset[p.cohort] + send[p.a] + recv[p.b];
  each_crossed(over[p.a], over[p.b], [&](std::uint32_t u, bool way_up) { v += way_up ? up[u] : down[u]; });
  return v;
}

namespace {

// The pairs the fit reads, each with its cohort: its class, and its round where the round holds
// three or more pairs of that class.
std::vector<effects_fit::pair> fit_pairs(const run_matrices& m, std::span<const std::int32_t> node_of,
                                         const fit_options& o, std::uint32_t& cohorts) {
  const auto cls = [&](std::uint32_t a, std::uint32_t b) {
    if (o.classes) return (*o.classes)(a, b);
    return across_nodes(node_of, a, b) ? 1 : 0;
  };
  const bool counted = o.quantum > 0 && !m.tx_msgs.v.empty() && !m.tx_s.v.empty();
  std::vector<effects_fit::pair> out;
  std::vector<std::pair<int, int>> key;
  std::map<std::pair<int, int>, std::uint32_t> per_round;
  for (std::size_t i = 0; i < m.tx_bw.slots(); ++i) {
    const auto a = m.tx_bw.src(i), b = m.tx_bw.dst(i);
    const double bw = m.tx_bw.v[i];
    if (a == b || !std::isfinite(bw) || (!m.flags.v.empty() && m.flags.v[i] != 0)) continue;
    if (o.by_round && !m.round.v.empty() && m.round.v[i] < 0) continue;
    double y = 0;
    if (counted) {
      if (!(m.tx_s.v[i] > 0)) continue;
      const double msgs = std::max(static_cast<double>(m.tx_msgs.v[i]), o.quantum / 2);
      y = std::log(msgs * static_cast<double>(o.msg_size) / m.tx_s.v[i]);
    } else if (bw > 0) {
      y = std::log(bw);
    } else {
      continue;
    }
    const int round = o.by_round && !m.round.v.empty() ? m.round.v[i] : -1;
    out.push_back({a, b, 0, i, y, counted ? static_cast<double>(m.tx_msgs.v[i]) : 0});
    key.emplace_back(cls(a, b), round);
    ++per_round[key.back()];
  }
  std::map<std::pair<int, int>, std::uint32_t> id;
  for (auto& k : key) {
    if (per_round[k] < 3) k.second = -1;
    id.try_emplace(k, 0);
  }
  cohorts = 0;
  for (auto& [k, v] : id) v = cohorts++;
  std::vector<std::vector<double>> counts(cohorts);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].cohort = id.at(key[i]);
    counts[out[i].cohort].push_back(out[i].var);
  }
  // a count's variance (Poisson in quanta) at what a healthy pair of its cohort counts
  std::vector<double> typical(cohorts, 0);
  for (std::uint32_t c = 0; c < cohorts; ++c) typical[c] = median_of(counts[c]);
  for (auto& p : out) p.var = counted && typical[p.cohort] > 0 ? o.quantum / typical[p.cohort] : 0;
  return out;
}

// Each rank's effect centred on the median rank's (the class offsets take the shift: every pair
// has one sender and one receiver); returns how far the ranks' effects stray.
double centre_ranks(std::vector<double>& e, const std::vector<std::uint32_t>& count, std::vector<double>& offsets) {
  std::vector<double> seen;
  for (std::size_t r = 0; r < e.size(); ++r)
    if (count[r] > 0) seen.push_back(e[r]);
  const double mid = median_of(seen);
  for (std::size_t r = 0; r < e.size(); ++r) e[r] = count[r] > 0 ? e[r] - (std::isfinite(mid) ? mid : 0) : nan;
  for (auto& o : offsets) o += std::isfinite(mid) ? mid : 0;
  for (auto& x : seen) x -= mid;
  return mad_scale(std::move(seen));
}

// Each uplink's effects each way centred on the median of its tier's (the uplinks under as many
// others): what every uplink of a tier costs is the classes' (a pair through the spine crosses
// two of them)
void centre_uplinks(effects_fit& f) {
  std::vector<std::size_t> size(f.up.size(), 0), tier(f.up.size(), 0);
  for (const auto& over : f.over)
    for (const auto u : over) ++size[u];
  for (const auto& over : f.over)
    for (const auto u : over)
      tier[u] =
          static_cast<std::size_t>(std::ranges::count_if(over, [&](std::uint32_t v) { return size[v] > size[u]; }));
  for (auto [e, count] : {std::pair{&f.up, &f.n_up}, std::pair{&f.down, &f.n_down}}) {
    std::map<std::size_t, std::vector<double>> seen;
    for (std::size_t u = 0; u < e->size(); ++u)
      if ((*count)[u] > 0) seen[tier[u]].push_back((*e)[u]);
    std::map<std::size_t, double> mid;
    for (auto& [t, v] : seen) mid[t] = median_of(std::move(v));
    for (std::size_t u = 0; u < e->size(); ++u)
      if (mid.contains(tier[u])) (*e)[u] -= mid[tier[u]];
  }
}

// A value plus a combination of the unknowns: one |term| of a least-absolute-deviations sum.
struct lad_term {
  double v;
  std::vector<std::pair<std::size_t, double>> c;  // (unknown, coefficient)
};

// The k unknowns that minimize the sum of |v + c . x| over the terms: iteratively reweighted
// least squares (each term weighted by one over its size), each step a k x k solve (Gaussian
// elimination with partial pivoting: k is a count of uplinks).
std::vector<double> least_absolute(const std::vector<lad_term>& terms, std::size_t k) {
  std::vector<double> x(k, 0);
  for (int it = 0; it < 60; ++it) {
    std::vector<double> a(k * k, 0), b(k, 0);
    for (const auto& t : terms) {
      double r = t.v;
      for (const auto& [u, c] : t.c) r += c * x[u];
      const double w = 1 / std::max(std::fabs(r), 1e-6);
      for (const auto& [u, c] : t.c) {
        b[u] -= w * c * t.v;
        for (const auto& [v, d] : t.c) a[u * k + v] += w * c * d;
      }
    }
    for (std::size_t i = 0; i < k; ++i) a[i * k + i] += 1e-12;  // an uplink no term holds stays
    for (std::size_t i = 0; i < k; ++i) {
      std::size_t piv = i;
      for (std::size_t j = i + 1; j < k; ++j)
        if (std::fabs(a[j * k + i]) > std::fabs(a[piv * k + i])) piv = j;
      for (std::size_t j = 0; j < k; ++j) std::swap(a[i * k + j], a[piv * k + j]);
      std::swap(b[i], b[piv]);
      for (std::size_t j = i + 1; j < k; ++j) {
        const double m = a[j * k + i] / a[i * k + i];
        for (std::size_t l = i; l < k; ++l) a[j * k + l] -= m * a[i * k + l];
        b[j] -= m * b[i];
      }
    }
    for (std::size_t i = k; i-- > 0;) {
      double sum = b[i];
      for (std::size_t j = i + 1; j < k; ++j) sum -= a[i * k + j] * x[j];
      x[i] = sum / a[i * k + i];
    }
  }
  return x;
}

// A subtree's ranks' sends can all move one way and their receives the other, with its uplink's
// ways taking up the difference, and every pair reads the same (an uplink over others trades with
// them through these too); where no pair runs inside the subtree (a spread plan's partners all
// outside the leaf), its ranks' sends alone trade with its way up, and their receives with its
// way down. Of all those fits the one with the fewest and smallest effects is kept: the shifts x
// that minimize the sum of |effect| (least absolute deviations, by iteratively reweighted least
// squares over the uplinks' few unknowns).
void settle_uplinks(effects_fit& f) {
  std::vector<std::uint32_t> inside(f.up.size(), 0);
  for (const auto& p : f.pairs)
    for (const auto u : f.over[p.a]) inside[u] += std::ranges::binary_search(f.over[p.b], u);
  // each unknown: its uplink, and what it moves: the sends (1), the receives (2), or both (3)
  std::vector<std::pair<std::uint32_t, int>> dirs;
  std::vector<std::vector<std::size_t>> dirs_of(f.up.size());
  for (std::uint32_t u = 0; u < f.up.size(); ++u) {
    for (const int what : inside[u] > 0 ? std::vector<int>{3} : std::vector<int>{1, 2}) {
      dirs_of[u].push_back(dirs.size());
      dirs.emplace_back(u, what);
    }
  }
  const std::size_t k = dirs.size();
  // an effect's change per unknown: a send -x (moved with the sends), a receive +x (with both) or
  // -x (alone); the way up +x, the way down -x (with both) or +x (alone)
  const auto coefficient = [&](std::size_t j, bool rank, bool sends) {
    const int what = dirs[j].second;
    if (rank && sends) return what & 1 ? -1.0 : 0.0;
    if (rank) return what == 3 ? 1.0 : what == 2 ? -1.0 : 0.0;
    if (sends) return what & 1 ? 1.0 : 0.0;
    return what == 3 ? -1.0 : what == 2 ? 1.0 : 0.0;
  };
  std::vector<lad_term> terms;
  const auto add = [&](double v, const std::vector<std::uint32_t>& ups, bool rank, bool sends) {
    lad_term t{v, {}};
    for (const auto u : ups)
      for (const auto j : dirs_of[u])
        if (const double c = coefficient(j, rank, sends); c != 0) t.c.emplace_back(j, c);
    if (!t.c.empty()) terms.push_back(std::move(t));
  };
  for (std::size_t r = 0; r < f.over.size(); ++r) {
    if (f.n_send[r] > 0) add(f.send[r], f.over[r], true, true);
    if (f.n_recv[r] > 0) add(f.recv[r], f.over[r], true, false);
  }
  for (std::uint32_t u = 0; u < f.up.size(); ++u) {
    if (f.n_up[u] > 0) add(f.up[u], {u}, false, true);
    if (f.n_down[u] > 0) add(f.down[u], {u}, false, false);
  }
  const auto x = least_absolute(terms, k);
  for (std::size_t r = 0; r < f.over.size(); ++r) {
    for (const auto u : f.over[r]) {
      for (const auto j : dirs_of[u]) {
        f.send[r] += coefficient(j, true, true) * x[j];
        f.recv[r] += coefficient(j, true, false) * x[j];
      }
    }
  }
  for (std::uint32_t u = 0; u < f.up.size(); ++u) {
    for (const auto j : dirs_of[u]) {
      f.up[u] += coefficient(j, false, true) * x[j];
      f.down[u] += coefficient(j, false, false) * x[j];
    }
  }
}

// The fit's residuals' robust scale.
double residual_scale(const effects_fit& f) {
  std::vector<double> res;
  res.reserve(f.pairs.size());
  for (const auto& p : f.pairs) res.push_back(p.y - f.fitted(p));
  return mad_scale(std::move(res));
}

// The effects fit by backfitting: each sweep moves every part by what its pairs leave unexplained.
// From least squares (`polish` false): each part moved by the Huber-weighted mean of its pairs'
// residuals, least squares where residuals are within 1.345 scales (exact on exact data, whatever
// pairs ran), a bounded pull beyond. Or from a median polish (each part moved by the median of its
// pairs' residuals, the ends first): a class whose pairs are as many slow as not (a 3-node run's
// pairs between two nodes, one of them slow) then cannot pull the fit toward a compromise that
// least squares settles in, from which the Huber sweeps continue.
void settle(effects_fit& f, bool polish) {
  double scale = 0, moved = 0;
  bool median = polish;
  const auto step = [&](std::vector<double>& what, auto&& keys) {
    std::vector<double> sum(what.size(), 0), weight(what.size(), 0);
    std::vector<std::vector<double>> of(median ? what.size() : 0);
    for (const auto& p : f.pairs) {
      const double r = p.y - f.fitted(p), bound = 1.345 * scale;
      const double w = scale > 0 && std::fabs(r) > bound ? bound / std::fabs(r) : 1;
      keys(p, [&](std::size_t k) {
        if (median) of[k].push_back(r);
        sum[k] += w * r;
        weight[k] += w;
      });
    }
    for (std::size_t i = 0; i < what.size(); ++i) {
      const double by = median ? (of[i].empty() ? 0 : median_in(of[i])) : (weight[i] > 0 ? sum[i] / weight[i] : 0);
      what[i] += by;
      moved = std::max(moved, std::fabs(by));
    }
  };
  const auto crossed = [&](bool up) {
    return [&, up](const effects_fit::pair& p, auto&& add) {
      each_crossed(f.over[p.a], f.over[p.b], [&](std::uint32_t u, bool way_up) {
        if (way_up == up) add(u);
      });
    };
  };
  const auto cohort = [](const effects_fit::pair& p, auto&& add) { add(p.cohort); };
  for (int s = 0; s < sweeps; ++s) {
    if (s > polish_sweeps && moved < settled) break;
    moved = 0;
    median = polish && s < polish_sweeps;
    // from least squares the first sweep weighs every pair alike; from a polish, exact data
    // leaves every pair off the fit an outlier
    scale = !polish && s == 0 ? 0 : residual_scale(f);
    if (polish) scale = std::max(scale, 1e-9);
    if (!polish) step(f.class_offset, cohort);
    step(f.send, [](const effects_fit::pair& p, auto&& add) { add(p.a); });
    step(f.recv, [](const effects_fit::pair& p, auto&& add) { add(p.b); });
    if (polish) step(f.class_offset, cohort);
    if (f.up.empty()) continue;
    step(f.up, crossed(true));
    step(f.down, crossed(false));
  }
  if (f.up.empty()) return;
  // settled about the median rank (a polish's ranks hold the run's level until centred)
  centre_ranks(f.send, f.n_send, f.class_offset);
  centre_ranks(f.recv, f.n_recv, f.class_offset);
  settle_uplinks(f);
  centre_uplinks(f);
  step(f.class_offset, cohort);
}

// A fit of n ranks and `ups` uplinks, every effect and count 0, no pair
effects_fit zero_fit(std::size_t n, std::size_t ups, std::size_t cohorts) {
  effects_fit f;
  for (auto* v : {&f.send, &f.recv, &f.var_send, &f.var_recv}) v->assign(n, 0);
  for (auto* v : {&f.n_send, &f.n_recv}) v->assign(n, 0);
  for (auto* v : {&f.up, &f.down}) v->assign(ups, 0);
  for (auto* v : {&f.n_up, &f.n_down}) v->assign(ups, 0);
  f.class_offset.assign(cohorts, 0);
  f.over.assign(n, {});
  return f;
}

}  // namespace

effects_fit fit_run(const run_matrices& m, std::span<const std::int32_t> node_of, const pair_classes& classes,
                    std::span<const switch_group> uplinks, double quantum, std::uint64_t msg_size) {
  return fit_effects(
      m, node_of,
      {.classes = &classes, .by_round = true, .uplinks = uplinks, .quantum = quantum, .msg_size = msg_size});
}

effects_fit fit_effects(const run_matrices& m, std::span<const std::int32_t> node_of, const fit_options& o) {
  const std::uint32_t n = m.tx_bw.n;
  std::uint32_t cohorts = 0;
  auto pairs = fit_pairs(m, node_of, o, cohorts);
  // An uplink's effect is told from its ranks' only with another uplink beside it that the same
  // pairs do not cross (with two subtrees every such pair crosses both: only --expect names
  // them), and from its node's port only over two nodes or more
  const std::size_t ups = o.uplinks.size() >= 3 ? o.uplinks.size() : 0;
  effects_fit f = zero_fit(n, ups, std::max(cohorts, 1U));
  f.pairs = std::move(pairs);
  for (std::uint32_t u = 0; u < ups; ++u) {
    std::set<std::int32_t> nodes;
    for (std::uint32_t r = 0; r < n && r < o.uplinks[u].members.size(); ++r)
      if (o.uplinks[u].members[r]) nodes.insert(r < node_of.size() ? node_of[r] : -1 - static_cast<std::int32_t>(r));
    if (nodes.size() < 2) continue;
    for (std::uint32_t r = 0; r < n && r < o.uplinks[u].members.size(); ++r)
      if (o.uplinks[u].members[r]) f.over[r].push_back(u);
  }
  for (const auto& p : f.pairs) {
    ++f.n_send[p.a];
    ++f.n_recv[p.b];
    f.var_send[p.a] += p.var;
    f.var_recv[p.b] += p.var;
    each_crossed(f.over[p.a], f.over[p.b], [&](std::uint32_t u, bool way_up) { ++(way_up ? f.n_up : f.n_down)[u]; });
  }
  // two starts, the fit whose residuals are the tighter kept (on a tie the first)
  effects_fit polished = f;
  settle(f, false);
  settle(polished, true);
  if (residual_scale(polished) < residual_scale(f)) f = std::move(polished);
  f.send_scale = centre_ranks(f.send, f.n_send, f.class_offset);
  f.recv_scale = centre_ranks(f.recv, f.n_recv, f.class_offset);
  f.noise = residual_scale(f);
  return f;
}

effects_fit pool_fits(std::span<const effects_fit* const> fits) {
  if (fits.empty()) return {};
  if (fits.size() == 1) return *fits.front();
  const std::size_t n = fits.front()->send.size(), ups = fits.front()->up.size();
  effects_fit out = zero_fit(n, ups, 1);
  out.over = fits.front()->over;
  // each effect weighted by the pairs behind it: the pooled error 1.57 noise^2 / pairs + var /
  // pairs^2 is then the mean's, exactly where the runs' spreads agree
  std::vector<double> w_send(n, 0), w_recv(n, 0);
  const auto add = [](double e, std::uint32_t k, double w, double& sum, std::uint32_t& count, double& weight) {
    if (k == 0 || !std::isfinite(e)) return;
    sum += e * k * w;
    count += k;
    weight += k * w;
  };
  std::vector<double> w_up(ups, 0), w_down(ups, 0);
  double noise2 = 0, pairs = 0;
  // a run is weighed by how tightly its healthy ranks agree (a run whose ranks stray twice as far
  // says a quarter as much about any of them), as its own test reads its parts against that spread
  const auto W = [](double spread) { return spread > 0 ? 1 / (spread * spread) : 1.0; };
  for (const auto* f : fits) {
    for (std::size_t r = 0; r < n && r < f->send.size(); ++r) {
      add(f->send[r], f->n_send[r], W(f->send_scale), out.send[r], out.n_send[r], w_send[r]);
      add(f->recv[r], f->n_recv[r], W(f->recv_scale), out.recv[r], out.n_recv[r], w_recv[r]);
      out.var_send[r] += f->var_send[r];
      out.var_recv[r] += f->var_recv[r];
      noise2 += f->n_send[r] * f->noise * f->noise;
      pairs += f->n_send[r];
    }
    for (std::size_t u = 0; u < ups && u < f->up.size(); ++u) {
      add(f->up[u], f->n_up[u], W(f->send_scale), out.up[u], out.n_up[u], w_up[u]);
      add(f->down[u], f->n_down[u], W(f->recv_scale), out.down[u], out.n_down[u], w_down[u]);
    }
  }
  const auto mean = [](std::vector<double>& sum, const std::vector<double>& weight) {
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = weight[i] > 0 ? sum[i] / weight[i] : nan;
  };
  mean(out.send, w_send);
  mean(out.recv, w_recv);
  mean(out.up, w_up);
  mean(out.down, w_down);
  out.noise = pairs > 0 ? std::sqrt(noise2 / pairs) : 0;
  out.send_scale = centre_ranks(out.send, out.n_send, out.class_offset);
  out.recv_scale = centre_ranks(out.recv, out.n_recv, out.class_offset);
  return out;
}

std::vector<model_cause> job_parts(std::uint32_t n, std::span<const std::int32_t> node_of,
                                   std::span<const std::int32_t> rail_of, std::span<const switch_group> uplinks) {
  const auto node = [&](std::size_t r) { return r < node_of.size() ? node_of[r] : -1 - static_cast<int>(r); };
  const auto rail = [&](std::size_t r) { return r < rail_of.size() ? rail_of[r] : -1; };
  std::map<std::int32_t, std::vector<std::uint32_t>> on_node;
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<std::uint32_t>> on_nic;
  for (std::uint32_t r = 0; r < n; ++r) {
    on_node[node(r)].push_back(r);
    if (rail(r) >= 0) on_nic[{node(r), rail(r)}].push_back(r);
  }
  std::map<std::int32_t, int> nics_of;
  for (const auto& [key, ranks] : on_nic) ++nics_of[key.first];
  std::vector<model_cause> out;
  for (const auto& [nd, ranks] : on_node) out.push_back({outlier_kind::node, nd, -1, -1, true, 0, 1, ranks});
  for (const auto& [key, ranks] : on_nic) {
    if (nics_of[key.first] >= 2) out.push_back({outlier_kind::nic, key.first, -1, key.second, true, 0, 1, ranks});
  }
  for (std::uint32_t r = 0; r < n; ++r) {
    // a rank alone on its NIC (or its node, with one NIC) is that NIC: not a part of its own
    const bool own_nic = rail(r) >= 0 && nics_of[node(r)] >= 2;
    const auto& holder = own_nic ? on_nic[{node(r), rail(r)}] : on_node[node(r)];
    if (holder.size() >= 2)
      out.push_back({outlier_kind::rank, node(r), static_cast<std::int32_t>(r), rail(r), true, 0, 1, {r}});
  }
  for (std::size_t u = 0; u < uplinks.size(); ++u) {
    model_cause c{outlier_kind::uplink, uplinks[u].sw, -1, static_cast<std::int32_t>(u), true, 0, 1, {}};
    for (std::uint32_t r = 0; r < n && r < uplinks[u].members.size(); ++r)
      if (uplinks[u].members[r]) c.members.push_back(r);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<model_cause> model_parts(const effects_fit& f, std::span<const std::int32_t> node_of,
                                     std::span<const std::int32_t> rail_of, const model_settings& s,
                                     std::span<const switch_group> uplinks) {
  const auto n = static_cast<std::uint32_t>(f.send.size());
  // the fit's uplinks only: with two subtrees it holds none
  const auto units = job_parts(n, node_of, rail_of, uplinks.first(std::min(uplinks.size(), f.up.size())));
  std::vector<model_cause> out;
  for (bool sends : {true, false}) {
    const auto& e = sends ? f.send : f.recv;
    const auto& count = sends ? f.n_send : f.n_recv;
    const auto& var = sends ? f.var_send : f.var_recv;
    // a part's effect (its ranks' mean; an uplink's own), the pairs behind it and their counts'
    // variance; and how far healthy parts of its kind stray: the robust scale of every such
    // part's effect in the run (an uplink, standing for the nodes under it, no less than a node)
    struct reading {
      double effect = nan, pairs = 0, var = 0;
    };
    std::vector<reading> read(units.size());
    std::map<outlier_kind, std::vector<double>> of_kind;
    for (std::size_t u = 0; u < units.size(); ++u) {
      auto& x = read[u];
      if (units[u].kind == outlier_kind::uplink) {
        const auto i = static_cast<std::size_t>(units[u].rail);
        if ((sends ? f.n_up : f.n_down)[i] > 0)
          x = {(sends ? f.up : f.down)[i], double((sends ? f.n_up : f.n_down)[i]), 0};
        continue;
      }
      double sum = 0, k = 0;
      for (auto r : units[u].members) {
        if (count[r] == 0) continue;
        sum += e[r];
        k += 1;
        x.pairs += count[r];
        x.var += var[r];
      }
      if (k == 0) continue;
      x.effect = sum / k;
      of_kind[units[u].kind].push_back(x.effect);
    }
    std::map<outlier_kind, double> spread;
    for (auto& [kind, v] : of_kind)
      spread[kind] = kind == outlier_kind::rank ? (sends ? f.send_scale : f.recv_scale) : mad_scale(v);
    spread[outlier_kind::uplink] = spread[outlier_kind::node];
    for (std::size_t u = 0; u < units.size(); ++u) {
      const auto& [effect, pairs, v] = read[u];
      if (std::isnan(effect)) continue;
      // its effect over how far healthy ones stray, and never over less than its own standard
      // error (a mean of k residuals, Huber's: about 1.25 noise / sqrt(k)) with its counts' error
      const double k = std::max(pairs, 1.0);
      const double se = std::sqrt(1.5708 * f.noise * f.noise / k + v / (k * k));
      model_cause c = units[u];
      c.sends = sends;
      c.effect = effect;
      c.scale = std::max({spread[c.kind], se, 1e-12});
      c.p = t_upper(-effect / c.scale, s.tail_dof);
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::vector<double> holm(std::span<const double> p, double alpha) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::ranges::stable_sort(order, {}, [&](std::size_t i) { return p[i]; });
  std::vector<double> bar(p.size(), 0);
  for (std::size_t r = 0; r < order.size(); ++r) {
    const double at = alpha / static_cast<double>(order.size() - r);
    if (!(p[order[r]] < at)) break;
    bar[order[r]] = at;
  }
  return bar;
}

bool inside(const model_cause& inner, const model_cause& outer) {
  return inner.sends == outer.sends && inner.members != outer.members &&
         std::ranges::includes(outer.members, inner.members);
}

}  // namespace rdmamesh::stats
