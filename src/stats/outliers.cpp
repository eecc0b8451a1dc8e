// The finder: the run's model (model.hpp) fit to its pairs, every part tested in one family with
// Holm's step-down at the run's false-alarm level, single pairs no named part explains tested the
// same way; failed pairs and --expect's floor apart. See the header.
#include "rdmamesh/stats/outliers.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <utility>

#include "rdmamesh/stats/median.hpp"
#include "rdmamesh/stats/model.hpp"
#include "rdmamesh/stats/model_retest.hpp"
#include "rdmamesh/stats/pair_class.hpp"

namespace rdmamesh::stats {
namespace {

// The pairs a run judges: they ran, did not fail and measured a window; by rank, its pairs each
// way; by slot, each one's index (-1: not judged).
struct run_pairs {
  std::vector<std::uint32_t> src, dst;
  std::vector<double> bw, msgs, secs;
  std::vector<std::vector<std::uint32_t>> out_of, into;
  std::vector<std::int64_t> at;
};

run_pairs gather(const run_matrices& m) {
  run_pairs p;
  p.out_of.resize(m.tx_bw.n);
  p.into.resize(m.tx_bw.n);
  p.at.assign(m.tx_bw.slots(), -1);
  require_shared_slots(m);
  for (std::size_t i = 0; i < m.tx_bw.slots(); ++i) {
    const auto a = m.tx_bw.src(i), b = m.tx_bw.dst(i);
    if (a == b || m.round.v[i] < 0 || m.flags.v[i] != 0 || !(m.tx_s.v[i] > 0) || !std::isfinite(m.tx_bw.v[i])) continue;
    p.at[i] = static_cast<std::int64_t>(p.src.size());
    p.out_of[a].push_back(static_cast<std::uint32_t>(p.src.size()));
    p.into[b].push_back(static_cast<std::uint32_t>(p.src.size()));
    p.src.push_back(a);
    p.dst.push_back(b);
    p.bw.push_back(m.tx_bw.v[i]);
    p.msgs.push_back(static_cast<double>(m.tx_msgs.v[i]));
    p.secs.push_back(m.tx_s.v[i]);
  }
  return p;
}

void add_failed(const run_matrices& m, outlier_report& out) {
  for (std::size_t i = 0; i < m.flags.slots(); ++i) {
    const auto a = m.flags.src(i), b = m.flags.dst(i);
    if (a == b || m.round.v[i] < 0 || m.flags.v[i] == 0) continue;
    out.found.push_back({outlier_kind::failed, outlier_basis::failed, -1, static_cast<std::int32_t>(a),
                         static_cast<std::int32_t>(b), nan, nan, 1, 0});
  }
}

// The run's size as judged: pairs measured, their median rate and count, the count's quantum;
// whether they are too few messages or too short to tell a cause from chance.
void summarize(const run_pairs& rp, const finder_settings& s, outlier_report& out) {
  std::uint64_t q = 0;
  for (const double c : rp.msgs) q = std::gcd(q, static_cast<std::uint64_t>(c));
  if (s.max_quantum > 0) q = std::min(q, s.max_quantum);
  out.quantum = std::max<std::uint64_t>(q, 1);
  out.measured = static_cast<std::uint32_t>(rp.src.size());
  out.median = median_of(rp.bw);
  if (!(out.median > 0)) return;
  if (s.counted) {
    out.median_msgs = median_of(rp.msgs);
    // so few that scheduling alone moves a pair by half: nothing here could be told from chance
    out.too_few_msgs = out.median_msgs < s.min_msgs;
  } else if (s.min_pair_s > 0) {
    out.median_s = median_of(rp.secs);
    // over so soon that a rank's wait for its CPU is most of a pair's time: start-up, not links
    out.too_short = !(out.median_s >= s.min_pair_s);
  }
}

// Whether pair (a, b) is on part c's side: sends leave it, receives enter it; a node's and a NIC's
// pairs only to and from other nodes (what their ports carry).
bool on_side(const model_cause& c, bool sends, std::uint32_t a, std::uint32_t b,
             std::span<const std::int32_t> node_of) {
  const auto [self, other] = sends ? std::pair{a, b} : std::pair{b, a};
  if (c.kind == outlier_kind::rank) return static_cast<std::int32_t>(self) == c.rank;
  if (!c.holds(self) || c.holds(other)) return false;
  return c.kind == outlier_kind::uplink || c.kind == outlier_kind::node || across_nodes(node_of, self, other);
}

// The pairs on a part's side, by walking its members' pairs that way.
template <class Each>
void each_on_side(const run_pairs& rp, const model_cause& c, bool sends, std::span<const std::int32_t> node_of,
                  Each each) {
  for (const auto r : c.members) {
    if (r >= rp.out_of.size()) continue;
    for (const auto k : sends ? rp.out_of[r] : rp.into[r])
      if (on_side(c, sends, rp.src[k], rp.dst[k], node_of)) each(k);
  }
}

// Where o already names c's unit (the other side), that outlier; else a new one.
outlier& outlier_for(std::vector<outlier>& found, const outlier& o) {
  const auto it = std::ranges::find_if(found, [&](const outlier& x) {
    return x.kind == o.kind && x.basis == o.basis && x.node == o.node && x.rank == o.rank && x.peer == o.peer;
  });
  return it != found.end() ? *it : found.emplace_back(o);
}

// A part's direct parts on its side: a NIC's ranks; a node's NICs, or without them its ranks; an
// uplink's uplinks under it and the nodes under none of those.
std::vector<std::size_t> direct_parts(std::span<const model_cause> parts, std::size_t outer) {
  const auto& o = parts[outer];
  const auto may_hold = [&](outlier_kind k) {
    if (o.kind == outlier_kind::uplink) return k == outlier_kind::uplink || k == outlier_kind::node;
    return k == outlier_kind::rank || (o.kind == outlier_kind::node && k == outlier_kind::nic);
  };
  std::vector<std::size_t> in;
  for (std::size_t j = 0; j < parts.size(); ++j)
    if (j != outer && parts[j].sends == o.sends && may_hold(parts[j].kind) && inside(parts[j], o)) in.push_back(j);
  std::vector<std::size_t> out;  // those no other of them holds
  for (const auto j : in)
    if (std::ranges::none_of(in, [&](std::size_t k) { return inside(parts[j], parts[k]); })) out.push_back(j);
  return out;
}

// The named parts that stand: a part stands for what it holds where each of its direct parts is
// named too, or none is; where only some are, they stand, not it (one slow rank slows its
// node's mean). A part held by one that stands is not named apart.
std::vector<std::size_t> resolve(std::span<const model_cause> parts, const std::vector<std::uint8_t>& named) {
  std::vector<std::size_t> stands;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!named[i]) continue;
    const auto kids = direct_parts(parts, i);
    const auto hit = std::ranges::count_if(kids, [&](std::size_t j) { return named[j] != 0; });
    if (hit == 0 || hit == static_cast<std::ptrdiff_t>(kids.size())) stands.push_back(i);
  }
  std::vector<std::size_t> out;
  for (const auto i : stands)
    if (std::ranges::none_of(stands, [&](std::size_t j) { return inside(parts[i], parts[j]); })) out.push_back(i);
  return out;
}

