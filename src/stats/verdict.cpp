// Folding the runs' causes into the job's verdict.
#include "rdmamesh/stats/verdict.hpp"
#include "rdmamesh/stats/median.hpp"
#include "rdmamesh/stats/model.hpp"

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

// The links a retest counted: their pairs alone below --slow beyond chance at the job's level
// (one pair in a run is one draw of its two ends; alone, beside the controls, it is a measurement).
std::set<pair_key> lone_pairs(std::span<const judged_run> runs) {
  std::set<pair_key> out;
  for (const auto& run : runs)
    for (const auto& a : run.alone)
      if (a.counted) out.insert({static_cast<std::int32_t>(a.src), static_cast<std::int32_t>(a.dst)});
  return out;
}

// a run among those that showed the cause, once
void add_run(folded_cause& c, std::uint32_t index, const std::string& label) {
  if (std::ranges::find(c.runs, index) != c.runs.end()) return;
  c.runs.push_back(index);
  c.labels.push_back(label);
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
    for (const auto r : g.members) out.push_back(static_cast<std::int32_t>(r));
  }
  return out;
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

bool is_part_kind(outlier_kind k) {
  return k == outlier_kind::rank || k == outlier_kind::nic || k == outlier_kind::node;
}

// A NIC, node or uplink the runs' noise names: what the runs pooled decide. Not a rank: its pairs
// are one CPU's draw in each run, and its pinning outlasts the run, so its runs are no independent
// draws of its network either (a suspect, as in one run).
bool is_pooled_kind(outlier_kind k, outlier_basis b) {
  return b == outlier_basis::noise && (k == outlier_kind::nic || k == outlier_kind::node || k == outlier_kind::uplink);
}

// Several runs are evidence for one fit: their fits pooled (pool_fits), every part tested once as a
// run's are, at the runs' level; the parts that stand, keyed as the runs name them. Empty where
// fewer than two runs were fit (one run is its own pool: what it named).
struct run_pool {
  std::vector<const judged_run*> runs;
  std::vector<model_cause> parts;
  std::vector<std::uint8_t> standing;  // by part
  std::set<cause_key> stands;
};

run_pool pool_runs(std::span<const judged_run> runs, std::span<const std::int32_t> node_of,
                   std::span<const nic_group> nics, std::span<const switch_group> uplinks) {
  run_pool pool;
  std::vector<const effects_fit*> fits;
  for (const auto& run : runs) {
    if (!run.report || !run.report->fit) continue;
    pool.runs.push_back(&run);
    fits.push_back(run.report->fit.get());
  }
  if (fits.size() < 2) {
    pool.runs.clear();
    return pool;
  }
  std::vector<std::int32_t> rail_of(fits.front()->send.size(), -1);
  for (const auto& g : nics)
    for (const auto r : g.members)
      if (r < rail_of.size()) rail_of[r] = g.rail;
  const auto& first = *pool.runs.front()->report;
  pool.parts =
      model_parts(pool_fits(fits), node_of, rail_of, {.alpha = first.alpha, .slow_pct = first.slow_pct}, uplinks);
  pool.standing.assign(pool.parts.size(), 0);
  for (const auto i : standing_parts(pool.parts, first.alpha, first.slow_pct)) {
    pool.standing[i] = 1;
    const outlier o = as_outlier(pool.parts[i], outlier_basis::noise, uplinks);
    pool.stands.insert({o.kind, o.basis, o.node, o.rank, o.peer});
  }
  return pool;
}

