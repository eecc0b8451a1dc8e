// The model's retest: what to measure alone, and each part's lasting effect from it (see the header).
#include "rdmamesh/stats/model_retest.hpp"

#include "rdmamesh/stats/false_alarm.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace rdmamesh::stats {
namespace {

// A pair that ran and did not fail: one that moved nothing in its window is the slowest of its
// part's side (the finder floors its count at half a quantum), not a pair without a figure.
bool ran(const run_matrices& m, std::uint32_t a, std::uint32_t b) {
  const double bw = m.tx_bw.at(a, b);
  return a != b && bw >= 0 && std::isfinite(bw) && (m.flags.v.empty() || m.flags.at(a, b) == 0);
}

// A control: a pair that ran and moved something (its log rate is its place in its path).
bool usable(const run_matrices& m, std::uint32_t a, std::uint32_t b) {
  return ran(m, a, b) && m.tx_bw.at(a, b) > 0;
}

// A part's side: the pairs out of its ranks (sends) or into them (receives), the other end outside.
bool on_side(const model_cause& p, std::uint32_t a, std::uint32_t b) {
  return p.sends ? p.holds(a) && !p.holds(b) : p.holds(b) && !p.holds(a);
}

// Huber's M-estimate of location (1.345 robust scales): the mean where values agree, a bounded
// pull from the few far off (the emulator's pairs alone have heavy tails).
double huber_location(const std::vector<double>& v) {
  double mu = median_of(v);
  const double s = mad_scale(v, mu);
  if (!(s > 0)) return mu;
  for (int it = 0; it < 20; ++it) {
    double sum = 0, weight = 0;
    for (double x : v) {
      const double r = std::fabs(x - mu), w = r > 1.345 * s ? 1.345 * s / r : 1;
      sum += w * x;
      weight += w;
    }
    if (sum / weight == mu) break;  // a fixed point: further steps change nothing
    mu = sum / weight;
  }
  return mu;
}

// Up to `most` of a part's pairs, taken in turn from each of its ranks, each rank's slowest first:
// a part's pairs alone then stand for all its ranks (a node's slowest pairs can all be one rank's).
// Partners in no other screened part first (`suspect`, by rank): a rank's slowest receives are
// often a slow node's sends, and measured alone they would read that node, not the rank.
pair_list spread_over_members(pair_list side, const run_matrices& m, bool sends, std::size_t most,
                              const std::vector<std::uint8_t>& suspect) {
  std::ranges::sort(side, {}, [&](const auto& ab) {
    return std::pair{suspect[sends ? ab.second : ab.first], m.tx_bw.at(ab.first, ab.second)};
  });
  std::map<std::uint32_t, pair_list> by_member;
  for (const auto& ab : side) by_member[sends ? ab.first : ab.second].push_back(ab);
  pair_list out;
  for (std::size_t k = 0; out.size() < most && out.size() < side.size(); ++k) {
    for (const auto& [member, pairs] : by_member)
      if (k < pairs.size() && out.size() < most) out.push_back(pairs[k]);
  }
  return out;
}

// A part the run met few partners of (--pattern spread) also meets fresh ones alone, up to
// `most` pairs: on other nodes, unnamed ones first, taken in turn from each of its ranks. A rank
// slow only toward the partners it met is then read by its other pairs, not by those two.
void add_fresh(pair_list& side, const model_cause& p, const run_matrices& m, std::span<const std::int32_t> node_of,
               std::span<const std::uint8_t> named, std::size_t most) {
  const std::uint32_t n = m.tx_bw.n;
  if (side.size() >= most) return;
  const std::size_t need = most - side.size();
  const auto& members = p.members;
  std::set<std::pair<std::uint32_t, std::uint32_t>> have(side.begin(), side.end());
  std::vector<pair_list> by_named(2);  // [0]: toward unnamed partners, [1]: named ones
  // offsets in turn from each member; enough unnamed partners end the search
  for (std::uint32_t k = 1; k < n && by_named[0].size() < need; ++k) {
    for (const std::uint32_t r : members) {
      const std::uint32_t o = (r + k) % n;
      if (p.holds(o) || (r < node_of.size() && o < node_of.size() && node_of[r] == node_of[o])) continue;
      const auto ab = p.sends ? std::pair{r, o} : std::pair{o, r};
      if (std::isfinite(m.tx_bw.at(ab.first, ab.second)) || have.contains(ab)) continue;
      by_named[o < named.size() && named[o] ? 1 : 0].push_back(ab);
    }
  }
  for (const auto& fresh : by_named)
    for (const auto& ab : fresh)
      if (side.size() < most) side.push_back(ab);
}

// The controls: for each screened part, up to `controls` pairs of each of its paths (`needed`)
// that do not touch it, clear of the other chosen parts (`touched`) first, then nearest the
// path's median. `for_uplinks`: for the screened uplinks only, by route (pair_classes::path without uplinks:
// pairs through the tier's other uplinks, since none that touches the uplink's ranks is taken).
// `which_cpu` false: pairs on one CPU keyed as on any (their own CPU's are too few).
void add_controls(model_retest_plan& plan, const run_matrices& m, const pair_classes& classes,
                  const std::set<int>& needed, const std::vector<std::uint8_t>& touched, std::size_t controls,
                  bool for_uplinks = false, bool which_cpu = true) {
  const auto served = [&](std::size_t k) {
    return (plan.parts[plan.screened[k]].kind == outlier_kind::uplink) == for_uplinks;
  };
  struct usable_pair {
    std::uint32_t a, b;
    double y;  // log rate in the run
  };
  std::map<int, std::vector<usable_pair>> of_class;
  for (std::size_t i = 0; i < m.tx_bw.slots(); ++i) {
    const auto a = m.tx_bw.src(i), b = m.tx_bw.dst(i);
    if (!usable(m, a, b)) continue;
    const int cls = classes.path(a, b, !for_uplinks, which_cpu);
    if (needed.contains(cls)) of_class[cls].push_back({a, b, std::log(m.tx_bw.v[i])});
  }
  // by rank, the screened parts (their places in plan.screened) that hold it
  std::vector<std::vector<std::size_t>> parts_of(m.tx_bw.n);
  for (std::size_t k = 0; k < plan.screened.size(); ++k)
    for (const auto r : plan.parts[plan.screened[k]].members) parts_of[r].push_back(k);
  std::set<std::pair<std::uint32_t, std::uint32_t>> chosen;
  for (auto& of_one : of_class) {
    auto& pairs = of_one.second;  // not a structured binding: clang before 16 cannot capture one
    std::vector<double> logs;
    for (const auto& p : pairs) logs.push_back(p.y);
    const double mid = median_of(logs);
    std::ranges::sort(pairs, {}, [&](const usable_pair& p) {
      return std::pair{touched[p.a] + touched[p.b], std::fabs(p.y - mid)};
    });
    const auto pick = [&](std::size_t k) {  // the first `controls` pairs that do not touch it
      if (!served(k)) return;
      const auto& part = plan.parts[plan.screened[k]];
      std::size_t have = 0;
      for (const auto& [a, b, y] : pairs) {
        if (have == controls) break;
        if (part.holds(a) || part.holds(b)) continue;
        ++have;
        if (chosen.insert({a, b}).second) plan.controls.emplace_back(a, b);
      }
    };
    // a part that holds no end of the class's first pairs picks those: the first such part picks
    // them for all (thousands of parts at thousands of ranks), in the order every part would
    std::set<std::size_t> holding;
    for (std::size_t j = 0; j < std::min(controls, pairs.size()); ++j)
      for (const auto r : {pairs[j].a, pairs[j].b}) holding.insert(parts_of[r].begin(), parts_of[r].end());
    std::size_t first_free = 0;
    while (first_free < plan.screened.size() && (holding.contains(first_free) || !served(first_free))) ++first_free;
    for (const auto k : holding)
      if (k < first_free) pick(k);
    if (first_free < plan.screened.size()) pick(first_free);
    for (const auto k : holding)
      if (k > first_free) pick(k);
  }
}

}  // namespace