// --expect: pairs below the floor. Most of the run's: the whole fabric. Else each part one of
// whose sides has most of its pairs, two at least, below, standing for its parts as the noise's
// do (resolve) and named where it holds a pair below no other has (two subtrees' uplinks carry
// the same pairs); then single pairs.
void below_floor(const run_pairs& rp, std::span<const model_cause> sides, std::span<const std::int32_t> node_of,
                 std::span<const switch_group> uplinks, double floor, std::vector<std::uint8_t>& covered,
                 std::vector<outlier>& found) {
  const auto under = static_cast<std::size_t>(std::ranges::count_if(rp.bw, [&](double bw) { return bw < floor; }));
  if (under == 0) return;
  if (2 * under > rp.bw.size()) {
    std::ranges::fill(covered, std::uint8_t{1});
    found.push_back({outlier_kind::fabric, outlier_basis::expect, -1, -1, -1, median_of(rp.bw) / floor * 100, nan,
                     static_cast<std::uint32_t>(under), static_cast<std::uint32_t>(rp.bw.size() - under)});
    return;
  }
  std::vector<std::uint8_t> named;
  for (const auto& c : sides) {
    std::size_t below = 0, total = 0;
    each_on_side(rp, c, c.sends, node_of, [&](std::uint32_t k) { ++total, below += rp.bw[k] < floor; });
    named.push_back(below >= 2 && 2 * below > total);
  }
  for (const auto i : resolve(sides, named)) {
    std::vector<double> bws;
    std::uint32_t fine = 0, fresh = 0;
    each_on_side(rp, sides[i], sides[i].sends, node_of, [&](std::uint32_t k) {
      bws.push_back(rp.bw[k]);
      fine += !(rp.bw[k] < floor);
      fresh += !covered[k] && rp.bw[k] < floor;
      covered[k] = 1;
    });
    if (fresh == 0) continue;
    outlier& o = outlier_for(found, as_outlier(sides[i], outlier_basis::expect, uplinks));
    (sides[i].sends ? o.send_pct : o.recv_pct) = median_of(bws) / floor * 100;
    o.pairs += static_cast<std::uint32_t>(bws.size()) - fine;
    o.fine += fine;
  }
  for (std::size_t k = 0; k < rp.bw.size(); ++k) {
    if (covered[k] || !(rp.bw[k] < floor)) continue;
    covered[k] = 1;
    found.push_back({outlier_kind::link, outlier_basis::expect, -1, static_cast<std::int32_t>(rp.src[k]),
                     static_cast<std::int32_t>(rp.dst[k]), rp.bw[k] / floor * 100, nan, 1, 0});
  }
}

