// The finder: pair scores against their cohorts, candidate causes tested against the pairs that
// do not touch them, a greedy cover of the slow pairs, links last. See the header for the rule.
#include "rdmamesh/stats/outliers.hpp"
#include "rdmamesh/stats/median.hpp"
#include "rdmamesh/stats/pair_class.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <utility>

namespace rdmamesh::stats {
namespace {

using mask = std::vector<std::uint8_t>;  // by judged pair, 1 = in the set

// What the tests read about every judged pair (one that ran, did not fail and measured a window),
// computed once per run. Pairs are numbered in (sender, receiver) order: a spread run judges
// K pairs a rank, not N, so nothing here is N x N.
struct evidence {
  std::uint32_t n = 0;
  std::vector<std::uint32_t> src, dst;  // each judged pair's ends
  // by rank, its judged pairs as sender (ascending: by receiver) and as receiver (by sender)
  std::vector<std::vector<std::uint32_t>> out_of;
  std::vector<double> log_bw;    // log of bytes/s, the count corrected by half a quantum
  std::vector<double> expected;  // messages per byte/s: seconds / size (for the counting error)
  // its class (pair_classes: within a node or across, the uplinks and rails it crosses); the
  // round that measured it
  std::vector<int> cls, rnd;
  // the same as dense indices, so that a candidate's scores group pairs by vector, not by map
  // (every candidate of every step re-scores the judged pairs): a class, and a cohort (class, round)
  std::vector<std::uint32_t> class_id, cohort_id;
  std::vector<std::uint32_t> class_of_cohort;
  std::uint32_t classes = 0, cohorts = 0;
  // the pairs in (receiver, sender) order, with what a receiver's scores are made of: a rank's
  // receives are then read in one pass, not gathered from all over the sender-ordered arrays
  std::vector<std::uint32_t> by_dst;      // pair index
  std::vector<std::uint32_t> into_start;  // n + 1: rank r's receives are by_dst[into_start[r] ...]
  std::span<const std::uint32_t> into(std::uint32_t r) const {
    return std::span<const std::uint32_t>(by_dst).subspan(into_start[r], into_start[r + 1] - into_start[r]);
  }
  std::vector<double> log_bw_by_dst;
  std::vector<std::uint32_t> cohort_by_dst;
  double quantum = 1;  // messages a count moves by (duration mode); 0: counts are exact
  std::size_t size() const { return src.size(); }
};

void number_cohorts(evidence& ev) {
  std::map<int, std::uint32_t> classes;
  std::map<std::pair<int, int>, std::uint32_t> cohorts;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    classes.try_emplace(ev.cls[i], 0);
    cohorts.try_emplace({ev.cls[i], ev.rnd[i]}, 0);
  }
  for (std::uint32_t k = 0; auto& [c, id] : classes) id = k++;
  ev.class_of_cohort.clear();
  for (std::uint32_t k = 0; auto& [c, id] : cohorts) {
    id = k++;
    ev.class_of_cohort.push_back(classes.at(c.first));
  }
  ev.classes = static_cast<std::uint32_t>(classes.size());
  ev.cohorts = static_cast<std::uint32_t>(cohorts.size());
  ev.class_id.assign(ev.size(), 0);
  ev.cohort_id.assign(ev.size(), 0);
  for (std::size_t i = 0; i < ev.size(); ++i) {
    ev.class_id[i] = classes.at(ev.cls[i]);
    ev.cohort_id[i] = cohorts.at({ev.cls[i], ev.rnd[i]});
  }
}

evidence gather(const run_matrices& m, std::uint64_t size, std::span<const std::int32_t> node_of,
                std::span<const switch_group> uplinks, std::span<const nic_group> nics, bool counted,
                std::uint64_t max_quantum) {
  evidence ev;
  const std::uint32_t n = ev.n = m.tx_bw.n;
  const pair_classes class_of(n, node_of, uplinks, nics);
  ev.out_of.resize(n);
  std::uint64_t q = 0;
  std::vector<double> bw;
  require_shared_slots(m);
  for (std::size_t i = 0; i < m.tx_bw.slots(); ++i) {  // in (source, destination) order
    const auto a = m.tx_bw.src(i), b = m.tx_bw.dst(i);
    const double secs = m.tx_s.v[i];
    if (a == b || m.round.v[i] < 0 || m.flags.v[i] != 0 || !(secs > 0) || !std::isfinite(m.tx_bw.v[i])) continue;
    const auto k = static_cast<std::uint32_t>(ev.src.size());
    ev.src.push_back(a);
    ev.dst.push_back(b);
    ev.out_of[a].push_back(k);
    ev.rnd.push_back(m.round.v[i]);
    // crossing switches or rails costs what it costs (oversubscribed uplinks, the spine; in the
    // emulation each bridge's CPU)
    ev.cls.push_back(class_of(a, b));
    ev.expected.push_back(secs / static_cast<double>(size));
    bw.push_back(m.tx_bw.v[i]);
    if (m.tx_msgs.v[i] > 0) q = std::gcd(q, m.tx_msgs.v[i]);
  }
  if (max_quantum > 0) q = std::min(q, max_quantum);
  ev.quantum = counted ? static_cast<double>(std::max<std::uint64_t>(q, 1)) : 0;
  // a count of 0 reads as half a quantum: slow, but not infinitely (its error says how much)
  for (std::size_t i = 0; i < ev.size(); ++i)
    ev.log_bw.push_back(std::log(std::max(bw[i], ev.quantum / 2 / ev.expected[i])));
  number_cohorts(ev);
  // receiver order: a counting sort of the sender-ordered pairs, each rank's by sender
  ev.into_start.assign(std::size_t{n} + 1, 0);
  for (const auto b : ev.dst) ++ev.into_start[b + 1];
  for (std::uint32_t r = 0; r < n; ++r) ev.into_start[r + 1] += ev.into_start[r];
  ev.by_dst.resize(ev.size());
  std::vector<std::uint32_t> at(ev.into_start.begin(), ev.into_start.end() - 1);
  for (std::uint32_t k = 0; k < ev.size(); ++k) ev.by_dst[at[ev.dst[k]]++] = k;
  for (const auto i : ev.by_dst) {
    ev.log_bw_by_dst.push_back(ev.log_bw[i]);
    ev.cohort_by_dst.push_back(ev.cohort_id[i]);
  }
  return ev;
}

// The relative error of a count of `predicted` messages that moves in steps of the quantum
// (Poisson in quanta); 0 where counts are exact (-n).
double counting_error(const evidence& ev, double predicted) {
  return ev.quantum > 0 ? std::sqrt(ev.quantum / (predicted + ev.quantum)) : 0;
}

// 1.4826 x the median absolute deviation: the standard deviation of a normal sample, unmoved
// by a few outliers; never below `floor`. Taken at its upper 95 % confidence bound (chi-square
// with m - 1 degrees of freedom, Wilson-Hilferty), so that six pairs that happen to agree do not
// make a tenth of a difference look like a fault.
double robust_spread(std::vector<double> v, double floor, double dof = 0) {
  const double m = static_cast<double>(v.size());
  const double mid = median_in(v);
  for (auto& x : v) x = std::fabs(x - mid);
  double sigma = std::max(floor, 1.4826 * median_in(v));
  // residuals of a fit spread less than the noise by the effects it took out
  if (dof > 0) sigma *= std::sqrt(m / dof);
  dof = dof > 0 ? dof : std::max(m - 1, 1.0);
  const double a = 2 / (9 * dof);
  const double chi2_low = dof * std::pow(std::max(1 - a - 1.6449 * std::sqrt(a), 0.05), 3);
  return sigma * std::sqrt(dof / chi2_low);
}

// One-sided Wilcoxon rank-sum (Mann-Whitney) test that `x` lies below `y`: the normal
// approximation's p-value, mid-ranks for ties. It asks only how the pairs order, so a run whose
// healthy ranks differ by a factor (the CPU a sick node frees goes unevenly) still tells a side
// whose every pair is below every reference pair.
// `u`: the pairs (xi, yj) with xi > yj, ties half.
double rank_sum_p(double u, double m, double n) {
  const double sd = std::sqrt(m * n * (m + n + 1) / 12);
  const double zscore = (u - m * n / 2 + 0.5) / sd;  // continuity-corrected
  return 0.5 * std::erfc(-zscore / std::sqrt(2.0));
}

// Each y placed among the sorted x (a side's few pairs) by two binary searches, O(n log m): a
// reference of one candidate is never sorted, which for every candidate tested would cost n log n.
double rank_sum_p(std::vector<double> x, const std::vector<double>& y) {
  if (x.empty() || y.empty()) return 1;
  std::ranges::sort(x);
  double u = 0;
  for (double b : y) {
    const auto lo = std::lower_bound(x.begin(), x.end(), b);
    const auto hi = std::upper_bound(lo, x.end(), b);
    u += static_cast<double>(x.end() - hi) + 0.5 * static_cast<double>(hi - lo);
  }
  return rank_sum_p(u, static_cast<double>(x.size()), static_cast<double>(y.size()));
}

// The same against a sorted reference that many candidates share: each x placed among the y, O(m log n).
double rank_sum_p_sorted(const std::vector<double>& x, const std::vector<double>& sorted_y) {
  if (x.empty() || sorted_y.empty()) return 1;
  double u = 0;
  for (double a : x) {
    const auto lo = std::lower_bound(sorted_y.begin(), sorted_y.end(), a);
    const auto hi = std::upper_bound(lo, sorted_y.end(), a);
    u += static_cast<double>(lo - sorted_y.begin()) + 0.5 * static_cast<double>(hi - lo);
  }
  return rank_sum_p(u, static_cast<double>(x.size()), static_cast<double>(sorted_y.size()));
}

// Pair scores against a reference set: z = log bw - its cohort's median; `spread` the
// reference's robust spread. `usable` is false when the reference holds too few pairs to measure
// the run's noise.
struct scores {
  std::vector<double> z;
  double spread = 0;
  bool usable = false;
  std::vector<double> centre;      // by cohort: what z is read from
  std::vector<std::size_t> start;  // score_into's scratch, reused from one call to the next
  std::vector<double> vals;
};

// Into `out`, whose arrays are reused: a finder scores the judged pairs for each candidate it tests.
// Each group's median over the reference pairs, where it holds at least `least` of them (NaN
// elsewhere, and for the groups `wanted` leaves out): the values are laid out by group in one
// reused array, not a vector per group.
void group_medians(const mask& ref, const std::vector<std::uint32_t>& id, std::uint32_t groups,
                   const std::vector<std::uint8_t>* wanted, const std::vector<double>& ys, std::size_t least,
                   std::vector<std::size_t>& start, std::vector<double>& vals, std::vector<double>& out) {
  const auto take = [&](std::size_t i) { return ref[i] && (wanted == nullptr || (*wanted)[id[i]]); };
  start.assign(std::size_t{groups} + 1, 0);
  for (std::size_t i = 0; i < id.size(); ++i)
    if (take(i)) ++start[id[i] + 1];
  for (std::uint32_t g = 0; g < groups; ++g) start[g + 1] += start[g];
  vals.resize(start[groups]);
  std::vector<std::size_t> at(start.begin(), start.end() - 1);
  for (std::size_t i = 0; i < id.size(); ++i)
    if (take(i)) vals[at[id[i]]++] = ys[i];
  out.assign(groups, nan);
  for (std::uint32_t g = 0; g < groups; ++g) {
    const std::size_t k = start[g + 1] - start[g];
    if (k >= least) out[g] = median_in(std::span<double>(vals).subspan(start[g], k));
  }
}

void score_into(const evidence& ev, const mask& ref, const finder_settings& s, scores& out) {
  const std::size_t nn = ev.size();
  const auto& ys = ev.log_bw;
  // a pair's centre: the median of its round's cohort where that holds three pairs, else its class's
  // (a class's median only where one of its cohorts needs it: a mesh is one round)
  auto& centre = out.centre;
  std::vector<double> class_median;
  group_medians(ref, ev.cohort_id, ev.cohorts, nullptr, ys, 3, out.start, out.vals, centre);
  std::vector<std::uint8_t> wanted(ev.classes, 0);
  bool any = false;
  for (std::uint32_t c = 0; c < ev.cohorts; ++c) {
    if (!std::isnan(centre[c])) continue;
    wanted[ev.class_of_cohort[c]] = 1;
    any = true;
  }
  if (any) {
    group_medians(ref, ev.class_id, ev.classes, &wanted, ys, 2, out.start, out.vals, class_median);
    for (std::uint32_t c = 0; c < ev.cohorts; ++c)
      if (std::isnan(centre[c])) centre[c] = class_median[ev.class_of_cohort[c]];
  }

  out.z.assign(nn, nan);
  out.spread = 0;
  out.usable = false;
  std::vector<double> pooled;
  for (std::size_t i = 0; i < nn; ++i) {
    const double r = centre[ev.cohort_id[i]];
    if (std::isnan(r)) continue;
    out.z[i] = ev.log_bw[i] - r;
    if (ref[i]) pooled.push_back(out.z[i]);
  }
  if (pooled.size() < 4) return;
  out.spread = robust_spread(std::move(pooled), s.min_spread);
  out.usable = true;
}

scores score(const evidence& ev, const mask& ref, const finder_settings& s) {
  scores out;
  score_into(ev, ref, s, out);
  return out;
}

// A candidate cause: a set of ranks, judged over the pairs that leave it (its sends) and enter
// it (its receives); a node's only across nodes (its ranks' pairs among themselves stay in it).
struct candidate {
  outlier_kind kind;
  std::int32_t node, rank;
  std::vector<std::uint32_t> members;  // its ranks, ascending (a job has about 2N candidates: no mask by rank)
  bool across_only;
  std::int32_t same = -1;  // uplink: the switch whose uplink carries the same pairs (two subtrees)
  const std::vector<std::uint8_t>* by_rank = nullptr;  // an uplink's: its switch's mask, for a quick test
  bool holds(std::uint32_t r) const {
    return by_rank != nullptr ? r < by_rank->size() && (*by_rank)[r] != 0 : std::ranges::binary_search(members, r);
  }
};

std::vector<std::uint32_t> ranks_in(const std::vector<std::uint8_t>& by_rank) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t r = 0; r < by_rank.size(); ++r)
    if (by_rank[r]) out.push_back(r);
  return out;
}