double t_quantile(double p, double dof) {
  double lo = 0, hi = 1e6;  // t_upper falls from 0.5 at 0
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (t_upper(mid, dof) > p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

pair_list model_retest_plan::all() const {
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  pair_list out;
  for (const auto& side : sides)
    for (const auto& p : side)
      if (seen.insert(p).second) out.push_back(p);
  for (const auto& p : controls)
    if (seen.insert(p).second) out.push_back(p);
  return out;
}

namespace {

// Which parts the retest measures, by part: 1 screened (it, or any rank of it, reads below --slow,
// or the finder named a rank of it on that side: a node's mean can hide its one slow rank behind
// a rank that ran lucky), 2 to name only (inside a screened one: whether a node's slow rank or the
// node stands is then the retest's to say, not the run's noisy reading of its other ranks), 0 not.
std::vector<std::uint8_t> choose_parts(std::span<const model_cause> parts, std::uint32_t n, double slow,
                                       std::span<const std::uint8_t> named) {
  std::vector<double> rank_send(n, nan), rank_recv(n, nan);
  for (const auto& p : parts) {
    if (p.kind != outlier_kind::rank) continue;
    (p.sends ? rank_send : rank_recv)[static_cast<std::size_t>(p.rank)] = p.effect;
  }
  const auto screened = [&](const model_cause& p) {
    if (p.effect < slow) return true;
    if (p.kind == outlier_kind::uplink) return false;  // its ranks' choices are theirs
    for (const auto r : p.members)
      if (r < named.size() && (named[r] & (p.sends ? named_sends : named_receives)) != 0) return true;
    const auto& e = p.sends ? rank_send : rank_recv;
    return std::ranges::any_of(p.members, [&](std::uint32_t r) { return e[r] < slow; });
  };
  std::vector<std::uint8_t> take(parts.size(), 0);
  for (std::size_t i = 0; i < parts.size(); ++i) take[i] = screened(parts[i]) ? 1 : 0;
  std::map<std::int32_t, std::vector<std::size_t>> screened_on;  // a part lies inside one of its own node only
  for (std::size_t o = 0; o < parts.size(); ++o)
    if (take[o] == 1 && parts[o].kind != outlier_kind::uplink) screened_on[parts[o].node].push_back(o);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto on = screened_on.find(parts[i].node);
    if (take[i] || on == screened_on.end() || parts[i].kind == outlier_kind::uplink) continue;
    if (std::ranges::any_of(on->second, [&](std::size_t o) { return inside(parts[i], parts[o]); })) take[i] = 2;
  }
  return take;
}

}  // namespace

model_retest_plan plan_model_retest(const run_matrices& m, std::span<const model_cause> parts,
                                    std::span<const std::int32_t> node_of, const pair_classes& classes,
                                    const model_settings& s, std::size_t per_side, std::size_t controls,
                                    std::span<const std::uint8_t> named) {
  model_retest_plan plan;
  const std::uint32_t n = m.tx_bw.n;
  const double slow = std::log(s.slow_pct / 100);
  // Under an uplink the run reads below --slow, each rank's side is chosen too, as though the run
  // had named it: the uplink's effect holds their pairs' shortfall, and alone the retest tells
  // the uplink (against its tier's other uplinks) from one node under it (against its path).
  std::vector<std::uint8_t> chosen(named.begin(), named.end());
  chosen.resize(n, 0);
  plan.parts.assign(parts.begin(), parts.end());
  for (const auto& p : parts) {
    if (p.kind == outlier_kind::uplink && p.effect < slow)
      for (const auto r : p.members) chosen[r] |= p.sends ? named_sends : named_receives;
  }
  const auto take = choose_parts(plan.parts, n, slow, chosen);
  std::vector<std::uint8_t> touched(n, 0);
  std::set<int> needed, routes;             // the paths (routes: an uplink's) the screened parts' pairs are in
  std::vector<std::uint8_t> suspect(n, 0);  // in a part the run chose
  for (std::size_t i = 0; i < plan.parts.size(); ++i)
    if (take[i] == 1)
      for (const auto r : plan.parts[i].members) suspect[r] = 1;
  // each rank's usable pairs out and in, by the other end: a part's side is read from its
  // members' lists (a retest at thousands of ranks screens hundreds of parts)
  std::vector<std::vector<std::uint32_t>> out_to(n), in_from(n);
  std::map<int, pair_list> on_one_cpu;  // usable pairs whose ends share one CPU, by path
  for (std::size_t i = 0; i < m.tx_bw.slots(); ++i) {
    const auto a = m.tx_bw.src(i), b = m.tx_bw.dst(i);
    if (!ran(m, a, b)) continue;
    out_to[a].push_back(b);
    in_from[b].push_back(a);
    if (usable(m, a, b) && classes.one_cpu(a, b)) on_one_cpu[classes.path(a, b)].emplace_back(a, b);
  }
  // a part's pair on one CPU whose path has too few pairs clear of the part to centre it is read
  // against pairs on the host's other CPUs too (lumped), its CPU's own offset a draw of cpu_sd
  std::set<int> lumped;
  const auto few_clear = [&](const model_cause& p, std::uint32_t a, std::uint32_t b) {
    const auto it = on_one_cpu.find(classes.path(a, b));
    const auto clear = it == on_one_cpu.end() ? 0 : std::ranges::count_if(it->second, [&](const auto& cd) {
      return !p.holds(cd.first) && !p.holds(cd.second);
    });
    return clear < 2;
  };
  for (std::size_t i = 0; i < plan.parts.size(); ++i) {
    const auto& p = plan.parts[i];
    if (!take[i]) continue;
    pair_list side;  // its members' rows (sends) or columns (receives)
    for (const auto r : p.members) {
      for (const auto o : p.sends ? out_to[r] : in_from[r]) {
        const auto [a, b] = p.sends ? std::pair{r, o} : std::pair{o, r};
        if (on_side(p, a, b)) side.emplace_back(a, b);
      }
    }
    side = spread_over_members(std::move(side), m, p.sends, per_side, suspect);
    add_fresh(side, p, m, node_of, chosen, per_side);
    if (side.empty()) continue;
    const bool uplink = p.kind == outlier_kind::uplink;
    for (const auto& [a, b] : side) {
      (uplink ? routes : needed).insert(classes.path(a, b, !uplink));
      if (!uplink && classes.one_cpu(a, b) && few_clear(p, a, b)) lumped.insert(classes.path(a, b, true, false));
    }
    if (take[i] == 1)
      for (const auto r : p.members) touched[r] = 1;
    plan.screened.push_back(i);
    plan.naming.push_back(take[i] == 2 ? 1 : 0);
    plan.sides.push_back(std::move(side));
  }
  add_controls(plan, m, classes, needed, touched, controls);
  add_controls(plan, m, classes, routes, touched, controls, true);
  add_controls(plan, m, classes, lumped, touched, controls, false, false);
  return plan;
}

namespace {

// The retest's controls alone, read once: their classes' centres and residuals over all of
// them, which every part that touches none of them shares (a retest at thousands of ranks
// judges hundreds of parts against thousands of controls).
struct control_set {
  struct one {
    std::uint32_t a, b;
    int cls;
    double y;  // log rate alone
  };
  std::vector<one> all;                               // measured ones, in the plan's order
  std::vector<std::vector<std::size_t>> of_rank;      // indices into all, by either end
  std::map<int, std::vector<std::size_t>> of_class;   // indices into all, by class
  std::map<int, std::vector<std::size_t>> of_lumped;  // those on one CPU, by path keyed as on any CPU
  std::map<int, double> centre;                       // classes of two or more
  std::vector<double> residuals;                      // |y - centre|, ascending
  double dof = 0;
  bool by_route = false;  // keyed by route (an uplink's controls: its tier's other uplinks), not path
  model_settings fitted;  // its site's shares measured elsewhere: cpu_sd, part_sd
  int key(const pair_classes& classes, std::uint32_t a, std::uint32_t b) const { return classes.path(a, b, !by_route); }
};

// Its classes' centres (Huber) and residuals from `ys`; into `residuals` unsorted.
void centre_classes(const std::map<int, std::vector<double>>& ys, std::map<int, double>& centre,
                    std::vector<double>& residuals, double& dof) {
  for (const auto& [cls, v] : ys) {
    if (v.size() < 2) continue;
    const double c = centre[cls] = huber_location(v);
    for (double y : v) residuals.push_back(y - c);
    dof += static_cast<double>(v.size()) - 1;
  }
}

control_set read_controls(const pair_list& controls, const square<double>& alone, const pair_classes& classes,
                          double floor_bps, const model_settings& s, bool by_route = false) {
  control_set cs;
  cs.by_route = by_route;
  cs.fitted = s;
  cs.of_rank.resize(alone.n);
  for (const auto& [a, b] : controls) {
    const double v = alone.at(a, b);
    if (std::isnan(v)) continue;
    cs.of_rank[a].push_back(cs.all.size());
    cs.of_rank[b].push_back(cs.all.size());
    cs.all.push_back({a, b, cs.key(classes, a, b), std::log(std::max(v, floor_bps))});
    cs.of_class[cs.all.back().cls].push_back(cs.all.size() - 1);
    if (classes.one_cpu(a, b)) cs.of_lumped[classes.path(a, b, !by_route, false)].push_back(cs.all.size() - 1);
  }
  std::map<int, std::vector<double>> ys;  // by class
  for (const auto& [cls, members] : cs.of_class)
    for (const auto i : members) ys[cls].push_back(cs.all[i].y);
  centre_classes(ys, cs.centre, cs.residuals, cs.dof);
  for (auto& r : cs.residuals) r = std::fabs(r);
  std::ranges::sort(cs.residuals);
  return cs;
}

// One part's pairs alone against the controls of their classes that do not touch it: its effect,
// the variance of that estimate in units of the noise's (its mean's, and the class centres' it is
// read against), and the residuals that noise is read from: its controls' about their centres
// (`shared`, sorted, less `gone`: those of the classes that lost controls it touches, whose
// residuals about their new centres are with its own) and its pairs' about its effect, with
// their degrees of freedom. Undecided (NaN effect) with nothing to compare.
struct part_fit {
  lasting_effect l;
  double var = 0;
  std::vector<double> residuals;
  const std::vector<double>* shared = nullptr;
  std::vector<double> gone;  // |residual| in shared, ascending
  double dof = 0;
  std::vector<double> own;  // its pairs alone against their controls' centres, log
  // of the effect, log^2, shares measured elsewhere with their degrees of freedom: the CPUs' own
  // offsets where read against pairs on others, and the part's own share
  std::vector<std::pair<double, double>> drawn;
};

// Where a pair on one CPU has too few controls of its own CPU clear of the part: the centre of the
// controls on the host's other CPUs too (its path keyed as on any CPU) and how many, or none.
std::optional<std::pair<double, double>> lumped_centre(const model_cause& part, const control_set& cs, int lumped) {
  const auto of = cs.of_lumped.find(lumped);
  if (of == cs.of_lumped.end()) return std::nullopt;
  std::vector<double> v;
  for (const auto j : of->second)
    if (!part.holds(cs.all[j].a) && !part.holds(cs.all[j].b)) v.push_back(cs.all[j].y);
  if (v.size() < 2) return std::nullopt;
  return std::pair{huber_location(v), static_cast<double>(v.size())};
}

// The classes of controls the part touches, again without those controls; what they replace
// in the shared set is taken out of it (`gone`, `dof`).
void refit_touched(const model_cause& part, const control_set& cs, part_fit& f, std::map<int, std::vector<double>>& ys,
                   std::map<int, double>& centre) {
  std::set<std::size_t> touched;
  for (const auto r : part.members) touched.insert(cs.of_rank[r].begin(), cs.of_rank[r].end());
  for (const auto i : touched) {
    const auto [it, fresh] = ys.try_emplace(cs.all[i].cls);
    if (!fresh) continue;
    for (const auto j : cs.of_class.at(it->first))
      if (!touched.contains(j)) it->second.push_back(cs.all[j].y);
  }
  for (const auto& [cls, v] : ys) {
    const auto c = cs.centre.find(cls);
    if (c == cs.centre.end()) continue;
    for (const auto j : cs.of_class.at(cls)) f.gone.push_back(std::fabs(cs.all[j].y - c->second));
    f.dof -= static_cast<double>(cs.of_class.at(cls).size()) - 1;
  }
  std::ranges::sort(f.gone);
  centre_classes(ys, centre, f.residuals, f.dof);
}

part_fit fit_part(const model_cause& part, const pair_list& side, const control_set& cs, const square<double>& alone,
                  const pair_classes& classes, double floor_bps,
                  const std::set<std::pair<std::uint32_t, std::uint32_t>>& held, bool missing_moved_nothing = false) {
  part_fit f{lasting_effect{part}, 0, {}, &cs.residuals, {}, cs.dof, {}, {}};
  lasting_effect& out = f.l;
  const auto log_alone = [&](std::uint32_t a, std::uint32_t b) {
    const double v = alone.at(a, b);
    if (std::isnan(v)) return missing_moved_nothing ? std::log(floor_bps) : nan;
    return std::log(std::max(v, floor_bps));
  };
  std::map<int, std::vector<double>> own_ys;  // the classes that lost controls it touches
  std::map<int, double> own_centre;
  refit_touched(part, cs, f, own_ys, own_centre);
  const auto ctrl_size = [&](int cls) {
    const auto it = own_ys.find(cls);
    return static_cast<double>(it != own_ys.end() ? it->second.size() : cs.of_class.at(cls).size());
  };
  const auto centre = [&](int cls) -> std::optional<double> {
    const auto& in = own_ys.contains(cls) ? own_centre : cs.centre;
    const auto it = in.find(cls);
    return it == in.end() ? std::nullopt : std::optional<double>(it->second);
  };
  std::vector<double> d;
  std::map<int, double> per_class, per_cpu;             // the part's pairs in each class; on each CPU read by others
  std::map<int, std::pair<double, double>> per_lumped;  // of those, by lumped path: pairs and its controls
  std::map<int, std::optional<std::pair<double, double>>> lumped_at;  // lumped_centre, by lumped path
  for (const auto& [a, b] : side) {
    if (held.contains({a, b})) {
      ++out.held;
      continue;
    }
    const double y = log_alone(a, b);
    const int cls = cs.key(classes, a, b);
    auto c = centre(cls);
    if (!c && classes.one_cpu(a, b)) {
      const int lumped = classes.path(a, b, !cs.by_route, false);
      if (!lumped_at.contains(lumped)) lumped_at[lumped] = lumped_centre(part, cs, lumped);
      if (const auto& l = lumped_at[lumped]; l && !std::isnan(y)) {
        d.push_back(y - l->first);
        per_cpu[cls] += 1;
        auto& [count, size] = per_lumped[lumped];
        count += 1;
        size = l->second;
      }
      continue;
    }
    if (std::isnan(y) || !c) continue;
    d.push_back(y - *c);
    per_class[cls] += 1;
  }
  out.held_back = 2 * out.held > side.size();
  if (d.empty() || out.held_back) return f;  // nothing to compare with: undecided
  out.effect = huber_location(d);
  const double k = static_cast<double>(d.size());
  if (d.size() > 1)  // one pair is its own effect: no residual, no degree of freedom
    for (double x : d) f.residuals.push_back(x - out.effect);
  f.dof += k - 1;
  f.var = 1 / k;
  for (const auto& [cls, count] : per_class) {
    f.var += (count / k) * (count / k) / ctrl_size(cls);
    out.controls += static_cast<std::size_t>(ctrl_size(cls));
  }
  for (const auto& [path, count_size] : per_lumped) {
    f.var += (count_size.first / k) * (count_size.first / k) / count_size.second;
    out.controls += static_cast<std::size_t>(count_size.second);
  }
  double cpu_var = 0;
  for (const auto& [cls, count] : per_cpu) cpu_var += (count / k) * (count / k) * cs.fitted.cpu_sd * cs.fitted.cpu_sd;
  if (cpu_var > 0) f.drawn.emplace_back(cpu_var, cs.fitted.cpu_dof);
  // a link's pair is one draw and its controls' spread holds its ranks' shares; a rank's, NIC's or
  // node's pairs share its draw whole, however many there are
  const bool whole = part.kind != outlier_kind::link && part.kind != outlier_kind::uplink;
  if (whole && std::ranges::any_of(part.members, [&](std::uint32_t r) { return classes.shares_cpu(r); }))
    f.drawn.emplace_back(cs.fitted.part_sd * cs.fitted.part_sd, cs.fitted.part_dof);
  out.pairs = d.size();
  f.own = std::move(d);
  return f;
}

// mad_scale about 0 of a part's residuals and the shared ones (less those it replaced).
double residual_scale(const part_fit& f) {
  std::vector<double> own;
  for (double r : f.residuals) own.push_back(std::fabs(r));
  std::ranges::sort(own);
  const double m = median_of_sorted(*f.shared, own, f.gone);
  return std::isfinite(m) ? 1.4826 * m : 0;
}

// The part's interval and its test under the interval null "at least --slow % alone".
// Each part's noise is read from its own residuals (a robust scale of its controls and its pairs),
// not from one scale for the whole retest: pairs alone across a retest are no single population
// (node pairs and paths differ alone), and a pooled scale widens every part's interval by the
// spread between them, which says nothing of this part's pairs.
void test_part(part_fit& f, double slow) {
  lasting_effect& out = f.l;
  out.below = static_cast<std::size_t>(std::ranges::count_if(f.own, [&](double x) { return x < slow; }));
  const bool none = f.residuals.empty() && f.shared->size() == f.gone.size();
  const double scale = none ? nan : residual_scale(f), dof = f.dof;
  if (std::isnan(out.effect) || !(dof >= 1) || std::isnan(scale)) {
    out.effect = nan;  // nothing to compare with: undecided
    return;
  }
  double var = scale * scale * f.var;
  const double measured = var;
  for (const auto& [v, d] : f.drawn) var += v;
  const double se = std::max(std::sqrt(var), 1e-12);
  // Welch-Satterthwaite: each share was measured on its own degrees of freedom, so where one is
  // most of the error the t's tails are its
  double spread = measured * measured / dof;
  for (const auto& [v, d] : f.drawn) spread += v * v / d;
  const double dof_eff = spread > 0 ? var * var / spread : dof;
  const double q = t_quantile(0.025, dof_eff);
  out.lo = out.effect - q * se;
  out.hi = out.effect + q * se;
  out.dof = dof_eff;
  out.p_slow = t_upper((out.effect - slow) / -se, dof_eff);
  out.cleared = out.lo > slow;
}

// Whether `b` alone lies above `a` beyond chance at `alpha` (one-sided): a part is named smaller
// than its whole only on evidence as strong as what counts a part at all.
bool lies_above(const lasting_effect& a, const lasting_effect& b, double alpha) {
  if (std::isnan(a.effect) || std::isnan(b.effect) || !(a.dof >= 1)) return false;
  const double q95 = t_quantile(0.025, a.dof);  // the intervals' quantile, to recover each one's error
  const double se_a = (a.hi - a.effect) / q95, se_b = (b.hi - b.effect) / q95;
  return b.effect - a.effect > t_quantile(alpha, a.dof) * std::sqrt(se_a * se_a + se_b * se_b);
}

// Which counted parts stand: a part holding counted parts stands for them unless its other
// parts of their kind are fine (above --slow in the run, or cleared alone); all of them counted,
// the part stands.
void settle(std::vector<lasting_effect>& judged, const model_retest_plan& plan, double slow, double alpha) {
  std::vector<std::size_t> order(judged.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto size = [&](std::size_t i) { return judged[i].part.members.size(); };
  std::ranges::stable_sort(order, std::greater<>{}, size);
  for (auto o : order) {
    auto& outer = judged[o];
    // an uplink's inner parts were read against controls through it: see narrow_uplinks
    if (!outer.counted || outer.within || outer.part.kind == outlier_kind::uplink) continue;
    std::vector<std::size_t> in;
    for (std::size_t i = 0; i < judged.size(); ++i)
      if (judged[i].counted && inside(judged[i].part, outer.part)) in.push_back(i);
    if (in.empty()) continue;
    // the kind of its largest counted part inside, and every part of that kind inside it
    const auto kind = judged[*std::ranges::max_element(in, {}, size)].part.kind;
    // narrowed only where some part of that kind is shown fine, and none is left unexplained:
    // cleared alone, or alone above every counted part inside beyond chance (the part is not
    // one whole slow alike, whatever --slow says of the faster one)
    const auto above_counted = [&](const lasting_effect& l) {
      return std::ranges::all_of(in, [&](std::size_t i) { return lies_above(judged[i], l, alpha); });
    };
    bool others_fine = true, some_fine = false;
    for (const auto& p : plan.parts) {
      if (p.kind != kind || !inside(p, outer.part)) continue;
      const auto j = std::ranges::find_if(
          judged, [&](const lasting_effect& l) { return l.part.members == p.members && l.part.sends == p.sends; });
      const bool counted = j != judged.end() && j->counted;
      const bool fine = j == judged.end() ? !(p.effect < slow) : j->cleared || (!counted && above_counted(*j));
      if (!counted && !fine) others_fine = false;
      some_fine |= !counted && fine;
    }
    if (others_fine && some_fine) {
      outer.narrowed = true;
    } else {
      for (auto i : in) judged[i].within = true;
    }
  }
}

// A counted uplink under which rank, NIC or node parts stand (each read alone against controls
// through the same uplink, so slow beyond it): refit without the pairs of those parts, it stays
// counted beside them where it still passes the bar it passed, and is `narrowed` to them where
// it does not (a port at half under a healthy uplink slows only its own pairs through it).
void narrow_uplinks(std::vector<lasting_effect>& out, const std::vector<double>& bar, const model_retest_plan& plan,
                    const control_set& by_route, const square<double>& alone, const pair_classes& classes,
                    double floor_bps, const std::set<std::pair<std::uint32_t, std::uint32_t>>& held, double slow) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const model_cause& up = out[i].part;
    if (up.kind != outlier_kind::uplink || !out[i].counted) continue;
    const auto standing_under = [&](std::uint32_t r) {
      return std::ranges::any_of(out, [&](const lasting_effect& l) {
        return l.part.kind != outlier_kind::uplink && l.stands() && l.part.sends == up.sends && l.part.holds(r) &&
               up.holds(r);
      });
    };
    pair_list kept;
    for (const auto& [a, b] : plan.sides[i])
      if (!standing_under(up.sends ? a : b)) kept.emplace_back(a, b);
    if (kept.size() == plan.sides[i].size()) continue;
    bool still = false;
    if (!kept.empty()) {
      auto f = fit_part(up, kept, by_route, alone, classes, floor_bps, held);
      test_part(f, slow);
      still = f.l.p_slow < bar[i];
    }
    out[i].narrowed = !still;
  }
}

// A counted part whose pairs alone are slow only toward a counted part of the other side (a
// receiver's pairs from a lossy sender stall alone as the sender's do) is that part's evidence:
// refit without its pairs toward the other side's counted parts, it stays counted only where it
// still passes the bar it passed. Each is read against the parts Holm counted, not in turn, so the
// order of the parts decides nothing (a lone slow link explains away both its ends: it is the
// link's). A counted link is such a part too: its pair is its evidence, not its ends'. Leaving a
// count out never raises the chance of counting a healthy part.
void explain_away(std::vector<lasting_effect>& out, const std::vector<double>& bar, const model_retest_plan& plan,
                  const control_set& by_path, const control_set& by_route, const square<double>& alone,
                  const pair_classes& classes, double floor_bps,
                  const std::set<std::pair<std::uint32_t, std::uint32_t>>& held, double slow,
                  const std::set<std::pair<std::uint32_t, std::uint32_t>>& counted_links) {
  std::vector<std::size_t> counted;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i].counted) counted.push_back(i);
  std::vector<std::uint8_t> explained(out.size(), 0);
  // whether part j of the other side, not counted, still reads below --slow alone without its
  // pairs toward p (so not by p's doing) and is not cleared: it may be what slows p's pairs
  // with it, and those are no evidence for p (a lossy port's pairs stall at random: too spread
  // to count it, slow enough to count a receiver of two of them)
  const auto may_explain = [&](std::size_t j, const model_cause& p) {
    const model_cause& q = out[j].part;
    if (out[j].counted || q.sends == p.sends || q.kind == outlier_kind::uplink || !(out[j].effect < slow)) return false;
    pair_list kept;
    for (const auto& [a, b] : plan.sides[j])
      if (!p.holds(q.sends ? b : a)) kept.emplace_back(a, b);
    if (kept.empty()) return false;
    auto f = fit_part(q, kept, by_path, alone, classes, floor_bps, held);
    test_part(f, slow);
    return f.l.effect < slow && !f.l.cleared;
  };
  for (const auto i : counted) {
    const model_cause& p = out[i].part;
    std::vector<std::size_t> others = counted;
    for (std::size_t j = 0; j < out.size(); ++j)
      if (may_explain(j, p)) others.push_back(j);
    const auto toward_counted = [&](std::uint32_t a, std::uint32_t b) {
      if (counted_links.contains({a, b})) return true;
      const std::uint32_t partner = p.sends ? b : a;
      return std::ranges::any_of(
          others, [&](std::size_t j) { return out[j].part.sends != p.sends && out[j].part.holds(partner); });
    };
    pair_list kept;
    for (const auto& [a, b] : plan.sides[i])
      if (!toward_counted(a, b)) kept.emplace_back(a, b);
    if (kept.size() == plan.sides[i].size()) continue;
    auto f = fit_part(p, kept, p.kind == outlier_kind::uplink ? by_route : by_path, alone, classes, floor_bps, held);
    test_part(f, slow);
    explained[i] = !(f.l.p_slow < bar[i]);
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!explained[i]) continue;
    out[i].counted = false;
    out[i].explained = true;
  }
}

}  // namespace