// Each pooled kind of cause with its figure in the pool; the parts of those kinds that stand and
// that no run named, causes of their own (`by_pool`), but where a retest decides NICs and nodes.
void add_pool(cause_map& by, const run_pool& pool, std::span<const switch_group> uplinks, bool retested) {
  if (pool.runs.empty()) return;
  std::map<cause_key, std::tuple<bool, bool, double>> best;
  for (std::size_t i = 0; i < pool.parts.size(); ++i) {
    const auto& part = pool.parts[i];
    const outlier o = as_outlier(part, outlier_basis::noise, uplinks);
    const cause_key key{o.kind, o.basis, o.node, o.rank, o.peer};
    auto it = by.find(key);
    if (it == by.end()) {
      if (!pool.stands.contains(key) || !is_pooled_kind(o.kind, o.basis) || (retested && is_part_kind(o.kind)))
        continue;
      folded_cause c{o.kind, o.basis, o.node, o.rank, o.peer, {}, {}, nan, nan, nan, nan, 0, 0, false};
      c.by_pool = true;
      for (const auto* run : pool.runs) add_run(c, run->index, run->label);
      it = by.emplace(key, std::move(c)).first;
    }
    folded_cause& c = it->second;
    if (!is_pooled_kind(c.kind, c.basis)) continue;
    if (c.by_pool && pool.standing[i])
      widen(100 * std::exp(part.effect), part.sends ? c.send_lo : c.recv_lo, part.sends ? c.send_hi : c.recv_hi);
    // its figure: the side the pool names, else a side the runs named, else the smaller p
    const auto order = std::tuple{!pool.standing[i], std::isnan(part.sends ? c.send_lo : c.recv_lo), part.p};
    const auto [at, fresh] = best.try_emplace(key, order);
    if (!fresh && !(order < at->second)) continue;
    at->second = order;
    c.pool_runs = static_cast<std::uint32_t>(pool.runs.size());
    c.pool_pct = 100 * std::exp(part.effect);
    c.pool_p = part.p;
  }
}