// The parts the run's model names against its noise, most slow pairs first, each with its pairs below
// --slow % of their class (slow) and the rest (fine); their pairs covered.
void judge_noise(const run_pairs& rp, const effects_fit& f, std::span<const model_cause> parts,
                 std::span<const std::int32_t> node_of, std::span<const switch_group> uplinks, const finder_settings& s,
                 std::vector<std::uint8_t>& covered, outlier_report& out) {
  const double floor = std::log(s.slow_pct / 100);
  std::vector<const effects_fit::pair*> fit_of(rp.src.size(), nullptr);
  for (const auto& fp : f.pairs)
    if (rp.at[fp.slot] >= 0) fit_of[static_cast<std::size_t>(rp.at[fp.slot])] = &fp;
  std::vector<outlier> found;
  for (const auto i : standing_parts(parts, s.alpha, s.slow_pct)) {
    const auto& c = parts[i];
    std::uint32_t slow = 0, fine = 0;
    each_on_side(rp, c, c.sends, node_of, [&](std::uint32_t k) {
      covered[k] = 1;
      if (const auto* fp = fit_of[k]) (fp->y - f.class_offset[fp->cohort] < floor ? slow : fine) += 1;
    });
    outlier& o = outlier_for(found, as_outlier(c, outlier_basis::noise, uplinks));
    (c.sends ? o.send_pct : o.recv_pct) = std::exp(c.effect) * 100;
    o.pairs += slow;
    o.fine += fine;
  }
  std::ranges::stable_sort(found, std::greater{}, &outlier::pairs);
  out.found.insert(out.found.end(), found.begin(), found.end());
}