std::vector<lasting_effect> judge_model_retest(const model_retest_plan& plan, const square<double>& alone,
                                               const pair_classes& classes, const model_settings& s, double floor_bps,
                                               std::span<const std::pair<std::uint32_t, std::uint32_t>> held,
                                               std::span<retest_verdict> links) {
  const double slow = std::log(s.slow_pct / 100);
  const std::set<std::pair<std::uint32_t, std::uint32_t>> held_set(held.begin(), held.end());
  const control_set cs = read_controls(plan.controls, alone, classes, floor_bps, s);
  const control_set cs_route = read_controls(plan.controls, alone, classes, floor_bps, s, true);
  std::vector<lasting_effect> out;  // each part tested as it is fitted: a fit holds its controls' residuals
  for (std::size_t i = 0; i < plan.screened.size(); ++i) {
    const auto& part = plan.parts[plan.screened[i]];
    auto f = fit_part(part, plan.sides[i], part.kind == outlier_kind::uplink ? cs_route : cs, alone, classes, floor_bps,
                      held_set);
    test_part(f, slow);
    out.push_back(std::move(f.l));
  }
  // Holm over every part and link the run chose
  std::vector<double> p, bar(out.size(), s.alpha);
  std::vector<std::pair<bool*, double*>> family;  // a part's count and the bar it passed (a link: none)
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!plan.naming[i]) p.push_back(out[i].p_slow), family.emplace_back(&out[i].counted, &bar[i]);
  for (auto& v : links)
    if (v.named && !v.starved) p.push_back(v.p_slow), family.emplace_back(&v.counted, nullptr);
  const auto passed = holm(p, s.alpha);
  for (std::size_t r = 0; r < family.size(); ++r) {
    if (!(passed[r] > 0)) continue;
    *family[r].first = true;
    if (family[r].second) *family[r].second = passed[r];
  }
  // a part retested only to name inside a counted one counts at alpha alone: which part of a
  // counted whole is slow moves no drain (the whole's node is drained either way)
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!plan.naming[i] || !(out[i].p_slow < s.alpha)) continue;
    out[i].counted =
        std::ranges::any_of(out, [&](const lasting_effect& o) { return o.counted && inside(out[i].part, o.part); });
  }
  std::set<std::pair<std::uint32_t, std::uint32_t>> counted_links;
  for (const auto& v : links)
    if (v.counted) counted_links.emplace(v.src, v.dst);
  explain_away(out, bar, plan, cs, cs_route, alone, classes, floor_bps, held_set, slow, counted_links);
  settle(out, plan, slow, s.alpha);
  narrow_uplinks(out, bar, plan, cs_route, alone, classes, floor_bps, held_set, slow);
  return out;
}