// Which causes the runs named count, on the runs' evidence: a NIC, node or uplink where the runs
// pooled name it (with one fitted run, where it named it); others where most of the judged runs
// named them; a failed pair needs no majority (a completion error is not noise). A suspect (one
// pair, or one rank one run named: its pairs share one CPU and one process, so they are one draw
// however many there are) needs more: its link counted alone by the retest (lone_pairs), or most
// of two or more runs. A retested run's rank, NIC and node causes are the model's to decide
// (decide_by_model).
void count_runs(cause_map& by, std::uint32_t runs_judged, const std::set<pair_key>& lone, const run_pool& pool) {
  for (auto& [k, c] : by) {
    if (is_pooled_kind(c.kind, c.basis) && !pool.runs.empty()) {
      c.counted = pool.stands.contains(k);
      continue;
    }
    const bool most =
        is_pooled_kind(c.kind, c.basis) ? !c.runs.empty() : 2 * c.runs.size() > std::max<std::uint32_t>(runs_judged, 1);
    const bool one_run_rank = c.kind == outlier_kind::rank && c.basis == outlier_basis::noise && c.runs.size() < 2;
    const bool suspect = is_suspect(c.kind, c.basis) || one_run_rank;
    c.counted = c.kind == outlier_kind::failed ||
                (suspect ? lone.contains(pair_key{c.rank, c.peer}) || (most && c.runs.size() >= 2) : most);
  }
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

void fill_alone(folded_cause& c, const lasting_effect& l) {
  c.alone_pct = 100 * std::exp(l.effect);
  c.alone_lo = 100 * std::exp(l.lo);
  c.alone_hi = 100 * std::exp(l.hi);
  c.alone_p = l.p_slow;
  c.alone_pairs = static_cast<std::uint32_t>(l.pairs);
}

// Its host's share of a CPU alone, on the pairs it held back, and their controls' (its why)
void fill_held(folded_cause& c, const judged_run& run, const model_cause& part) {
  std::vector<double> cpu, controls;
  for (const auto& a : run.alone) {
    if (!a.starved || !part.holds(part.sends ? a.src : a.dst)) continue;
    cpu.push_back(a.cpu_share);
    controls.push_back(a.controls_cpu_share);
  }
  if (cpu.empty()) return;
  c.held_cpu = median_of(cpu);
  c.held_controls_cpu = median_of(controls);
}

// The same replaceable part under another basis (an uplink's `peer`, the switch the other way, is
// not part of its identity; a NIC's rail is).
bool same_part(const folded_cause& a, const folded_cause& b) {
  return a.kind == b.kind && a.node == b.node && a.rank == b.rank &&
         (a.kind != outlier_kind::nic || a.peer == b.peer) && a.basis != b.basis;
}

// The parts that stand and that no run named: causes of their own, basis retest, with their
// pairs alone read as the part's test reads them (below --slow % of their controls, or not): the
// pairs' own lines judge links by other bounds, and a part's words must agree with its count.
void add_counted_alone(cause_map& by, std::span<const retested_part> parts,
                       const std::set<const lasting_effect*>& named) {
  for (const auto& [l, run] : parts) {
    if (!l->stands() || named.contains(l)) continue;
    const auto& part = l->part;
    folded_cause c;
    std::tie(c.kind, c.basis, c.node, c.counted) = std::tuple{part.kind, outlier_basis::retest, part.node, true};
    c.rank = part.kind == outlier_kind::rank ? part.rank : -1;
    c.peer = part.kind == outlier_kind::nic ? part.rail : -1;
    c.send_lo = c.send_hi = c.recv_lo = c.recv_hi = nan;
    add_run(c, run->index, run->label);
    const double pct = 100 * std::exp(l->effect);
    (part.sends ? c.send_lo : c.recv_lo) = pct;
    (part.sends ? c.send_hi : c.recv_hi) = pct;
    c.pairs = static_cast<std::uint32_t>(l->below);
    c.fine = static_cast<std::uint32_t>(l->pairs - l->below);
    fill_alone(c, *l);
    // a part the runs named that counts already is one cause: its other side alone is read against
    // controls, not the run's median, so it adds no figure beside the run's
    if (std::ranges::any_of(by, [&](const auto& e) { return e.second.counted && same_part(e.second, c); })) continue;
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
// cleared where every one was cleared, `explained` where one was another part's evidence, undecided otherwise (held
// back by its host, or its interval across --slow). Parts that stand and that no run named are added, basis retest.
// False: nothing was retested, and the rules of the runs alone hold.
bool decide_by_model(cause_map& by, std::span<const judged_run> runs, std::span<const std::int32_t> node_of,
                     std::span<const nic_group> nics, std::span<const switch_group> uplinks, job_verdict& v) {
  std::vector<retested_part> parts;
  bool any = false;
  for (const auto& run : runs) {
    if (!run.retested) continue;
    any = true;
    v.false_alarm = std::max(v.false_alarm, run.alpha * run.alpha_runs);
    v.false_alarm_runs = std::max(v.false_alarm_runs, run.alpha_runs);
    v.parts_retested += run.parts.size();
    for (const auto& l : run.parts) parts.push_back({&l, &run});
  }
  if (!any) return false;
  std::set<const lasting_effect*> named;
  for (auto& entry : by) {
    folded_cause& c = entry.second;  // a name, not a binding: the lambdas below capture it
    if (c.basis != outlier_basis::noise || !(is_part_kind(c.kind) || c.kind == outlier_kind::uplink)) continue;
    const auto retested_run = [&](const judged_run* r) { return std::ranges::find(c.runs, r->index) != c.runs.end(); };
    if (!std::ranges::any_of(runs, [&](const judged_run& r) { return r.retested && retested_run(&r); })) continue;
    std::vector<std::uint32_t> members;
    for (auto r : ranks_of(c, node_of, nics))
      if (r >= 0) members.push_back(static_cast<std::uint32_t>(r));
    if (const auto u = std::ranges::find(uplinks, c.node, &switch_group::sw);
        c.kind == outlier_kind::uplink && u != uplinks.end())
      for (std::uint32_t r = 0; r < u->members.size(); ++r)
        if (u->members[r]) members.push_back(r);
    std::ranges::sort(members);
    std::vector<retested_part> mine;
    for (const auto& p : parts) {
      const bool side = p.l->part.sends ? !std::isnan(c.send_lo) : !std::isnan(c.recv_lo);
      if (side && p.l->part.members == members && retested_run(p.run)) mine.push_back(p);
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
    } else if (any_of([](const lasting_effect& l) { return l.explained; })) {
      c.explained = true;
    } else {
      c.undecided = true;
      for (const auto& p : mine)
        if (p.l->held_back) fill_held(c, *p.run, p.l->part);
    }
  }
  add_counted_alone(by, parts, named);
  return true;
}

}  // namespace

job_verdict fold(std::span<const judged_run> runs, std::span<const std::int32_t> node_of,
                 std::span<const switch_group> uplinks, std::span<const nic_group> nics) {
  job_verdict v;
  cause_map by = collect(runs, v);
  const run_pool pool = pool_runs(runs, node_of, nics, uplinks);
  add_pool(by, pool, uplinks, std::ranges::any_of(runs, &judged_run::retested));
  count_runs(by, v.runs_judged, lone_pairs(runs), pool);
  // a retest measures a part alone, beside healthy controls: stronger evidence than a majority
  // of runs, where the noise of busy rounds can hide a cause in some of them
  decide_by_model(by, runs, node_of, nics, uplinks, v);
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