std::vector<candidate> candidates(std::uint32_t n, std::span<const std::int32_t> node_of,
                                  std::span<const switch_group> uplinks, std::span<const nic_group> nics) {
  std::vector<candidate> out;
  std::vector<const switch_group*> taken;  // parallel to out's uplinks
  for (const auto& u : uplinks) {
    const auto under = std::count(u.members.begin(), u.members.end(), 1);
    if (u.members.size() != n || under == 0 || under == static_cast<std::ptrdiff_t>(n)) continue;
    // two subtrees that hold every rank: one's way up is the other's way down, the same pairs;
    // one candidate, named with both
    const auto twin = std::ranges::find_if(taken, [&](const switch_group* t) {
      return std::ranges::equal(t->members, u.members, [](std::uint8_t a, std::uint8_t b) { return a != b; });
    });
    if (twin != taken.end()) {
      out[static_cast<std::size_t>(twin - taken.begin())].same = u.sw;
      continue;
    }
    out.push_back({outlier_kind::uplink, u.sw, -1, ranks_in(u.members), true, -1, &u.members});
    taken.push_back(&u);
  }
  std::map<std::int32_t, std::vector<std::uint32_t>> nodes;
  for (std::uint32_t r = 0; r < n && r < node_of.size(); ++r) nodes[node_of[r]].push_back(r);
  if (nodes.size() > 1) {
    for (auto& [node, m] : nodes) out.push_back({outlier_kind::node, node, -1, m, true});
  }
  // a NIC before its ranks: on a tie (one rank per NIC) the NIC is named, what is replaced. Its
  // pairs to its node's other NICs cross it too (they leave through its port), unlike a node's
  for (const auto& g : nics) {
    if (!g.members.empty() && g.members.back() < n)
      out.push_back({outlier_kind::nic, g.node, -1, g.members, false, g.rail});
  }
  for (std::uint32_t r = 0; r < n; ++r)
    out.push_back({outlier_kind::rank, r < node_of.size() ? node_of[r] : -1, static_cast<std::int32_t>(r), {r}, false});
  return out;
}