std::vector<lasting_effect> judge_pairs_alone(const pair_list& pairs, const pair_list& controls,
                                              const square<double>& alone, const pair_classes& classes,
                                              const model_settings& s, double floor_bps) {
  const control_set cs = read_controls(controls, alone, classes, floor_bps, s);
  std::vector<lasting_effect> out;
  for (const auto& [a, b] : pairs) {
    // a pair against every control of its path, those that share an end with it too: alone its
    // ends are what a link's reading holds (its link or NIC), and a 4-rank job has no other controls
    model_cause one;
    one.kind = outlier_kind::link;
    one.rank = static_cast<std::int32_t>(a);
    // a pair that did not run alone did not recover: it reads as one that moved nothing
    auto f = fit_part(one, {{a, b}}, cs, alone, classes, floor_bps, {}, true);
    test_part(f, std::log(s.slow_pct / 100));
    out.push_back(std::move(f.l));
  }
  return out;
}

namespace {

// The pairs of `more` not yet in `into`, added.
void add_pairs(pair_list& into, const pair_list& more) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen(into.begin(), into.end());
  for (const auto& p : more)
    if (seen.insert(p).second) into.push_back(p);
}

}  // namespace

std::vector<std::uint8_t> named_sides(std::span<const outlier> found, std::span<const std::int32_t> node_of,
                                      std::span<const nic_group> nics, std::uint32_t n) {
  std::vector<std::uint8_t> out(n, 0);
  for (const auto& o : found) {
    // a cause names a side by its figure (NaN: that side was not named); one with neither, both
    const std::uint8_t sides =
        (std::isnan(o.send_pct) ? 0 : named_sends) | (std::isnan(o.recv_pct) ? 0 : named_receives);
    const auto ranks = named_ranks(std::span(&o, 1), node_of, nics, n);
    for (std::uint32_t r = 0; r < n; ++r)
      if (ranks[r]) out[r] |= sides != 0 ? sides : named_sends | named_receives;
  }
  return out;
}