// Single pairs no named part covers: each its residual over the noise and its count's error,
// tested in one family (Holm), and slow below --slow % of its class.
void judge_links(const run_pairs& rp, const effects_fit& f, const std::vector<std::uint8_t>& covered,
                 const finder_settings& s, double dof, outlier_report& out) {
  const double floor = std::log(s.slow_pct / 100);
  std::vector<std::size_t> open;
  std::vector<double> p;
  for (std::size_t i = 0; i < f.pairs.size(); ++i) {
    const auto& fp = f.pairs[i];
    if (rp.at[fp.slot] < 0 || covered[static_cast<std::size_t>(rp.at[fp.slot])]) continue;
    open.push_back(i);
    const double residual = fp.y - f.fitted(fp);
    p.push_back(t_upper(-residual / std::max(std::sqrt(f.noise * f.noise + fp.var), 1e-12), dof));
  }
  const auto bars = holm(p, s.alpha);
  for (std::size_t j = 0; j < open.size(); ++j) {
    const auto& fp = f.pairs[open[j]];
    const double vs_class = fp.y - f.class_offset[fp.cohort];
    if (!(bars[j] > 0) || !(fp.y - f.fitted(fp) < floor) || !(vs_class < floor)) continue;
    out.found.push_back({outlier_kind::link, outlier_basis::noise, -1, static_cast<std::int32_t>(fp.a),
                         static_cast<std::int32_t>(fp.b), std::exp(vs_class) * 100, nan, 1, 0});
  }
}

// The % of its class a pair or part must fall below to be named: t yardsticks under, never above
// --slow
double named_below_pct(double slow_pct, double t, double scale) {
  return std::exp(std::min(std::log(slow_pct / 100), -t * scale)) * 100;
}

// The effect a typical part of each kind must fall below to be named, each side apart: Holm's
// first bar over the run's parts, times the median scale that side's parts were read against,
// and never above --slow
std::vector<outlier_report::part_bound> part_bounds(std::span<const model_cause> parts, const finder_settings& s,
                                                    double dof) {
  if (parts.empty()) return {};
  const double t = t_quantile(s.alpha / static_cast<double>(parts.size()), dof);
  const auto bound = [&](std::vector<double> scale) {
    return named_below_pct(s.slow_pct, t, median_of(std::move(scale)));
  };
  std::vector<outlier_report::part_bound> out;
  for (const auto kind : {outlier_kind::rank, outlier_kind::nic, outlier_kind::node, outlier_kind::uplink}) {
    std::vector<double> sends, recvs;
    for (const auto& c : parts)
      if (c.kind == kind) (c.sends ? sends : recvs).push_back(c.scale);
    // a kind of one part a side (a job's only node) has nothing to be told from: no bound
    if (sends.size() >= 2 && recvs.size() >= 2) out.push_back({kind, bound(sends), bound(recvs)});
  }
  return out;
}

}  // namespace

outlier as_outlier(const model_cause& c, outlier_basis basis, std::span<const switch_group> uplinks) {
  outlier o{c.kind, basis, c.node, c.kind == outlier_kind::rank ? c.rank : -1, -1, nan, nan, 0, 0};
  if (c.kind == outlier_kind::nic) o.peer = c.rail;
  if (c.kind == outlier_kind::uplink) {
    // the switch whose uplink carries the same pairs the other way: two subtrees hold every rank
    const auto& mine = uplinks[static_cast<std::size_t>(c.rail)].members;
    for (const auto& u : uplinks)
      if (u.sw != c.node && std::ranges::equal(mine, u.members, std::not_equal_to{})) o.peer = u.sw;
  }
  return o;
}

std::vector<std::size_t> standing_parts(std::span<const model_cause> parts, double alpha, double slow_pct) {
  const double floor = std::log(slow_pct / 100);
  std::vector<double> p;
  for (const auto& c : parts) p.push_back(c.p);
  const auto bars = holm(p, alpha);
  std::vector<std::uint8_t> named(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) named[i] = bars[i] > 0 && parts[i].effect < floor;
  return resolve(parts, named);
}

const char* to_string(outlier_kind k) {
  switch (k) {
    case outlier_kind::node: return "node";
    case outlier_kind::rank: return "rank";
    case outlier_kind::link: return "link";
    case outlier_kind::failed: return "failed";
    case outlier_kind::fabric: return "fabric";
    case outlier_kind::uplink: return "uplink";
    case outlier_kind::nic: return "nic";
  }
  return "?";
}