// One side of a candidate as judged: its pairs, which of them are slow, whether it is named.
struct side {
  std::vector<std::size_t> pairs;
  std::vector<std::uint8_t> slow;  // parallel to pairs
  bool named = false;
  double median_pct = nan;
};

struct verdict {
  side sends, receives;
  std::uint32_t explains = 0;  // slow pairs of its named sides not explained yet
  std::uint32_t fine = 0;      // ... and its named sides' pairs that are not slow
};

// The judged pairs of a candidate's side that no cause covers yet, in index order. Only the
// members' pairs are walked: a rank is one of N candidates.
std::vector<std::size_t> side_pairs(const evidence& ev, const candidate& c, bool sends, const mask& covered,
                                    const std::vector<double>& z) {
  std::vector<std::size_t> out;
  for (const auto r : c.members) {
    for (const auto i : sends ? std::span<const std::uint32_t>(ev.out_of[r]) : ev.into(r)) {
      if (c.holds(sends ? ev.dst[i] : ev.src[i])) continue;  // within the candidate: neither side's
      if (!covered[i] && !std::isnan(z[i]) && !(c.across_only && !pair_classes::across(ev.cls[i]))) out.push_back(i);
    }
  }
  std::ranges::sort(out);
  return out;
}

// How much whole ranks differ from one another in the reference, each rank's sends and receives
// by the median of its pairs: the yardstick of a candidate, which is a rank or a set of ranks.
// NaN with fewer than four such medians.
double rank_spread(const evidence& ev, const mask& ref, const scores& sc, double floor) {
  std::vector<double> medians, v;
  for (std::uint32_t r = 0; r < ev.n; ++r) {
    v.clear();
    for (const auto i : ev.out_of[r])
      if (ref[i] && !std::isnan(sc.z[i])) v.push_back(sc.z[i]);
    if (!v.empty()) medians.push_back(median_in(v));
    v.clear();
    for (std::uint32_t j = ev.into_start[r]; j < ev.into_start[r + 1]; ++j) {
      const double z = ev.log_bw_by_dst[j] - sc.centre[ev.cohort_by_dst[j]];  // as sc.z holds it
      if (ref[ev.by_dst[j]] && !std::isnan(z)) v.push_back(z);
    }
    if (!v.empty()) medians.push_back(median_in(v));
  }
  return medians.size() >= 4 ? robust_spread(std::move(medians), floor) : nan;
}

// What a step's candidates are screened with, before the full test: the pairs no cause covers
// yet (every candidate's reference is these less its own pairs), sorted by cohort and by class.
struct screen {
  std::vector<std::vector<double>> cohort, klass;  // log bw, ascending
  // naming_bound's scratch, by cohort and by class: zero between calls, each call clearing what it
  // touched (a step screens every candidate, about 2N of them)
  std::vector<std::uint32_t> r_cohort, r_class;
  std::vector<std::uint8_t> seen, scored;
  std::vector<double> bound;
  std::vector<std::size_t> touching;
};

screen make_screen(const evidence& ev, const mask& covered) {
  screen sc;
  sc.cohort.resize(ev.cohorts);
  sc.klass.resize(ev.classes);
  sc.r_cohort.assign(ev.cohorts, 0);
  sc.r_class.assign(ev.classes, 0);
  sc.seen.assign(ev.cohorts, 0);
  sc.scored.assign(ev.cohorts, 0);
  sc.bound.assign(ev.cohorts, 0);
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (covered[i]) continue;
    sc.cohort[ev.cohort_id[i]].push_back(ev.log_bw[i]);
    sc.klass[ev.class_id[i]].push_back(ev.log_bw[i]);
  }
  for (auto& v : sc.cohort) std::sort(v.begin(), v.end());
  for (auto& v : sc.klass) std::sort(v.begin(), v.end());
  return sc;
}

// The next step's screen from this one's: the pairs covered since (`was` to `now`) taken out of
// their sorted cohorts and classes in one pass each, not every pair sorted again.
void update_screen(const evidence& ev, screen& sc, const mask& was, const mask& now) {
  std::map<std::uint32_t, std::vector<double>> gone_cohort, gone_class;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (!now[i] || was[i]) continue;
    gone_cohort[ev.cohort_id[i]].push_back(ev.log_bw[i]);
    gone_class[ev.class_id[i]].push_back(ev.log_bw[i]);
  }
  const auto drop = [](std::vector<double>& sorted, std::vector<double>& gone) {
    std::ranges::sort(gone);
    std::vector<double> kept;
    kept.reserve(sorted.size() - gone.size());
    std::ranges::set_difference(sorted, gone, std::back_inserter(kept));  // one instance per value gone
    sorted = std::move(kept);
  };
  for (auto& [k, gone] : gone_cohort) drop(sc.cohort[k], gone);
  for (auto& [k, gone] : gone_class) drop(sc.klass[k], gone);
}

// Per rank, its uncovered pairs as sender (`out`) and as receiver (`in`) that any candidate's
// screen could count as possibly slow: below --slow % of the loosest bound a cohort's median can
// have for any candidate, with r at the most any removes (the largest candidate's ranks times the
// most pairs one rank has in the cohort). A candidate none of whose ranks has one cannot name a
// side, and its screen is skipped: at 32 768 ranks most of a step's 70 000 candidates, each a walk
// over its pairs.
void loose_slow(const evidence& ev, const screen& sc, const mask& covered, double floor, std::size_t largest,
                std::vector<std::uint32_t>& out, std::vector<std::uint32_t>& in) {
  std::vector<std::uint32_t> most_k(ev.cohorts, 0), most_q(ev.classes, 0);  // out + in
  {
    std::vector<std::uint32_t> out_k(ev.cohorts, 0), out_q(ev.classes, 0), in_k(ev.cohorts, 0), in_q(ev.classes, 0);
    std::vector<std::uint32_t> ck(ev.cohorts, 0), cq(ev.classes, 0);
    const auto per_rank = [&](auto first, auto last, std::vector<std::uint32_t>& mk, std::vector<std::uint32_t>& mq) {
      for (auto it = first; it != last; ++it)
        if (!covered[*it]) ++ck[ev.cohort_id[*it]], ++cq[ev.class_id[*it]];
      for (auto it = first; it != last; ++it) {
        const auto k = ev.cohort_id[*it], q = ev.class_id[*it];
        mk[k] = std::max(mk[k], ck[k]);
        mq[q] = std::max(mq[q], cq[q]);
        ck[k] = cq[q] = 0;
      }
    };
    for (std::uint32_t r = 0; r < ev.n; ++r) {
      per_rank(ev.out_of[r].begin(), ev.out_of[r].end(), out_k, out_q);
      per_rank(ev.into(r).begin(), ev.into(r).end(), in_k, in_q);
    }
    for (std::uint32_t k = 0; k < ev.cohorts; ++k) most_k[k] = out_k[k] + in_k[k];
    for (std::uint32_t q = 0; q < ev.classes; ++q) most_q[q] = out_q[q] + in_q[q];
  }
  const auto at_most = [&](const std::vector<double>& sorted, std::size_t most, std::size_t keep) {
    const std::size_t size = sorted.size();
    if (size < keep) return -std::numeric_limits<double>::infinity();
    const std::size_t r = std::min(std::min(size, largest * most), size - keep);
    return sorted[(size - r) / 2 + r];  // the index grows with r
  };
  std::vector<double> loosest(ev.cohorts);
  for (std::uint32_t k = 0; k < ev.cohorts; ++k) {
    const std::size_t size = sc.cohort[k].size();
    loosest[k] = at_most(sc.cohort[k], most_k[k], 3);
    const std::uint32_t q = ev.class_of_cohort[k];
    if (size < 3 || std::min(size, largest * most_k[k]) > size - 3)  // some candidate may leave it to its class
      loosest[k] = std::max(loosest[k], at_most(sc.klass[q], most_q[q], 2));
  }
  out.assign(ev.n, 0);
  in.assign(ev.n, 0);
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (covered[i] || !(ev.log_bw[i] < floor + loosest[ev.cohort_id[i]] + 1e-9)) continue;
    ++out[ev.src[i]];
    ++in[ev.dst[i]];
  }
}

