// Folding the runs' causes into the job's verdict.
#include "rdmamesh/stats/verdict.hpp"
#include "rdmamesh/stats/median.hpp"
#include "rdmamesh/stats/rank_test.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace rdmamesh::stats {
namespace {

void widen(double v, double& lo, double& hi) {
  if (std::isnan(v)) return;
  lo = std::isnan(lo) ? v : std::min(lo, v);
  hi = std::isnan(hi) ? v : std::max(hi, v);
}

int rank_of(outlier_kind k) {
  switch (k) {
    case outlier_kind::failed: return 0;
    case outlier_kind::fabric: return 1;
    case outlier_kind::uplink: return 2;
    case outlier_kind::node: return 3;
    case outlier_kind::nic: return 4;
    case outlier_kind::rank: return 5;
    case outlier_kind::link: return 6;
  }
  return 7;
}

}  // namespace

const char* to_string(health h) {
  switch (h) {
    case health::healthy: return "healthy";
    case health::unjudged: return "unjudged";
    case health::degraded: return "degraded";
    case health::failed: return "failed";
  }
  return "?";
}

namespace {

using pair_key = std::pair<std::int32_t, std::int32_t>;

// Every pair the retests measured alone: still slow in any retest, or fine in all of them (a
// retest that could not tell, the pair between its two bounds, says nothing either way).
struct alone_evidence {
  std::map<pair_key, double> slow, fine;             // % of the controls alone (the lowest seen)
  std::map<pair_key, std::set<std::uint32_t>> runs;  // the runs whose retest measured it
  std::set<pair_key> lone;                           // still slow beyond the controls' whole spread: enough for a link
  // every pair alone its host did not hold back, decided or not (the lowest seen), and every
  // control alone: what a side's pairs are ranked against
  std::map<pair_key, double> all;
  std::vector<double> controls;
  // held back by their host alone (starved) in every retest that measured them: its busy end's
  // share of a CPU (the lowest seen) and its controls' ends'
  std::map<pair_key, std::pair<double, double>> held;

  explicit alone_evidence(std::span<const judged_run> jobs) {
    for (const auto& run : jobs) {
      controls.insert(controls.end(), run.controls_pct.begin(), run.controls_pct.end());
      for (const auto& a : run.alone) {
        const pair_key k{static_cast<std::int32_t>(a.src), static_cast<std::int32_t>(a.dst)};
        const auto keep_lowest = [&](std::map<pair_key, double>& into) {
          const auto [it, fresh] = into.try_emplace(k, a.pct);
          if (!fresh && a.pct < it->second) it->second = a.pct;
        };
        if (!a.starved && std::isfinite(a.pct)) keep_lowest(all);
        if (a.starved) {
          const auto [it, fresh] = held.try_emplace(k, a.cpu_share, a.controls_cpu_share);
          if (!fresh && a.cpu_share < it->second.first) it->second = {a.cpu_share, a.controls_cpu_share};
        }
        if (!a.still_slow && !a.fine) continue;
        keep_lowest(a.still_slow ? slow : fine);
        runs[k].insert(run.index);
        if (a.still_slow && a.beyond_spread) lone.insert(k);
      }
    }
    for (const auto& [k, pct] : slow) fine.erase(k);
    std::erase_if(held, [&](const auto& e) { return slow.contains(e.first) || fine.contains(e.first); });
  }
  // pairs with an end at a culprit are that culprit's evidence, not another cause's; so are the
  // pairs across nodes with an end on a culprit's node, which cross its port (a rank receiving
  // from the sick node's other rank is slowed by that node, not by its own NIC)
  void forget(const std::set<std::int32_t>& culprits, std::span<const std::int32_t> node_of) {
    std::set<std::int32_t> ports;
    for (auto r : culprits)
      if (static_cast<std::size_t>(r) < node_of.size()) ports.insert(node_of[static_cast<std::size_t>(r)]);
    const auto on_port = [&](std::int32_t r) {
      return static_cast<std::size_t>(r) < node_of.size() && ports.contains(node_of[static_cast<std::size_t>(r)]);
    };
    const auto gone = [&](const auto& e) {
      const auto [a, b] = e.first;
      return culprits.contains(a) || culprits.contains(b) ||
             (across_nodes(node_of, static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)) &&
              (on_port(a) || on_port(b)));
    };
    for (auto* m : {&slow, &fine, &all}) std::erase_if(*m, gone);
    std::erase_if(held, gone);
  }
};

// What the retest decides a side by: `these` of its pairs alone against `others`, where `these`
// are most and two at least (one pair alone is one sample).
bool most_of(int these, int others) {
  return these >= 2 && these > others;
}

// The side (sends or receives) of one rank that the retest found slow alone: most of that side's
// retested pairs, two at least, still slow, toward two or more peers that are not one node (a
// slow node makes each sender's pairs into it slow: that is the node's fault, not theirs)
struct side_figures {
  bool slow = false;
  double lo = nan, hi = nan;
  std::uint32_t pairs = 0, fine = 0;
  std::set<std::uint32_t> runs;
};

