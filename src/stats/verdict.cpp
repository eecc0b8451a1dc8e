// Folding the runs' causes into the job's verdict.
#include "rdmamesh/stats/verdict.hpp"
#include "rdmamesh/stats/median.hpp"

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
    case outlier_kind::node: return 2;
    case outlier_kind::rank: return 3;
    case outlier_kind::link: return 4;
  }
  return 5;
}

}  // namespace

const char* to_string(health h) {
  switch (h) {
    case health::healthy: return "healthy";
    case health::degraded: return "degraded";
    case health::failed: return "failed";
  }
  return "?";
}

job_verdict fold(std::span<const judged_run> runs) {
  job_verdict v;
  using key = std::tuple<outlier_kind, outlier_basis, std::int32_t, std::int32_t, std::int32_t>;
  std::map<key, folded_cause> by;
  std::set<std::pair<std::int32_t, std::int32_t>> confirmed, cleared;
  for (const auto& run : runs) {
    confirmed.insert(run.confirmed.begin(), run.confirmed.end());
    cleared.insert(run.cleared.begin(), run.cleared.end());
    ++v.runs;
    if (!run.report) continue;
    v.runs_judged += run.judged;
    for (const auto& o : run.report->found) {
      auto [it, fresh] = by.try_emplace(key{o.kind, o.basis, o.node, o.rank, o.peer});
      folded_cause& c = it->second;
      if (fresh) {
        c = {o.kind, o.basis, o.node, o.rank, o.peer, {}, {}, nan, nan, nan, nan, 0, 0, false};
      }
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
  // a retest measures a pair alone, beside healthy controls: stronger evidence than a majority
  // of runs, where the noise of busy rounds can hide a cause in some of them
  const auto sends_in = [](const auto& pairs, std::int32_t rank) {
    return std::ranges::count_if(pairs, [&](const auto& p) { return p.first == rank; });
  };
  const auto confirmed_sends = [&](std::int32_t rank) { return sends_in(confirmed, rank); };
  // a rank whose sends the retest measured alone and found fine (two or more, none still slow)
  // was slowed by its round, not by its NIC: contention, or a CPU it shares with busy ranks
  const auto cleared_rank = [&](std::int32_t rank) {
    return confirmed_sends(rank) == 0 && sends_in(cleared, rank) >= 2;
  };
  std::set<std::int32_t> counted_ranks;
  for (auto& [k, c] : by) {
    // a failed pair needs no majority: a completion error is not noise
    const bool most = 2 * c.runs.size() > std::max<std::uint32_t>(v.runs_judged, 1);
    // one pair slow in one run is a suspect: scheduling alone makes those. It counts when a
    // retest finds it still slow alone, or when most of two or more runs name it. A rank counts
    // too when the retest found two or more of its sends still slow alone, and never when it
    // found two or more of them fine alone and none slow.
    const bool suspect = is_suspect(c.kind, c.basis);
    c.counted = c.kind == outlier_kind::failed ||
                (suspect ? confirmed.contains({c.rank, c.peer}) || (most && c.runs.size() >= 2) : most) ||
                (c.kind == outlier_kind::rank && confirmed_sends(c.rank) >= 2);
    if (c.kind == outlier_kind::rank && cleared_rank(c.rank)) c.counted = false;
    if (c.counted && c.kind == outlier_kind::rank) counted_ranks.insert(c.rank);
  }
  for (auto& [k, c] : by) {
    // a link from a counted rank is that rank's cause, named once (as the rank)
    if (c.kind == outlier_kind::link && counted_ranks.contains(c.rank)) c.counted = false;
    if (c.counted) v.status = c.kind == outlier_kind::failed ? health::failed : std::max(v.status, health::degraded);
    v.causes.push_back(c);
  }
  std::stable_sort(v.causes.begin(), v.causes.end(), [](const folded_cause& a, const folded_cause& b) {
    return std::tuple(!a.counted, rank_of(a.kind), -static_cast<int>(a.runs.size())) <
           std::tuple(!b.counted, rank_of(b.kind), -static_cast<int>(b.runs.size()));
  });
  return v;
}

}  // namespace rdmamesh::stats