// The most a candidate can be worth, -1 where no side of it can be named against its own
// reference: naming a side needs at least half of its pairs, two or more, below --slow % of their
// cohorts' medians (its median below that bound), and it explains at most those. Each such median
// is at most the value r places above the middle of the screen's sorted cohort, r the cohort's
// pairs the candidate removes. The full test costs a pass over every judged pair; this bound only
// the candidate's own, so the cover tests in full only what could still be the step's choice.
struct reach {
  std::int64_t slow = -1;  // the most slow pairs its named sides can hold; -1: no side can be named
  std::int64_t fine = 0;   // the fewest fine pairs those sides then hold
};
reach naming_bound(const evidence& ev, screen& sc, const candidate& c, const mask& covered, double floor) {
  auto& touching = sc.touching;
  auto& r_cohort = sc.r_cohort;
  auto& r_class = sc.r_class;
  touching.clear();
  const auto take = [&](std::size_t i) {
    if (covered[i]) return;
    touching.push_back(i);
    ++r_cohort[ev.cohort_id[i]];
    ++r_class[ev.class_id[i]];
  };
  for (const auto m : c.members) {
    for (const auto i : ev.out_of[m]) take(i);  // its row
    for (const auto i : ev.into(m))
      if (!c.holds(ev.src[i])) take(i);  // its column, less what the row took
  }
  // per cohort: whether its pairs get a z at all (a median of three of the cohort, or of two of
  // the class, is left), and the most that median can be
  auto& seen = sc.seen;
  auto& scored = sc.scored;
  auto& bound = sc.bound;
  const auto upper = [&](std::uint32_t k) {
    const std::uint32_t q = ev.class_of_cohort[k];
    const std::size_t left = sc.cohort[k].size() - r_cohort[k], left_class = sc.klass[q].size() - r_class[q];
    if (left >= 3) {
      scored[k] = 1;
      bound[k] = sc.cohort[k][left / 2 + r_cohort[k]];
    } else if (left_class >= 2) {
      scored[k] = 1;
      bound[k] = sc.klass[q][left_class / 2 + r_class[q]];
    }
    seen[k] = 1;
  };
  std::uint32_t pairs[2] = {0, 0}, slow[2] = {0, 0};  // receives, sends
  for (auto i : touching) {
    const bool from = c.holds(ev.src[i]), to = c.holds(ev.dst[i]);
    const bool sends = from && !to, receives = !from && to;
    if (!(sends || receives) || (c.across_only && !pair_classes::across(ev.cls[i]))) continue;
    const std::uint32_t k = ev.cohort_id[i];
    if (!seen[k]) upper(k);
    if (!scored[k]) continue;
    ++pairs[sends];
    // a margin for rounding: a pair this close counts as possibly slow
    slow[sends] += ev.log_bw[i] < floor + bound[k] + 1e-9;
  }
  for (auto i : touching) {
    r_cohort[ev.cohort_id[i]] = r_class[ev.class_id[i]] = 0;
    seen[ev.cohort_id[i]] = scored[ev.cohort_id[i]] = 0;
  }
  reach most;
  for (int d : {0, 1}) {
    if (pairs[d] < 2 || 2 * slow[d] < pairs[d]) continue;
    most.slow = std::max<std::int64_t>(most.slow, 0) + slow[d];
    most.fine += pairs[d] - slow[d];
  }
  return most;
}

// What a candidate's sides are judged against: the judged pairs that touch neither it nor a
// cause already named, scored against their cohorts, and how much whole ranks among them differ.
// Or, shared by a step's small candidates, the pairs no cause covers (their own pairs in it):
// then `others` and `others_across` are sorted.
struct reference {
  mask pairs;  // those pairs
  scores sc;
  double spread = nan;                // rank_spread of the reference
  std::vector<double> others;         // the reference pairs of the candidate's classes (all, if shared)
  std::vector<double> others_across;  // shared: those across nodes
  bool shared = false;
};

// Into `r`, whose arrays are reused from one candidate to the next (each holds every judged
// pair: fresh ones cost the kernel's zeroing of every page again). `c` null: the shared one.
void reference_of(const evidence& ev, const candidate* c, const mask& covered, const finder_settings& s, reference& r) {
  r.pairs.resize(ev.size());
  for (std::size_t i = 0; i < ev.size(); ++i) r.pairs[i] = covered[i] ? 0 : 1;
  if (c != nullptr) {
    for (const auto m : c->members) {  // its own pairs out
      for (const auto i : ev.out_of[m]) r.pairs[i] = 0;
      for (const auto i : ev.into(m)) r.pairs[i] = 0;
    }
  }
  score_into(ev, r.pairs, s, r.sc);
  r.spread = rank_spread(ev, r.pairs, r.sc, s.min_spread);
  r.shared = c == nullptr;
  r.others.clear();
  r.others_across.clear();
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    if (!r.pairs[i] || std::isnan(r.sc.z[i])) continue;
    const bool across = pair_classes::across(ev.cls[i]);
    if (r.shared || !c->across_only || across) r.others.push_back(r.sc.z[i]);
    if (r.shared && across) r.others_across.push_back(r.sc.z[i]);
  }
  if (r.shared) {
    std::ranges::sort(r.others);
    std::ranges::sort(r.others_across);
  }
}

// One side of a candidate against a reference: named when its median falls below --slow % of the
// cohort and below -k times the reference ranks' spread (with the count's error); its slow pairs
// are those below --slow %.
side judge_side(const evidence& ev, const reference& ref, const candidate& c, bool sends, const mask& covered,
                const finder_settings& s) {
  side sd;
  sd.pairs = side_pairs(ev, c, sends, covered, ref.sc.z);
  if (!ref.sc.usable || std::isnan(ref.spread) || sd.pairs.size() < 2) return sd;
  const double floor = std::log(s.slow_pct / 100);
  std::vector<double> zs, errors;
  for (auto i : sd.pairs) {
    zs.push_back(ref.sc.z[i]);
    errors.push_back(counting_error(ev, std::exp(ev.log_bw[i] - ref.sc.z[i]) * ev.expected[i]));
    sd.slow.push_back(ref.sc.z[i] < floor);
  }
  // a median of m pairs varies at least as pairs do, over the square root of m (a few ranks
  // left to compare with say little about how much ranks differ)
  const double yardstick =
      std::max(ref.spread, 1.2533 * ref.sc.spread / std::sqrt(static_cast<double>(sd.pairs.size())));
  const double d = median_of(zs);
  // beyond the run's noise: below k spreads of how ranks differ and, by order alone, below the
  // reference pairs of its classes (p < 2 %); or so far below them by order that no spread is
  // needed (p < 0.1 %: a handful of chances in a run's candidates)
  const double p = !ref.shared     ? rank_sum_p(zs, ref.others)
                   : c.across_only ? rank_sum_p_sorted(zs, ref.others_across)
                                   : rank_sum_p_sorted(zs, ref.others);
  const double count_error = median_of(errors);
  const bool spread_says = d < -s.k * std::hypot(yardstick, count_error);
  // never within what the counts themselves can move by
  sd.named = d < floor && d < -s.k * count_error && ((spread_says && p < s.p_loose) || p < s.p_strict);
  if (sd.named) sd.median_pct = std::exp(d) * 100;
  return sd;
}