side_figures judge_side(const alone_evidence& e, std::int32_t rank, bool sends, std::span<const std::int32_t> node_of) {
  side_figures f;
  std::set<std::int64_t> groups;  // the peer's node across nodes; the peer itself within one
  const auto mine = [&](const pair_key& k) { return (sends ? k.first : k.second) == rank; };
  for (const auto& [k, pct] : e.slow) {
    if (!mine(k)) continue;
    const std::int32_t peer = sends ? k.second : k.first;
    const auto p = static_cast<std::uint32_t>(peer), r = static_cast<std::uint32_t>(rank);
    groups.insert(across_nodes(node_of, r, p) && p < node_of.size() ? node_of[p] : -1 - std::int64_t{peer});
    ++f.pairs;
    f.lo = std::isnan(f.lo) ? pct : std::min(f.lo, pct);
    f.hi = std::isnan(f.hi) ? pct : std::max(f.hi, pct);
    f.runs.insert(e.runs.at(k).begin(), e.runs.at(k).end());
  }
  for (const auto& [k, pct] : e.fine) f.fine += mine(k);
  f.slow = most_of(static_cast<int>(f.pairs), static_cast<int>(f.fine)) && groups.size() >= 2;
  return f;
}

// a run among those that showed the cause, once
void add_run(folded_cause& c, std::uint32_t index, const std::string& label) {
  if (std::ranges::find(c.runs, index) != c.runs.end()) return;
  c.runs.push_back(index);
  c.labels.push_back(label);
}

void add_side(folded_cause& c, const side_figures& f, bool sends, std::span<const judged_run> jobs) {
  (sends ? c.send_lo : c.recv_lo) = f.lo;
  (sends ? c.send_hi : c.recv_hi) = f.hi;
  c.pairs += f.pairs;
  c.fine += f.fine;
  for (const auto& r : jobs)
    if (f.runs.contains(r.index)) add_run(c, r.index, r.label);
}

// A cause no run named rests on the retest alone: beyond most of its side's pairs being still slow,
// they must rank below the controls alone (lower_rank_p) by more than chance allows at this level
// for the whole job, Holm's step-down over every side the retest measured. Holm, not
// Benjamini-Hochberg: a named cause drains a node, so the chance that any healthy one is named is
// what is held. 5 %, not less: with the eight controls a retest measures, a node's four pairs below
// them all reach 0.2 %, so a stricter level would leave a side of four unnamed however slow.
constexpr double retest_alone_alpha = 0.05;

// The chance that a healthy side's pairs alone rank as low among the controls alone as this
// side's (1: nothing to rank).
double side_p(const alone_evidence& e, std::int32_t rank, bool sends) {
  std::vector<double> mine;
  for (const auto& [k, pct] : e.all)
    if ((sends ? k.first : k.second) == rank) mine.push_back(pct);
  return lower_rank_p(mine, e.controls);
}

// The sides (a rank's sends or receives) the retest measured a pair of.
std::size_t sides_measured(const alone_evidence& e) {
  std::set<std::pair<std::int32_t, bool>> sides;
  for (const auto& [k, pct] : e.all) sides.insert({{k.first, true}, {k.second, false}});
  return sides.size();
}

// The ranks with a side slow alone at chance `alpha` each (lower_rank_p), merged into their node
// where every rank of it (two or more) has one.
std::vector<folded_cause> candidates(const alone_evidence& e, std::span<const judged_run> jobs,
                                     std::span<const std::int32_t> node_of, double alpha) {
  std::set<std::int32_t> ranks;
  for (const auto* m : {&e.slow, &e.fine})
    for (const auto& [k, pct] : *m) ranks.insert({k.first, k.second});
  std::map<std::int32_t, folded_cause> by_rank;
  for (auto r : ranks) {
    folded_cause c{outlier_kind::rank, outlier_basis::retest, -1, r, -1, {}, {}, nan, nan, nan, nan, 0, 0, true};
    if (static_cast<std::size_t>(r) < node_of.size()) c.node = node_of[static_cast<std::size_t>(r)];
    bool any = false;
    for (bool sends : {true, false}) {
      const side_figures f = judge_side(e, r, sends, node_of);
      const bool slow = f.slow && side_p(e, r, sends) <= alpha;
      if (slow) add_side(c, f, sends, jobs);
      any |= slow;
    }
    if (any) by_rank.emplace(r, std::move(c));
  }
  std::vector<folded_cause> out;
  std::set<std::int32_t> done;
  for (auto& [r, c] : by_rank) {
    if (c.node < 0 || done.contains(c.node)) continue;
    std::vector<const folded_cause*> members;
    std::size_t on_node = 0;
    for (std::size_t i = 0; i < node_of.size(); ++i) {
      if (node_of[i] != c.node) continue;
      ++on_node;
      if (auto it = by_rank.find(static_cast<std::int32_t>(i)); it != by_rank.end()) members.push_back(&it->second);
    }
    if (on_node < 2 || members.size() != on_node) continue;
    folded_cause n{outlier_kind::node, outlier_basis::retest, c.node, -1, -1, {}, {}, nan, nan, nan, nan, 0, 0, true};
    for (const auto* m : members) {
      widen(m->send_lo, n.send_lo, n.send_hi);
      widen(m->send_hi, n.send_lo, n.send_hi);
      widen(m->recv_lo, n.recv_lo, n.recv_hi);
      widen(m->recv_hi, n.recv_lo, n.recv_hi);
      n.pairs += m->pairs;
      n.fine += m->fine;
      for (std::size_t i = 0; i < m->runs.size(); ++i) add_run(n, m->runs[i], m->labels[i]);
    }
    done.insert(c.node);
    out.push_back(std::move(n));
  }
  for (auto& [r, c] : by_rank)
    if (!done.contains(c.node) || c.node < 0) out.push_back(std::move(c));
  return out;
}