full_retest plan_full_retest(const run_matrices& m, const pair_classes& classes, const model_settings& s,
                             const outlier_report& run, std::span<const std::int32_t> node_of,
                             std::span<const nic_group> nics, std::span<const switch_group> uplinks) {
  full_retest out;
  out.pairs = plan_job_retest(m.tx_bw, m.flags, m.round, classes, s.slow_pct, run.found, uplinks);
  if (!(s.alpha > 0)) return out;
  out.model =
      plan_model_retest(m, run.parts, node_of, classes, s, 8, 8, named_sides(run.found, node_of, nics, m.tx_bw.n));
  // a pair slow or named is judged as such (judge_retest), not as a control; a pair of a part's
  // side that is another part's control stays a control (measured once, read both ways), so
  // that a retest whose every pair some part holds still has controls to judge pairs against
  const std::set<std::pair<std::uint32_t, std::uint32_t>> slow(out.pairs.slow.begin(), out.pairs.slow.end());
  add_pairs(out.pairs.controls, out.model.controls);
  std::erase_if(out.pairs.controls, [&](const auto& p) { return slow.contains(p); });
  const std::set<std::pair<std::uint32_t, std::uint32_t>> controls(out.pairs.controls.begin(),
                                                                   out.pairs.controls.end());
  pair_list sides;
  for (const auto& side : out.model.sides)
    for (const auto& p : side)
      if (!controls.contains(p)) sides.push_back(p);
  add_pairs(out.pairs.slow, sides);
  return out;
}

}  // namespace rdmamesh::stats