// A candidate against the judged pairs that touch neither it nor a cause already named. A node
// with several NICs names a side only where each NIC's part of it is beyond the noise on its own,
// against the same reference: a node claims all of its NICs, and one slow NIC pulls its node's
// median down with it (in a noisy run its healthy sibling's pairs fall under --slow % too, and the
// node explained more slow pairs than the NIC did).
// `ref`: the step's shared reference, or scratch for the candidate's own (reused from one to the next).
verdict against_noise(const evidence& ev, const candidate& c, std::span<const candidate> parts, const mask& covered,
                      const mask& explained, const finder_settings& s, reference& ref) {
  if (!ref.shared) reference_of(ev, &c, covered, s, ref);
  verdict v;
  for (auto [sd, sends_] : {std::pair{&v.sends, true}, std::pair{&v.receives, false}}) {
    const bool sends = sends_;  // clang before 16 cannot capture a structured binding in a lambda
    *sd = judge_side(ev, ref, c, sends, covered, s);
    if (sd->named && !parts.empty()) {
      sd->named = std::ranges::all_of(
          parts, [&](const candidate& part) { return judge_side(ev, ref, part, sends, covered, s).named; });
      if (!sd->named) sd->median_pct = nan;
    }
    if (!sd->named) continue;
    for (std::size_t k = 0; k < sd->pairs.size(); ++k) {
      v.explains += sd->slow[k] && !explained[sd->pairs[k]];
      v.fine += !sd->slow[k];
    }
  }
  return v;
}

// --expect: a side is named when most of its pairs, at least two, are below the floor.
verdict against_floor(const evidence& ev, const candidate& c, const mask& covered, const mask& explained,
                      const std::vector<std::uint8_t>& below, const std::vector<double>& ratio) {
  verdict v;
  for (auto [sd, sends] : {std::pair{&v.sends, true}, std::pair{&v.receives, false}}) {
    sd->pairs = side_pairs(ev, c, sends, covered, ratio);
    std::vector<double> r;
    std::uint32_t k = 0;
    for (auto i : sd->pairs) {
      sd->slow.push_back(below[i]);
      r.push_back(ratio[i]);
      k += below[i];
    }
    sd->named = k >= 2 && 2 * std::size_t{k} > sd->pairs.size();
    if (!sd->named) continue;
    sd->median_pct = std::exp(median_of(r)) * 100;
    for (std::size_t j = 0; j < sd->pairs.size(); ++j) {
      v.explains += sd->slow[j] && !explained[sd->pairs[j]];
      v.fine += !sd->slow[j];
    }
  }
  return v;
}

// A choice of the cover named: its named sides' pairs covered (and explained where slow), each
// side's median as the cause's figure; both ends of each pair it covers `busy`. Returns how many
// pairs it covered.
std::size_t name_choice(const evidence& ev, const candidate& c, const verdict& v, outlier_basis basis, mask& covered,
                        mask& explained, std::vector<std::uint8_t>& busy, std::vector<outlier>& found) {
  outlier o{c.kind, basis, c.node, c.rank, c.same, nan, nan, 0, 0};
  std::size_t took = 0;
  const auto take = [&](std::size_t i) {
    took += !covered[i];
    covered[i] = 1;
    busy[ev.src[i]] = busy[ev.dst[i]] = 1;
  };
  for (const auto& [sd, pct] : {std::pair{&v.sends, &o.send_pct}, std::pair{&v.receives, &o.recv_pct}}) {
    // an uplink slow one way delays the other way's acknowledgements (RC): those pairs are its
    // evidence too; left uncovered they would name a node under it for its receives
    if (!sd->named && c.kind == outlier_kind::uplink) {
      for (std::size_t k = 0; k < sd->pairs.size(); ++k) {
        take(sd->pairs[k]);
        if (k < sd->slow.size()) explained[sd->pairs[k]] |= sd->slow[k];
      }
    }
    if (!sd->named) continue;
    *pct = sd->median_pct;
    for (std::size_t k = 0; k < sd->pairs.size(); ++k) {
      take(sd->pairs[k]);
      explained[sd->pairs[k]] |= sd->slow[k];
      (sd->slow[k] ? o.pairs : o.fine) += 1;
    }
  }
  found.push_back(o);
  return took;
}

// How the cover ranks candidates. With switches or NICs a cause is worth its slow pairs less its
// fine ones: an uplink whose named side is half a sick node's pairs and half its healthy
// neighbour's explains that node worse than the node does, and a node whose one NIC of two is slow
// holds as many fine pairs as slow ones. On equal worth the larger (a node before its ranks), but
// an uplink last: a leaf of one node explains what its port does, and the node can be drained.
struct ranking {
  const std::vector<candidate>& cands;
  bool switches;
  std::int64_t worth(std::int64_t slow, std::int64_t fine) const { return slow - (switches ? fine : 0); }
  std::int64_t worth(const verdict& v) const { return worth(v.explains, v.fine); }
  std::size_t size(std::size_t ci) const {
    return cands[ci].kind == outlier_kind::uplink ? std::size_t{0} : cands[ci].members.size();
  }
  bool beats(std::size_t a, std::size_t b) const {  // on equal worth
    return size(a) > size(b) || (size(a) == size(b) && a < b);
  }
  bool better(std::size_t a, const verdict& va, std::size_t b, const verdict* vb) const {
    return vb == nullptr || worth(va) > worth(*vb) || (worth(va) == worth(*vb) && beats(a, b));
  }
};

// A step's next choice: the best candidate, in `order` (the most each can be worth, best first),
// that touches no rank `busy` holds, tested down to those that cannot beat the best found, so it
// is the one a test of every such candidate would choose. `waiting`: those skipped as busy.
struct step_choice {
  std::size_t best;
  const verdict* v = nullptr;
  std::vector<std::size_t> waiting;
};
template <class Evaluate>
step_choice best_free(const ranking& rk, const std::vector<std::pair<std::int64_t, std::size_t>>& order,
                      const mask& gone, const mask& busy, std::map<std::size_t, verdict>& tested, Evaluate&& evaluate) {
  step_choice out{rk.cands.size(), nullptr, {}};
  for (const auto& [most, ci] : order) {
    if (gone[ci]) continue;
    if (out.v != nullptr && most < rk.worth(*out.v)) break;
    if (out.v != nullptr && most == rk.worth(*out.v) && !rk.beats(ci, out.best)) continue;  // a tie at best
    if (std::ranges::any_of(rk.cands[ci].members, [&](std::uint32_t r) { return busy[r] != 0; })) {
      out.waiting.push_back(ci);
      continue;
    }
    auto [it, fresh] = tested.try_emplace(ci);
    if (fresh) it->second = evaluate(ci);
    if (it->second.explains > 0 && rk.better(ci, it->second, out.best, out.v)) {
      out.best = ci;
      out.v = &it->second;
    }
  }
  return out;
}