// The ranks a rank, NIC or node cause stands for (none for other kinds).
std::vector<std::int32_t> ranks_of(const folded_cause& c, std::span<const std::int32_t> node_of,
                                   std::span<const nic_group> nics) {
  std::vector<std::int32_t> out;
  if (c.kind == outlier_kind::rank) out.push_back(c.rank);
  for (std::size_t i = 0; c.kind == outlier_kind::node && i < node_of.size(); ++i)
    if (node_of[i] == c.node) out.push_back(static_cast<std::int32_t>(i));
  for (const auto& g : nics) {
    if (c.kind != outlier_kind::nic || g.node != c.node || g.rail != c.peer) continue;
    for (std::size_t i = 0; i < g.members.size(); ++i)
      if (g.members[i]) out.push_back(static_cast<std::int32_t>(i));
  }
  return out;
}

// Ranks and nodes the retest alone shows slow, though the runs' noise hid them (a busy run's
// spread can hold a node at half rate inside it; alone, its pairs read half of the controls).
// The one that explains the most slow pairs first; the pairs at its ends are then its evidence
// (a rank receiving from that node reads slow on those pairs), and so on.
std::vector<folded_cause> slow_alone(alone_evidence e, std::span<const judged_run> jobs,
                                     std::span<const std::int32_t> node_of, std::set<std::int32_t> culprits) {
  // retest causes are ranks and nodes: a NIC's ranks are found as ranks here
  std::vector<folded_cause> out;
  e.forget(culprits, node_of);
  const std::size_t tested = sides_measured(e);  // Holm: each one found leaves one test fewer
  std::size_t found_sides = 0;
  for (;;) {
    const double alpha = retest_alone_alpha / static_cast<double>(tested > found_sides ? tested - found_sides : 1);
    auto found = candidates(e, jobs, node_of, alpha);
    if (found.empty()) return out;
    auto best = std::ranges::max_element(found, {}, &folded_cause::pairs);
    for (auto r : ranks_of(*best, node_of, {})) {
      culprits.insert(r);
      ++found_sides;
    }
    out.push_back(std::move(*best));
    e.forget(culprits, node_of);
  }
}

// The ranks of the counted rank, NIC and node causes.
std::set<std::int32_t> culprits_of(const auto& by, std::span<const std::int32_t> node_of,
                                   std::span<const nic_group> nics) {
  std::set<std::int32_t> out;
  for (const auto& [k, c] : by) {
    if (!c.counted) continue;
    for (auto r : ranks_of(c, node_of, nics)) out.insert(r);
  }
  return out;
}

}  // namespace

namespace {

using cause_key = std::tuple<outlier_kind, outlier_basis, std::int32_t, std::int32_t, std::int32_t>;
using cause_map = std::map<cause_key, folded_cause>;

cause_key key_of(const folded_cause& c) {
  return {c.kind, c.basis, c.node, c.rank, c.peer};
}

// Every run's causes, one entry per cause with the runs that named it and its figures' range;
// the job's counts of runs and its stated false-alarm level (the noisiest judged run's).
cause_map collect(std::span<const judged_run> runs, job_verdict& v) {
  cause_map by;
  for (const auto& run : runs) {
    ++v.runs;
    if (!run.report) continue;
    v.runs_judged += run.judged;
    if (run.stated.drawn > 0 && (v.stated.drawn == 0 || run.stated.pct() > v.stated.pct())) {
      v.stated = run.stated;
      v.stated_run = static_cast<std::int32_t>(run.index);
    }
    for (const auto& o : run.report->found) {
      auto [it, fresh] = by.try_emplace(cause_key{o.kind, o.basis, o.node, o.rank, o.peer});
      folded_cause& c = it->second;
      if (fresh) c = {o.kind, o.basis, o.node, o.rank, o.peer, {}, {}, nan, nan, nan, nan, 0, 0, false};
      c.runs.push_back(run.index);
      c.labels.push_back(run.label);
      widen(o.send_pct, c.send_lo, c.send_hi);
      widen(o.recv_pct, c.recv_lo, c.recv_hi);
      if (o.pairs > c.pairs) {
        c.pairs = o.pairs;
        c.fine = o.fine;
      }
    }
  }
  return by;
}

// What the retest says of each rank's sends and receives: how many of their pairs stayed slow
// alone and how many read fine, and which sides are sick alone.
class alone_sides {
 public:
  explicit alone_sides(const alone_evidence& alone)
      : slow_(count_sides(alone.slow, {})), fine_(count_sides(alone.fine, {})), held_(count_sides(alone.held, {})) {
    // a side sick alone, most of its pairs still slow, is found first; the pairs at its rank's
    // ends are then its evidence, not their other ends' (a healthy NIC's pairs into a slow one
    // stay slow alone too, their acknowledgements queued behind its port)
    std::set<std::int32_t> sick;
    for (;;) {
      std::map<side, int> n = count_sides(alone.slow, sick);
      // most of a side's pairs alone, not two of many: fresh partners that read fine outvote the
      // two a spread run happened to meet
      std::erase_if(n, [&](const auto& e) { return !most_of(e.second, fine(e.first.first, e.first.second)); });
      const auto most = std::ranges::max_element(n, {}, [](const auto& e) { return e.second; });
      if (most == n.end()) break;
      sick.insert(most->first.first);
      sick_.insert(most->first);
    }
    for (const auto& [k, pct] : alone.slow) {
      if (!sick.contains(k.second)) ++unexplained_[{k.first, true}];
      if (!sick.contains(k.first)) ++unexplained_[{k.second, false}];
    }
  }
  int slow(std::int32_t rank, bool sends) const { return get(slow_, rank, sends); }
  int fine(std::int32_t rank, bool sends) const { return get(fine_, rank, sends); }
  // most of the side's pairs alone, two at least, still slow
  bool most_slow(std::int32_t rank, bool sends) const { return most_of(slow(rank, sends), fine(rank, sends)); }
  // fine alone by most of its pairs, two at least, against those still slow that no rank sick
  // alone explains: slowed by its round (contention, or a CPU shared with busy ranks), not by its
  // NIC. Never a side sick alone itself (a node slow only through one NIC reads fine alone on
  // its other NIC's ranks and slow on that one's)
  bool cleared(std::int32_t rank, bool sends) const {
    return most_of(fine(rank, sends), get(unexplained_, rank, sends)) && !sick_.contains({rank, sends});
  }
  // as cleared, but with pairs its host held back alone (starved) among those that read fine:
  // alone its NIC slowed nothing, its CPU did
  bool held(std::int32_t rank, bool sends) const {
    const int held = get(held_, rank, sends);
    return held > 0 && most_of(fine(rank, sends) + held, get(unexplained_, rank, sends)) &&
           !sick_.contains({rank, sends});
  }