const char* to_string(outlier_basis b) {
  switch (b) {
    case outlier_basis::noise: return "noise";
    case outlier_basis::expect: return "expect";
    case outlier_basis::failed: return "failed";
    case outlier_basis::retest: return "retest";
  }
  return "?";
}

outlier_report find_outliers(const run_matrices& m, std::uint64_t msg_size, std::span<const std::int32_t> node_of,
                             const finder_settings& s, std::span<const switch_group> uplinks,
                             std::span<const nic_group> nics) {
  outlier_report out;
  out.expect_bps = s.expect_bps;
  out.threshold_pct = nan;  // until the run's noise is measured
  add_failed(m, out);
  const run_pairs rp = gather(m);
  summarize(rp, s, out);
  if (!(out.median > 0)) return out;
  const std::uint32_t n = m.tx_bw.n;
  std::vector<std::int32_t> rail_of(n, -1);
  for (const auto& g : nics)
    for (const auto r : g.members)
      if (r < n) rail_of[r] = g.rail;
  std::vector<std::uint8_t> covered(rp.src.size(), 0);
  if (s.expect_bps > 0) {
    auto sides = job_parts(n, node_of, rail_of, uplinks);
    for (std::size_t i = 0, parts = sides.size(); i < parts; ++i) {
      sides.push_back(sides[i]);
      sides.back().sends = false;
    }
    below_floor(rp, sides, node_of, uplinks, s.expect_bps, covered, out.found);
  }
  if (out.too_few_msgs || out.too_short) return out;  // an absolute floor holds; the noise cannot be told
  const pair_classes classes(n, node_of, uplinks, nics);
  effects_fit f = fit_run(m, node_of, classes, uplinks, s.counted ? static_cast<double>(out.quantum) : 0, msg_size);
  // what the fit leaves to measure its noise by: its pairs less its offsets and effects (the
  // sends and the receives each centred: one fewer of each)
  std::size_t effects = 0;
  for (std::uint32_t r = 0; r < n; ++r) effects += (f.n_send[r] > 0) + (f.n_recv[r] > 0);
  for (std::size_t u = 0; u < f.up.size(); ++u) effects += (f.n_up[u] > 0) + (f.n_down[u] > 0);
  const double dof = static_cast<double>(f.pairs.size() + 2) - static_cast<double>(f.class_offset.size() + effects);
  out.judged = static_cast<std::uint32_t>(f.pairs.size());
  // a robust scale needs residuals to spare: with one or two left (a 3-rank mesh leaves one) the
  // fit can put all of them on a pair or two and read no noise at all
  if (dof < 3) {
    out.noise = f.noise;
    return out;
  }
  out.noise = f.noise;
  const model_settings ms{.alpha = s.alpha, .slow_pct = s.slow_pct};
  auto parts = model_parts(f, node_of, rail_of, ms, uplinks);
  judge_noise(rp, f, parts, node_of, uplinks, s, covered, out);
  judge_links(rp, f, covered, s, ms.tail_dof, out);
  // the bound a single pair of typical count must fall below to be named
  std::vector<double> var;
  for (const auto& p : f.pairs) var.push_back(p.var);
  const double t = t_quantile(s.alpha / static_cast<double>(f.pairs.size()), ms.tail_dof);
  out.threshold_pct = named_below_pct(s.slow_pct, t, std::sqrt(f.noise * f.noise + median_of(var)));
  out.part_bound_pct = part_bounds(parts, s, ms.tail_dof);
  out.parts = std::move(parts);
  out.alpha = s.alpha;
  out.slow_pct = s.slow_pct;
  f.pairs = {};  // N^2 of them: the job pools the effects alone
  out.fit = std::make_shared<const effects_fit>(std::move(f));
  return out;
}

}  // namespace rdmamesh::stats