// The greedy cover: the candidate whose named sides explain the most unexplained slow pairs
// first (the larger on a tie: a node before its ranks), until none explains another. `covered`
// gets every pair of their named sides.
// `prepare(covered)` runs at each step, before its candidates are evaluated, and returns how many
// pairs the step may cover after its first choice (0: one choice a step). A step's later choices
// are the next best among candidates that touch none of its earlier ones, judged against the
// step's reference, while no candidate set aside could have outranked them: a run with thousands
// of slow parts is named in a few passes over its pairs, not one a part.
// `bound(c, covered, fresh)`: the most c can be worth; `fresh` after the step's choices so far.
template <class Evaluate, class Bound, class Prepare>
std::vector<outlier> cover(const evidence& ev, std::vector<candidate> cands, outlier_basis basis, Evaluate evaluate,
                           Bound bound, Prepare prepare, mask& covered) {
  std::vector<outlier> found;
  mask explained(covered.size(), 0);
  const ranking rk{cands, std::ranges::any_of(cands, [](const candidate& c) {
                     return c.kind == outlier_kind::uplink || c.kind == outlier_kind::nic;
                   })};
  mask gone(cands.size(), 0);
  for (std::size_t chosen = 1; chosen > 0;) {
    const std::size_t budget = prepare(covered);
    std::vector<std::pair<std::int64_t, std::size_t>> order;  // the most worth, the candidate
    for (std::size_t ci = 0; ci < cands.size(); ++ci) {
      const auto most = gone[ci] ? reach{} : bound(cands[ci], covered, false);
      if (most.slow > 0) order.emplace_back(rk.worth(most.slow, most.fine), ci);
    }
    std::ranges::sort(order, [&](const auto& x, const auto& y) {
      return x.first != y.first ? x.first > y.first : rk.beats(x.second, y.second);
    });
    std::map<std::size_t, verdict> tested;  // against the step's reference
    mask busy(ev.n, 0);                     // the ranks its choices touched
    std::size_t took = 0;
    for (chosen = 0;;) {
      const auto c = best_free(rk, order, gone, busy, tested,
                               [&](std::size_t ci) { return evaluate(cands[ci], covered, explained); });
      if (c.v == nullptr) break;
      // after the first, within the budget (both sides' pairs: at least what naming it covers)
      // and only while no candidate set aside could outrank it (on equal worth, only a larger one:
      // the first of equals is an order, not a reason)
      const auto outranks = [&](std::size_t ci) {
        const auto most = bound(cands[ci], covered, true);
        const auto w = rk.worth(most.slow, most.fine);
        return most.slow > 0 && (w > rk.worth(*c.v) || (w == rk.worth(*c.v) && rk.size(ci) > rk.size(c.best)));
      };
      if (chosen > 0 && (took + c.v->sends.pairs.size() + c.v->receives.pairs.size() > budget ||
                         std::ranges::any_of(c.waiting, outranks)))
        break;
      took += name_choice(ev, cands[c.best], *c.v, basis, covered, explained, busy, found);
      gone[c.best] = 1;
      for (const auto r : cands[c.best].members) busy[r] = 1;
      ++chosen;
      if (budget == 0) break;
    }
  }
  return found;
}

void add_failed(const run_matrices& m, outlier_report& out) {
  for (std::size_t i = 0; i < m.flags.slots(); ++i) {
    const auto a = m.flags.src(i), b = m.flags.dst(i);
    if (a == b || m.round.v[i] < 0 || m.flags.v[i] == 0) continue;
    out.found.push_back({outlier_kind::failed, outlier_basis::failed, -1, static_cast<std::int32_t>(a),
                         static_cast<std::int32_t>(b), nan, nan, 1, 0});
  }
}

// --expect: pairs below the floor, named by the same cover (no noise test: the floor is the
// user's); most of the run below it is the fabric as a whole.
std::vector<outlier> below_floor(const evidence& ev, const run_matrices& m, std::span<const std::int32_t> node_of,
                                 std::span<const switch_group> uplinks, std::span<const nic_group> nics, double floor,
                                 mask& covered) {
  const std::size_t nn = ev.size();
  std::vector<std::uint8_t> below(nn, 0);
  std::vector<double> ratio(nn, nan), all;
  std::uint32_t judged = 0, under = 0;
  for (std::size_t i = 0; i < nn; ++i) {
    const double bw = m.tx_bw.at(ev.src[i], ev.dst[i]);
    ratio[i] = std::log(bw / floor);
    below[i] = bw < floor;
    all.push_back(bw);
    ++judged;
    under += below[i];
  }
  if (under == 0) return {};
  if (2 * under > judged) {
    std::ranges::fill(covered, std::uint8_t{1});
    const double pct = median_of(all) / floor * 100;
    return {{outlier_kind::fabric, outlier_basis::expect, -1, -1, -1, pct, nan, under, judged - under}};
  }
  auto found = cover(
      ev, candidates(ev.n, node_of, uplinks, nics), outlier_basis::expect,
      [&](const candidate& c, const mask& cov, const mask& expl) {
        return against_floor(ev, c, cov, expl, below, ratio);
      },
      [](const candidate&, const mask&, bool) {
        return reach{std::numeric_limits<std::int64_t>::max(), 0};
      },
      [](const mask&) { return std::size_t{0}; }, covered);
  for (std::size_t i = 0; i < nn; ++i) {
    if (!below[i] || covered[i]) continue;
    covered[i] = 1;
    found.push_back({outlier_kind::link, outlier_basis::expect, -1, static_cast<std::int32_t>(ev.src[i]),
                     static_cast<std::int32_t>(ev.dst[i]), std::exp(ratio[i]) * 100, nan, 1, 0});
  }
  return found;
}

}  // namespace