 private:
  using side = std::pair<std::int32_t, bool>;  // a rank's sends (true) or receives
  template <class Pairs>
  static std::map<side, int> count_sides(const Pairs& pairs, const std::set<std::int32_t>& skip) {
    std::map<side, int> n;
    for (const auto& [k, v] : pairs) {
      if (skip.contains(k.first) || skip.contains(k.second)) continue;
      ++n[{k.first, true}];
      ++n[{k.second, false}];
    }
    return n;
  }
  static int get(const std::map<side, int>& n, std::int32_t rank, bool sends) {
    const auto it = n.find({rank, sends});
    return it == n.end() ? 0 : it->second;
  }
  std::map<side, int> slow_, fine_, held_, unexplained_;
  std::set<side> sick_;
};

// A rank or node is cleared when every side it was named for is, on each of its ranks.
bool cleared_cause(const folded_cause& c, const alone_sides& sides, std::span<const std::int32_t> node_of,
                   std::span<const nic_group> nics) {
  const bool sends = !std::isnan(c.send_lo), receives = !std::isnan(c.recv_lo);
  if (!sends && !receives) return false;
  const auto ranks = ranks_of(c, node_of, nics);
  return !ranks.empty() && std::ranges::all_of(ranks, [&](std::int32_t r) {
    return (!sends || sides.cleared(r, true)) && (!receives || sides.cleared(r, false));
  });
}

// A rank, NIC or node whose named sides the retest found fine alone or held back by their host
// (one at least), on each of its ranks: alone it measured the host, not the network. Its held
// pairs' share of a CPU and their controls' go to the cause (its why); false where it is not so.
bool held_cause(folded_cause& c, const alone_evidence& alone, const alone_sides& sides,
                std::span<const std::int32_t> node_of, std::span<const nic_group> nics) {
  const bool sends = !std::isnan(c.send_lo), receives = !std::isnan(c.recv_lo);
  const auto ranks = ranks_of(c, node_of, nics);
  const auto ok = [&](std::int32_t r, bool send) { return sides.cleared(r, send) || sides.held(r, send); };
  if ((!sends && !receives) || ranks.empty() || !std::ranges::all_of(ranks, [&](std::int32_t r) {
        return (!sends || ok(r, true)) && (!receives || ok(r, false));
      }))
    return false;
  std::vector<double> cpu, controls;
  for (const auto& [pair, shares] : alone.held) {
    const auto [src, dst] = pair;
    if (std::ranges::find(ranks, sends ? src : -1) == ranks.end() &&
        std::ranges::find(ranks, receives ? dst : -1) == ranks.end())
      continue;
    cpu.push_back(shares.first);
    controls.push_back(shares.second);
  }
  if (cpu.empty()) return false;
  c.held_cpu = median_of(cpu);
  c.held_controls_cpu = median_of(controls);
  return true;
}

// Which causes the runs named count. Most of the judged runs count a cause; a failed pair needs
// no majority (a completion error is not noise). A suspect (one pair, or one rank named by one
// run: its pairs share one CPU and one process, so they are one draw however many there are)
// needs more: a retest that found its pair still slow alone beyond the controls' whole spread,
// its rank's named side still slow alone on most pairs, or most of two or more runs. A retest
// that found the named sides fine alone clears a rank, NIC or node; one that found them held back
// by their host leaves it undecided: not counted (a crowded host is the check's own noise, and
// the host that was short of a CPU alone is as likely to have been short in the run).
void count_runs(cause_map& by, std::uint32_t runs_judged, const alone_evidence& alone, const alone_sides& sides,
                std::span<const std::int32_t> node_of, std::span<const nic_group> nics) {
  for (auto& [k, c] : by) {
    const bool most = 2 * c.runs.size() > std::max<std::uint32_t>(runs_judged, 1);
    const bool one_run_rank = c.kind == outlier_kind::rank && c.basis == outlier_basis::noise && c.runs.size() < 2;
    const bool suspect = is_suspect(c.kind, c.basis) || one_run_rank;
    const bool retested =
        c.kind == outlier_kind::rank &&
        (sides.most_slow(c.rank, true) || (one_run_rank && !std::isnan(c.recv_lo) && sides.most_slow(c.rank, false)));
    c.counted = c.kind == outlier_kind::failed ||
                (suspect ? alone.lone.contains(pair_key{c.rank, c.peer}) || (most && c.runs.size() >= 2) : most) ||
                retested;
    if ((c.kind == outlier_kind::rank || c.kind == outlier_kind::node || c.kind == outlier_kind::nic) &&
        c.basis == outlier_basis::noise) {
      if (cleared_cause(c, sides, node_of, nics)) {
        c.counted = false;
        c.cleared = true;
      } else if (c.counted && held_cause(c, alone, sides, node_of, nics)) {
        c.counted = false;
        c.undecided = true;
      }
    }
  }
}

// The NICs of a counted node that its retest finds still slow alone, where its other NICs read
// fine: one slow NIC slows its node-mates' pairs in a busy mesh too, and alone only its own stay
// slow. Empty where the retest does not tell one NIC from the others.
std::vector<folded_cause> narrow_node(const folded_cause& c, const alone_evidence& alone, const alone_sides& sides,
                                      std::span<const judged_run> runs, std::span<const std::int32_t> node_of,
                                      std::span<const nic_group> nics) {
  std::vector<std::int32_t> on_node;
  for (const auto& g : nics)
    for (std::size_t i = 0; g.node == c.node && i < g.members.size(); ++i)
      if (g.members[i]) on_node.push_back(static_cast<std::int32_t>(i));
  // a named side the retest found fine on every rank of the node says nothing of which NIC (a
  // node's receives named beside its slow sends are acknowledgements queued behind them)
  const auto evidence = [&](bool named, bool send) {
    return named && !std::ranges::all_of(on_node, [&](std::int32_t r) { return sides.cleared(r, send); });
  };
  const bool sends = evidence(!std::isnan(c.send_lo), true), receives = evidence(!std::isnan(c.recv_lo), false);
  if (!sends && !receives) return {};
  const auto both = [&](auto&& side_ok) {
    return [&, side_ok](std::int32_t r) { return (!sends || side_ok(r, true)) && (!receives || side_ok(r, false)); };
  };
  const auto slow_side = [&](std::int32_t r, bool send) { return sides.slow(r, send) >= 2; };
  const auto cleared_side = [&](std::int32_t r, bool send) { return sides.cleared(r, send); };
  std::vector<std::pair<const nic_group*, std::vector<std::int32_t>>> slow;
  std::size_t mine = 0, fine = 0;
  for (const auto& g : nics) {
    if (g.node != c.node) continue;
    ++mine;
    std::vector<std::int32_t> ranks;
    for (std::size_t i = 0; i < g.members.size(); ++i)
      if (g.members[i]) ranks.push_back(static_cast<std::int32_t>(i));
    if (std::ranges::all_of(ranks, both(slow_side))) {
      slow.emplace_back(&g, std::move(ranks));
    } else if (std::ranges::all_of(ranks, both(cleared_side))) {
      ++fine;
    }
  }
  if (slow.empty() || slow.size() + fine != mine || fine == 0) return {};
  std::vector<folded_cause> out;
  for (const auto& [g, ranks] : slow) {
    folded_cause n{
        outlier_kind::nic, outlier_basis::retest, c.node, -1, g->rail, {}, {}, nan, nan, nan, nan, 0, 0, true};
    for (auto r : ranks) {
      for (bool send : {true, false}) {
        if (send ? sends : receives) add_side(n, judge_side(alone, r, send, node_of), send, runs);
      }
    }
    out.push_back(std::move(n));
  }
  return out;
}

// Counted nodes narrowed to their slow NICs; a NIC the runs named and counted already is theirs.
void narrow_nodes(cause_map& by, const alone_evidence& alone, const alone_sides& sides,
                  std::span<const judged_run> runs, std::span<const std::int32_t> node_of,
                  std::span<const nic_group> nics) {
  std::vector<folded_cause> narrowed;
  for (auto& [k, c] : by) {
    if (!c.counted || c.kind != outlier_kind::node || c.basis != outlier_basis::noise) continue;
    auto its = narrow_node(c, alone, sides, runs, node_of, nics);
    if (its.empty()) continue;
    c.counted = false;
    c.narrowed = true;
    for (auto& n : its) narrowed.push_back(std::move(n));
  }
  for (auto& n : narrowed) {
    const bool named = std::ranges::any_of(by, [&](const auto& e) {
      const folded_cause& c = e.second;
      return c.counted && c.kind == outlier_kind::nic && c.node == n.node && c.peer == n.peer;
    });
    if (!named) by.try_emplace(key_of(n), std::move(n));
  }
}

// A counted uplink its retest splits: nodes under it slow alone beyond chance (found as a cause no
// run named is, slow_alone) and, on each side they are slow on, their pairs through the uplink
// alone below the other nodes' under it beyond chance (the job's level over the nodes under it),
// those others reading alone like the controls (not below them at the job's level). Alone, an
// uplink slows every node's pairs through it alike; a node's own port only its own, though in a
// busy run it slows its leaf-mate's pairs through the uplink too (their acknowledgements, their
// CPU), and the uplink, which holds those, can explain more slow pairs than the node does. The
// leaf-mates are ranked, not bounded: where pairs alone spread, one at half reads fine past a
// bound at half, so a bound would split an uplink at half onto one of its nodes.
void narrow_uplinks(cause_map& by, const alone_evidence& alone, std::span<const judged_run> runs,
                    std::span<const std::int32_t> node_of, std::span<const switch_group> uplinks,
                    std::span<const nic_group> nics) {
  std::vector<folded_cause> narrowed;
  for (auto& [k, c] : by) {
    if (!c.counted || c.kind != outlier_kind::uplink || c.basis != outlier_basis::noise) continue;
    const auto u = std::ranges::find(uplinks, c.node, &switch_group::sw);
    if (u == uplinks.end() || u->members.size() != node_of.size()) continue;
    std::map<std::int32_t, std::vector<std::int32_t>> under;  // node -> its ranks (both subtrees of a twin)
    for (std::size_t r = 0; r < node_of.size(); ++r)
      if (u->members[r] || c.peer >= 0) under[node_of[r]].push_back(static_cast<std::int32_t>(r));
    std::vector<folded_cause> slow;
    for (auto& f : slow_alone(alone, runs, node_of, culprits_of(by, node_of, nics))) {
      if (!under.contains(f.node)) continue;
      if (f.kind == outlier_kind::rank && under.at(f.node).size() == 1) {  // a node's one rank is that node
        f.kind = outlier_kind::node;
        f.rank = -1;
      }
      slow.push_back(std::move(f));
    }
    const auto is_slow = [&](std::int32_t node) {
      return std::ranges::any_of(slow, [&](const folded_cause& f) { return f.node == node; });
    };
    bool split = !slow.empty() && slow.size() < under.size();
    // a side's pairs alone through the uplink, of the slow node's ranks or of the fine nodes'
    const auto through = [&](bool sends, auto&& whose) {
      std::vector<double> out;
      for (const auto& [pair, pct] : alone.all) {
        const auto a = static_cast<std::size_t>(pair.first), b = static_cast<std::size_t>(pair.second);
        const std::int32_t mine = sends ? pair.first : pair.second;
        if (u->crosses(a, b) && whose(mine)) out.push_back(pct);
      }
      return out;
    };
    const double alpha = retest_alone_alpha / static_cast<double>(under.size());
    for (const auto& f : slow) {
      const auto ranks = ranks_of(f, node_of, nics);
      for (bool sends : {true, false}) {
        if (!split || std::isnan(sends ? f.send_lo : f.recv_lo)) continue;
        const auto its = through(sends, [&](std::int32_t r) { return std::ranges::count(ranks, r) > 0; });
        const auto mates = through(sends, [&](std::int32_t r) {
          return static_cast<std::size_t>(r) < node_of.size() && under.contains(node_of[static_cast<std::size_t>(r)]) &&
                 !is_slow(node_of[static_cast<std::size_t>(r)]);
        });
        split = lower_rank_p(its, mates) <= alpha && lower_rank_p(mates, alone.controls) > retest_alone_alpha;
      }
    }
    if (!split) continue;
    c.counted = false;
    c.narrowed = true;
    for (auto& f : slow) narrowed.push_back(std::move(f));
  }
  for (auto& n : narrowed) by.try_emplace(key_of(n), std::move(n));
}

// Whether a pair crosses a counted uplink, either way: such pairs are the uplink's evidence (its
// acknowledgements too), not a rank's, a node's or a link's of their own.
class through_counted {
 public:
  through_counted(const cause_map& by, std::span<const switch_group> uplinks) {
    for (const auto& [k, c] : by) {
      const auto u = std::ranges::find(uplinks, c.node, &switch_group::sw);
      if (c.counted && c.kind == outlier_kind::uplink && u != uplinks.end()) up_.push_back(&*u);
    }
  }
  bool operator()(std::int32_t a, std::int32_t b) const {
    return a >= 0 && b >= 0 && std::ranges::any_of(up_, [&](const switch_group* u) {
             return u->crosses(static_cast<std::size_t>(a), static_cast<std::size_t>(b));
           });
  }

 private:
  std::vector<const switch_group*> up_;
};

// The only rank of one NIC of its node is that NIC, as the finder names it on a tie: the NIC is
// what is replaced.
void as_its_nic(folded_cause& a, std::span<const nic_group> nics) {
  for (const auto& g : nics) {
    const auto r = static_cast<std::size_t>(a.rank);
    if (a.kind != outlier_kind::rank || a.rank < 0 || r >= g.members.size() || !g.members[r] ||
        std::ranges::count(g.members, std::uint8_t{1}) != 1)
      continue;
    a.kind = outlier_kind::nic;
    a.peer = g.rail;
    a.rank = -1;
  }
}

// What the runs missed and the retest found: a rank, NIC or node already named by a run counts
// under the run's figures; one no run named is added with the figures alone; one inside a
// counted node is that node's.
void add_slow_alone(cause_map& by, alone_evidence alone, std::span<const judged_run> runs,
                    std::span<const std::int32_t> node_of, std::span<const nic_group> nics,
                    const through_counted& through) {
  const auto node_counted = [&](std::int32_t node) {
    return node >= 0 && std::ranges::any_of(by, [&](const auto& e) {
             const folded_cause& c = e.second;
             return c.counted && c.node == node &&
                    (c.kind == outlier_kind::node || c.kind == outlier_kind::rank || c.kind == outlier_kind::nic);
           });
  };
  for (auto* m : {&alone.slow, &alone.fine, &alone.all})
    std::erase_if(*m, [&](const auto& e) { return through(e.first.first, e.first.second); });
  for (auto& a : slow_alone(alone, runs, node_of, culprits_of(by, node_of, nics))) {
    if (node_counted(a.node) && a.kind == outlier_kind::node) continue;
    as_its_nic(a, nics);
    bool named = false;
    for (auto& [k, c] : by) {
      const bool same = a.kind == outlier_kind::node  ? c.node == a.node
                        : a.kind == outlier_kind::nic ? c.node == a.node && c.peer == a.peer
                                                      : c.rank == a.rank;
      if (c.kind != a.kind || !same) continue;
      c.counted = named = true;
    }
    const bool covered =
        (a.kind == outlier_kind::rank || a.kind == outlier_kind::nic) && std::ranges::any_of(by, [&](const auto& e) {
          return e.second.counted && e.second.kind == outlier_kind::node && e.second.node == a.node;
        });
    if (!named && !covered) by.try_emplace(key_of(a), std::move(a));
  }
}

// A rank or NIC of a counted node is that node's cause, named once (a node slow on its sends
// reads slow on its receives too, their acknowledgements queued behind the sends).
void fold_into_nodes(cause_map& by) {
  std::set<std::int32_t> counted_nodes;
  for (const auto& [k, c] : by)
    if (c.counted && c.kind == outlier_kind::node) counted_nodes.insert(c.node);
  for (auto& [k, c] : by) {
    if (!c.counted || (c.kind != outlier_kind::rank && c.kind != outlier_kind::nic) || !counted_nodes.contains(c.node))
      continue;
    c.counted = false;
    c.within = true;
  }
}

// The model's retest (see the header): every part retested, with the run it retested.
struct retested_part {
  const lasting_effect* l;
  const judged_run* run;
};

bool is_part_kind(outlier_kind k) {
  return k == outlier_kind::rank || k == outlier_kind::nic || k == outlier_kind::node;
}

void fill_alone(folded_cause& c, const lasting_effect& l) {
  c.alone_pct = 100 * std::exp(l.effect);
  c.alone_lo = 100 * std::exp(l.lo);
  c.alone_hi = 100 * std::exp(l.hi);
  c.alone_p = l.p_slow;
  c.alone_pairs = static_cast<std::uint32_t>(l.pairs);
}

// Its host's share of a CPU alone, on the pairs it held back, and their controls' (its why)
void fill_held(folded_cause& c, const judged_run& run, const std::vector<std::uint8_t>& member, bool sends) {
  std::vector<double> cpu, controls;
  for (const auto& a : run.alone) {
    if (!a.starved || (sends ? a.src : a.dst) >= member.size() || !member[sends ? a.src : a.dst]) continue;
    cpu.push_back(a.cpu_share);
    controls.push_back(a.controls_cpu_share);
  }
  if (cpu.empty()) return;
  c.held_cpu = median_of(cpu);
  c.held_controls_cpu = median_of(controls);
}

// The parts that stand and that no run named: causes of their own, basis retest, with their
// pairs alone as the pairs' own lines read them.
void add_counted_alone(cause_map& by, std::span<const retested_part> parts,
                       const std::set<const lasting_effect*>& named) {
  for (const auto& [l, run] : parts) {
    if (!l->stands() || named.contains(l)) continue;
    const auto& part = l->part;
    folded_cause c{part.kind,
                   outlier_basis::retest,
                   part.node,
                   part.kind == outlier_kind::rank ? part.rank : -1,
                   part.kind == outlier_kind::nic ? part.rail : -1,
                   {},
                   {},
                   nan,
                   nan,
                   nan,
                   nan,
                   0,
                   0,
                   true};
    add_run(c, run->index, run->label);
    const double pct = 100 * std::exp(l->effect);
    (part.sends ? c.send_lo : c.recv_lo) = pct;
    (part.sends ? c.send_hi : c.recv_hi) = pct;
    for (const auto& a : run->alone) {  // its pairs alone as the pairs' own lines read them
      const auto end = part.sends ? a.src : a.dst;
      if (end >= part.member.size() || !part.member[end] || part.member[part.sends ? a.dst : a.src]) continue;
      c.pairs += a.still_slow ? 1 : 0;
      c.fine += a.fine ? 1 : 0;
    }
    fill_alone(c, *l);
    const auto [it, fresh] = by.try_emplace(key_of(c), c);
    if (!fresh) {  // its other side, or another run's retest of it
      widen(pct, part.sends ? it->second.send_lo : it->second.recv_lo,
            part.sends ? it->second.send_hi : it->second.recv_hi);
      it->second.counted = true;
    }
  }
}

// A run-named rank, NIC or node takes its parts' word (each side it was named for): counted where
// one stands, `within` or `narrowed` where the model let a larger or smaller part stand for it,
// cleared where every one was cleared, undecided otherwise (held back by its host, or its interval
// across --slow). Parts that stand and that no run named are added, basis retest. False: nothing
// was retested, and the rules of the runs alone hold.
bool decide_by_model(cause_map& by, std::span<const judged_run> runs, std::span<const std::int32_t> node_of,
                     std::span<const nic_group> nics, job_verdict& v) {
  std::vector<retested_part> parts;
  bool any = false;
  for (const auto& run : runs) {
    if (!run.retested) continue;
    any = true;
    v.false_alarm = std::max(v.false_alarm, run.alpha);
    v.parts_retested += run.parts.size();
    for (const auto& l : run.parts) parts.push_back({&l, &run});
  }
  if (!any) return false;
  std::set<const lasting_effect*> named;
  for (auto& entry : by) {
    folded_cause& c = entry.second;  // a name, not a binding: the lambdas below capture it
    if (c.basis != outlier_basis::noise || !is_part_kind(c.kind)) continue;
    const auto retested_run = [&](const judged_run* r) { return std::ranges::find(c.runs, r->index) != c.runs.end(); };
    if (!std::ranges::any_of(runs, [&](const judged_run& r) { return r.retested && retested_run(&r); })) continue;
    std::vector<std::uint8_t> member(parts.empty() ? node_of.size() : parts[0].l->part.member.size(), 0);
    for (auto r : ranks_of(c, node_of, nics))
      if (static_cast<std::size_t>(r) < member.size()) member[static_cast<std::size_t>(r)] = 1;
    std::vector<retested_part> mine;
    for (const auto& p : parts) {
      const bool side = p.l->part.sends ? !std::isnan(c.send_lo) : !std::isnan(c.recv_lo);
      if (side && p.l->part.member == member && retested_run(p.run)) mine.push_back(p);
    }
    c.counted = c.cleared = c.undecided = false;
    const auto any_of = [&](auto&& pred) {
      return std::ranges::any_of(mine, [&](const auto& p) { return pred(*p.l); });
    };
    if (mine.empty()) {
      c.undecided = true;  // named, but none of its pairs could be measured alone
      continue;
    }
    const auto slowest = std::ranges::min_element(mine, {}, [](const auto& p) {
      return std::isnan(p.l->effect) ? std::numeric_limits<double>::infinity() : p.l->effect;
    });
    fill_alone(c, *slowest->l);
    for (const auto& p : mine) named.insert(p.l);
    if (any_of([](const lasting_effect& l) { return l.stands(); })) {
      c.counted = true;
    } else if (any_of([](const lasting_effect& l) { return l.counted && l.within; })) {
      c.within = true;
    } else if (any_of([](const lasting_effect& l) { return l.counted && l.narrowed; })) {
      c.narrowed = true;
    } else if (std::ranges::all_of(mine, [](const auto& p) { return p.l->cleared; })) {
      c.cleared = true;
    } else {
      c.undecided = true;
      for (const auto& p : mine)
        if (p.l->held_back) fill_held(c, *p.run, member, p.l->part.sends);
    }
  }
  add_counted_alone(by, parts, named);
  return true;
}

// A counted uplink under which the model counts a rank, NIC or node, where not every node under
// it is counted: that part's, not the uplink's (its controls crossed the same uplinks the same
// way, so an uplink slow for all would have left them all alike).
void narrow_uplinks_by_model(cause_map& by, std::span<const std::int32_t> node_of,
                             std::span<const switch_group> uplinks, std::span<const nic_group> nics) {
  for (auto& entry : by) {
    folded_cause& c = entry.second;  // a name, not a binding: `under` captures it
    if (!c.counted || c.kind != outlier_kind::uplink || c.basis != outlier_basis::noise) continue;
    const auto u = std::ranges::find(uplinks, c.node, &switch_group::sw);
    if (u == uplinks.end() || u->members.size() != node_of.size()) continue;
    const auto under = [&](std::int32_t r) {
      return c.peer >= 0 ||
             (static_cast<std::size_t>(r) < u->members.size() && u->members[static_cast<std::size_t>(r)]);
    };
    std::set<std::int32_t> nodes_under, counted_nodes;
    for (std::size_t r = 0; r < node_of.size(); ++r)
      if (under(static_cast<std::int32_t>(r))) nodes_under.insert(node_of[r]);
    for (const auto& [k2, p] : by) {
      if (!p.counted || !is_part_kind(p.kind)) continue;
      const auto ranks = ranks_of(p, node_of, nics);
      if (!ranks.empty() && std::ranges::all_of(ranks, under)) counted_nodes.insert(p.node);
    }
    if (counted_nodes.empty() || counted_nodes.size() == nodes_under.size()) continue;
    c.counted = false;
    c.narrowed = true;
  }
}

}  // namespace