std::vector<nic_group> nic_groups(std::span<const std::int32_t> node_of, std::span<const std::int32_t> rail_of) {
  const std::size_t n = std::min(node_of.size(), rail_of.size());
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<std::uint32_t>> by;  // (node, rail) -> ranks
  std::map<std::int32_t, std::set<std::int32_t>> rails_of_node;
  for (std::size_t r = 0; r < n; ++r) {
    if (rail_of[r] < 0) continue;
    by[{node_of[r], rail_of[r]}].push_back(static_cast<std::uint32_t>(r));
    rails_of_node[node_of[r]].insert(rail_of[r]);
  }
  std::vector<nic_group> out;
  for (auto& [key, m] : by) {
    if (rails_of_node[key.first].size() >= 2) out.push_back({key.first, key.second, std::move(m)});
  }
  return out;
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

// A pair apart from its sender and its receiver: z less the row and column effects of a median
// polish (a sender that is slow, or busy, to every peer is not a fault of each of its links), and
// how much those residuals spread, in the pair's own cohort where it holds five or more (a round
// where half the pairs got the CPU and half did not is wide, not faulty).
struct link_noise {
  std::vector<double> e, spread;
};

link_noise residuals(const evidence& ev, const mask& rest, const std::vector<double>& z, double min_spread) {
  const std::size_t nn = rest.size();
  link_noise out;
  out.e.assign(nn, nan);
  out.spread.assign(nn, nan);
  for (std::size_t i = 0; i < nn; ++i) {
    if (rest[i] && !std::isnan(z[i])) out.e[i] = z[i];
  }
  for (int sweep = 0; sweep < 4; ++sweep) {
    for (bool rows : {true, false}) {
      for (std::uint32_t r = 0; r < ev.n; ++r) {
        const auto& line = rows ? std::span<const std::uint32_t>(ev.out_of[r]) : ev.into(r);
        std::vector<double> v;
        for (const auto i : line)
          if (!std::isnan(out.e[i])) v.push_back(out.e[i]);
        if (v.size() < 2) continue;
        const double med = median_of(std::move(v));
        for (const auto i : line)
          if (!std::isnan(out.e[i])) out.e[i] -= med;
      }
    }
  }
  std::vector<double> all;
  std::map<std::pair<int, int>, std::vector<double>> by_cohort;
  std::vector<std::uint8_t> row(ev.n, 0), col(ev.n, 0);
  for (std::size_t i = 0; i < nn; ++i) {
    if (std::isnan(out.e[i])) continue;
    all.push_back(out.e[i]);
    by_cohort[{ev.cls[i], ev.rnd[i]}].push_back(out.e[i]);
    row[ev.src[i]] = col[ev.dst[i]] = 1;
  }
  // what the polish leaves free: pairs less a sender and a receiver effect per rank
  const auto fitted =
      static_cast<double>(std::count(row.begin(), row.end(), 1) + std::count(col.begin(), col.end(), 1)) - 1.0;
  const double dof = static_cast<double>(all.size()) - fitted;
  if (dof < 4) {  // too few pairs to tell a link from its ends
    out.e.assign(nn, nan);
    return out;
  }
  const double whole = robust_spread(all, min_spread, dof);
  const double share = dof / static_cast<double>(all.size());
  std::map<std::pair<int, int>, double> own;
  for (auto& [key, v] : by_cohort) {
    const double d = static_cast<double>(v.size()) * share;
    own[key] = v.size() >= 5 ? std::max(whole, robust_spread(v, min_spread, d)) : whole;
  }
  for (std::size_t i = 0; i < nn; ++i) {
    if (!std::isnan(out.e[i])) out.spread[i] = own[{ev.cls[i], ev.rnd[i]}];
  }
  return out;
}

namespace {

// A NIC of one rank and that rank are one cause, the NIC's (what is replaced): the cover names the
// NIC for one side and, the NIC spent, the rank for the other (a slow NIC's sends, then its
// rank's receives, their acknowledgements queued behind them).
void fold_one_rank_nics(std::vector<outlier>& found, std::span<const nic_group> nics) {
  for (const auto& g : nics) {
    if (g.members.size() != 1) continue;
    const auto r = static_cast<std::int32_t>(g.members.front());
    for (auto rk = found.begin(); rk != found.end();) {
      if (rk->kind != outlier_kind::rank || rk->rank != r) {
        ++rk;
        continue;
      }
      const auto nic = std::ranges::find_if(found, [&](const outlier& o) {
        return o.kind == outlier_kind::nic && o.node == g.node && o.peer == g.rail && o.basis == rk->basis &&
               std::isnan(o.send_pct) != std::isnan(rk->send_pct) && std::isnan(o.recv_pct) != std::isnan(rk->recv_pct);
      });
      if (nic == found.end()) {
        ++rk;
        continue;
      }
      if (std::isnan(nic->send_pct)) nic->send_pct = rk->send_pct;
      if (std::isnan(nic->recv_pct)) nic->recv_pct = rk->recv_pct;
      nic->pairs += rk->pairs;
      nic->fine += rk->fine;
      rk = found.erase(rk);
    }
  }
}

// Every NIC of a node named on its own is the node (what is drained), named once with its median
// over all of the node's pairs to other nodes: one slow NIC of two is no longer read as its node
// (against_noise), so a node whose NICs are all slow is found NIC by NIC.
void join_nics(const evidence& ev, std::int32_t node, std::span<const candidate> its, const mask& covered,
               const finder_settings& s, std::vector<outlier>& found) {
  const auto is_part = [&](const outlier& o) {
    return o.kind == outlier_kind::nic && o.basis == outlier_basis::noise && o.node == node;
  };
  if (its.size() < 2 || static_cast<std::size_t>(std::ranges::count_if(found, is_part)) != its.size()) return;
  candidate whole{outlier_kind::node, node, -1, {}, true};
  for (const auto& part : its) whole.members.insert(whole.members.end(), part.members.begin(), part.members.end());
  std::ranges::sort(whole.members);
  // judged as the node would have been before its NICs were named: its pairs back in play
  mask open = covered;
  for (const auto r : whole.members) {
    for (const auto i : ev.out_of[r]) open[i] = 0;
    for (const auto i : ev.into(r)) open[i] = 0;
  }
  reference ref;
  reference_of(ev, &whole, open, s, ref);
  outlier o{outlier_kind::node, outlier_basis::noise, node, -1, -1, nan, nan, 0, 0};
  for (const auto& p : found) {
    if (!is_part(p)) continue;
    for (auto [sends, named, pct] : {std::tuple{true, !std::isnan(p.send_pct), &o.send_pct},
                                     std::tuple{false, !std::isnan(p.recv_pct), &o.recv_pct}}) {
      if (!named || !std::isnan(*pct)) continue;
      std::vector<double> zs;
      for (auto i : side_pairs(ev, whole, sends, open, ref.sc.z)) zs.push_back(ref.sc.z[i]);
      if (!zs.empty()) *pct = std::exp(median_of(std::move(zs))) * 100;
    }
    o.pairs += p.pairs;
    o.fine += p.fine;
  }
  std::erase_if(found, is_part);
  found.push_back(o);
}

// The run's size as judged: pairs measured, their median rate and count; whether they are too
// few messages or too short to tell a cause from chance.
void summarize(const evidence& ev, const run_matrices& m, const finder_settings& s, outlier_report& out) {
  const auto median_over = [&](auto value) {
    std::vector<double> v;
    for (std::size_t i = 0; i < ev.size(); ++i) v.push_back(static_cast<double>(value(ev.src[i], ev.dst[i])));
    return std::pair{median_of(v), v.size()};
  };
  const auto [median, measured] = median_over([&](std::uint32_t a, std::uint32_t b) { return m.tx_bw.at(a, b); });
  out.measured = static_cast<std::uint32_t>(measured);
  out.median = median;
  out.quantum = static_cast<std::uint64_t>(std::max(ev.quantum, 1.0));
  if (!(out.median > 0)) return;
  if (s.counted) {
    out.median_msgs = median_over([&](std::uint32_t a, std::uint32_t b) { return m.tx_msgs.at(a, b); }).first;
    // so few that scheduling alone moves a pair by half: nothing here could be told from chance
    out.too_few_msgs = out.median_msgs < s.min_msgs;
  } else if (s.min_pair_s > 0) {
    out.median_s = median_over([&](std::uint32_t a, std::uint32_t b) { return m.tx_s.at(a, b); }).first;
    // over so soon that a rank's wait for its CPU is most of a pair's time: start-up, not links
    out.too_short = !(out.median_s >= s.min_pair_s);
  }
}

// Single pairs no cause explains, slow beyond --slow % and beyond the stricter bound on what is
// left of them once their sender's and receiver's effects are taken out.
void add_links(const evidence& ev, const mask& rest, const scores& sc, const finder_settings& s, outlier_report& out) {
  const link_noise ln = residuals(ev, rest, sc.z, s.min_spread);
  const double floor = std::log(s.slow_pct / 100);
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (!rest[i] || std::isnan(ln.e[i]) || !(sc.z[i] < floor)) continue;
    const double predicted = std::exp(ev.log_bw[i] - sc.z[i]) * ev.expected[i];
    if (!(ln.e[i] < -s.k_link * std::hypot(ln.spread[i], counting_error(ev, predicted)))) continue;
    out.found.push_back({outlier_kind::link, outlier_basis::noise, -1, static_cast<std::int32_t>(ev.src[i]),
                         static_cast<std::int32_t>(ev.dst[i]), std::exp(sc.z[i]) * 100, nan, 1, 0});
  }
}

}  // namespace

namespace {

// The noise cover's state from one step to the next: the screen over the pairs no cause covers
// yet, each rank's count of possibly slow pairs, and a step's bounds and verdicts on one-rank
// candidates by rank (a NIC of one rank and that rank read the same pairs against the same
// reference: with 8 rails and 8 ranks a node, half of all candidates).
struct noise_cover {
  const evidence& ev;
  const finder_settings& s;
  const std::map<std::int32_t, std::vector<candidate>>& parts;  // a node's NICs, as parts of it
  double floor;
  std::size_t largest;  // members of the largest candidate
  screen scr;
  mask screened;                                   // what the screen was made over
  std::vector<std::uint32_t> loose_out, loose_in;  // loose_slow
  std::vector<std::uint32_t> open_out, open_in;    // by rank, its uncovered pairs each way
  std::size_t least_class = 0;                     // the fewest uncovered pairs a class holds, of those that hold some
  // a candidate's pairs that are on neither side whatever is covered: between its members, and
  // (across nodes only) those within a node, each way
  struct fixed {
    std::uint32_t within = 0, out_within_node = 0, in_within_node = 0;
  };
  std::map<const candidate*, fixed> fixed_of;
  std::vector<reach> bound_of;
  std::map<std::uint32_t, verdict> this_step;
  reference scratch;
  // a step's reference shared by candidates whose pairs are at most 1 % of it (`share`): leaving
  // them in moves a median of the rest by at most half a percentile, far inside what a test reads
  reference base;
  std::size_t share = 0;

  noise_cover(const evidence& e, const finder_settings& settings,
              const std::map<std::int32_t, std::vector<candidate>>& nics_of, double floor_, std::size_t largest_)
      : ev(e), s(settings), parts(nics_of), floor(floor_), largest(largest_) {}

  static bool one_rank(const candidate& c) {
    return c.members.size() == 1 && !c.across_only && c.kind != outlier_kind::node;
  }
  static constexpr reach unknown{std::numeric_limits<std::int64_t>::min(), 0};

  std::size_t prepare(const mask& cov) {
    if (screened.empty()) {
      scr = make_screen(ev, cov);
    } else {
      update_screen(ev, scr, screened, cov);
    }
    screened = cov;
    loose_slow(ev, scr, cov, floor, largest, loose_out, loose_in);
    open_out.assign(ev.n, 0);
    open_in.assign(ev.n, 0);
    std::size_t open = 0;  // pairs no cause covers
    for (std::size_t i = 0; i < ev.size(); ++i)
      if (!cov[i]) ++open_out[ev.src[i]], ++open_in[ev.dst[i]], ++open;
    least_class = std::numeric_limits<std::size_t>::max();
    for (const auto& v : scr.klass)
      if (!v.empty()) least_class = std::min(least_class, v.size());
    this_step.clear();
    bound_of.assign(ev.n, unknown);
    share = open / 100;
    if (share >= 2) reference_of(ev, nullptr, cov, s, base);
    return share >= 2 ? share : 0;  // the same 1 %: the pairs a step's later choices may cover
  }
  // Whether no side of `c` can be named, told from per-rank counts at the step's start (exact: a
  // side needs half its pairs possibly slow, and holds at least its members' uncovered pairs that
  // way less those on no side, every cohort scored while each class keeps two pairs beyond it).
  bool cannot_name(const candidate& c) {
    auto [it, fresh] = fixed_of.try_emplace(&c);
    fixed& f = it->second;
    if (fresh) {
      for (const auto r : c.members) {
        for (const auto i : ev.out_of[r]) {
          f.within += c.holds(ev.dst[i]);
          f.out_within_node += c.across_only && !c.holds(ev.dst[i]) && !pair_classes::across(ev.cls[i]);
        }
        for (const auto i : ev.into(r))
          f.in_within_node += c.across_only && !c.holds(ev.src[i]) && !pair_classes::across(ev.cls[i]);
      }
    }
    std::int64_t out = 0, in = 0, slow_out = 0, slow_in = 0;
    for (const auto r : c.members) {
      out += open_out[r];
      in += open_in[r];
      slow_out += loose_out[r];
      slow_in += loose_in[r];
    }
    if (least_class < static_cast<std::size_t>(out + in) + 2) return false;  // a cohort might go unscored
    return 2 * slow_out < out - f.within - f.out_within_node && 2 * slow_in < in - f.within - f.in_within_node;
  }
  reach bound(const candidate& c, const mask& cov, bool after_choices) {
    const auto fresh = [&] {
      std::uint64_t any = 0;
      for (const auto r : c.members) any += loose_out[r] + loose_in[r];
      if (any == 0 || (!after_choices && c.members.size() > 1 && cannot_name(c))) return reach{};
      return naming_bound(ev, scr, c, cov, floor);
    };
    if (!one_rank(c) || after_choices) return fresh();
    auto& b = bound_of[c.members[0]];
    if (b.slow == unknown.slow) b = fresh();
    return b;
  }
  reference& reference_for(const candidate& c, const mask& cov) {
    std::size_t own = 0;
    for (const auto r : c.members) {
      for (const auto i : ev.out_of[r]) own += !cov[i];
      for (const auto i : ev.into(r)) own += !cov[i];
    }
    return share >= 2 && own <= share ? base : scratch;
  }
  verdict evaluate(const candidate& c, const mask& cov, const mask& expl) {
    if (!one_rank(c)) {
      const auto it = c.kind == outlier_kind::node ? parts.find(c.node) : parts.end();
      const auto its = it == parts.end() ? std::span<const candidate>{} : std::span<const candidate>(it->second);
      return against_noise(ev, c, its, cov, expl, s, reference_for(c, cov));
    }
    const auto [it, fresh] = this_step.try_emplace(c.members[0]);
    if (fresh) it->second = against_noise(ev, c, {}, cov, expl, s, reference_for(c, cov));
    return it->second;
  }
};

// What no cause explains: its noise, the run's threshold, and single pairs beyond the stricter bound.
void judge_rest(const evidence& ev, const mask& covered, const finder_settings& s, outlier_report& out) {
  mask rest(ev.size(), 0);
  for (std::size_t i = 0; i < rest.size(); ++i) rest[i] = !covered[i];
  const scores sc = score(ev, rest, s);
  out.noise = sc.spread;
  for (std::size_t i = 0; i < rest.size(); ++i) out.judged += !std::isnan(sc.z[i]);
  if (!sc.usable) return;
  std::vector<double> predicted;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i]) predicted.push_back(out.median * ev.expected[i]);
  }
  const double typical = counting_error(ev, median_of(predicted));
  out.threshold_pct = std::exp(std::min(std::log(s.slow_pct / 100), -s.k * std::hypot(sc.spread, typical))) * 100;
  add_links(ev, rest, sc, s, out);
}

}  // namespace

outlier_report find_outliers(const run_matrices& m, std::uint64_t msg_size, std::span<const std::int32_t> node_of,
                             const finder_settings& s, std::span<const switch_group> uplinks,
                             std::span<const nic_group> nics) {
  outlier_report out;
  out.expect_bps = s.expect_bps;
  out.threshold_pct = nan;  // until the run's noise is measured
  add_failed(m, out);
  const evidence ev = gather(m, msg_size, node_of, uplinks, nics, s.counted, s.max_quantum);
  summarize(ev, m, s, out);
  if (!(out.median > 0)) return out;

  mask covered(ev.size(), 0);
  if (s.expect_bps > 0) {
    for (auto& o : below_floor(ev, m, node_of, uplinks, nics, s.expect_bps, covered)) out.found.push_back(o);
  }
  if (out.too_few_msgs || out.too_short) return out;  // an absolute floor holds; the noise cannot be told
  // each candidate against the judged pairs that touch neither it nor a cause already named; a
  // node's NICs as parts of it (their pairs to other nodes only, as the node's)
  std::map<std::int32_t, std::vector<candidate>> parts;
  for (const auto& g : nics) {
    if (!g.members.empty() && g.members.back() < ev.n)
      parts[g.node].push_back({outlier_kind::nic, g.node, -1, g.members, true, g.rail});
  }
  auto cands = candidates(ev.n, node_of, uplinks, nics);
  std::size_t largest = 0;
  for (const auto& c : cands) largest = std::max(largest, c.members.size());
  noise_cover nc(ev, s, parts, std::log(s.slow_pct / 100), largest);
  for (auto& o : cover(
           ev, std::move(cands), outlier_basis::noise,
           [&](const candidate&c, const mask&cov, const mask&expl) { return nc.evaluate(c, cov, expl); },
           [&](const candidate&c, const mask&cov, bool after) { return nc.bound(c, cov, after); },
           [&](const mask&cov) { return nc.prepare(cov); }, covered)) {
    out.found.push_back(o);
  }
  fold_one_rank_nics(out.found, nics);
  for (const auto& [node, its] : parts) join_nics(ev, node, its, covered, s, out.found);
  judge_rest(ev, covered, s, out);
  return out;
}

}  // namespace rdmamesh::stats