job_verdict fold(std::span<const judged_run> runs, std::span<const std::int32_t> node_of,
                 std::span<const switch_group> uplinks, std::span<const nic_group> nics) {
  job_verdict v;
  cause_map by = collect(runs, v);
  // a retest measures a pair alone, beside healthy controls: stronger evidence than a majority
  // of runs, where the noise of busy rounds can hide a cause in some of them
  const alone_evidence alone(runs);
  const alone_sides sides(alone);
  count_runs(by, v.runs_judged, alone, sides, node_of, nics);
  if (decide_by_model(by, runs, node_of, nics, v)) {
    narrow_uplinks_by_model(by, node_of, uplinks, nics);
  } else {
    narrow_nodes(by, alone, sides, runs, node_of, nics);
    narrow_uplinks(by, alone, runs, node_of, uplinks, nics);
    add_slow_alone(by, alone, runs, node_of, nics, through_counted(by, uplinks));
  }
  const through_counted through(by, uplinks);  // uplinks count from the runs alone
  fold_into_nodes(by);
  // a link that touches a counted rank or node is that cause's, named once (as the rank or node)
  const std::set<std::int32_t> culprits = culprits_of(by, node_of, nics);
  for (auto& [k, c] : by) {
    if (c.kind == outlier_kind::link &&
        (culprits.contains(c.rank) || culprits.contains(c.peer) || through(c.rank, c.peer)))
      c.counted = false;
    if (c.counted) v.status = c.kind == outlier_kind::failed ? health::failed : std::max(v.status, health::degraded);
    v.causes.push_back(c);
  }
  // bandwidth runs were asked for and none could be judged: the job says nothing about the fabric
  if (v.status == health::healthy && v.runs > 0 && v.runs_judged == 0) v.status = health::unjudged;
  std::stable_sort(v.causes.begin(), v.causes.end(), [](const folded_cause& a, const folded_cause& b) {
    return std::tuple(!a.counted, rank_of(a.kind), -static_cast<int>(a.runs.size())) <
           std::tuple(!b.counted, rank_of(b.kind), -static_cast<int>(b.runs.size()));
  });
  return v;
}

void add_config(job_verdict& v, std::vector<config_finding> findings) {
  if (findings.empty()) return;
  v.config = std::move(findings);
  if (v.status != health::failed) v.status = health::degraded;
}

}  // namespace rdmamesh::stats
