// Outlier classification: failed pairs first, then slow ranks (most of a row or a column),
// then whole nodes of slow ranks, and what is left as single links.
#include "rdmamesh/stats/outliers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace rdmamesh::stats {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

double median_of(std::vector<double> v) {
  if (v.empty()) return nan;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + hi) / 2;
}

}  // namespace

const char* to_string(outlier_kind k) {
  switch (k) {
    case outlier_kind::node: return "node";
    case outlier_kind::rank: return "rank";
    case outlier_kind::link: return "link";
    case outlier_kind::failed: return "failed";
  }
  return "?";
}

outlier_report find_outliers(const square<double>& bw, const square<std::uint8_t>& flags,
                             const square<std::int32_t>& round, std::span<const std::int32_t> node_of,
                             double slow_pct) {
  const std::uint32_t n = bw.n;
  outlier_report out;
  auto measured = [&](std::uint32_t a, std::uint32_t b) {
    return a != b && round.at(a, b) >= 0 && flags.at(a, b) == 0 && std::isfinite(bw.at(a, b));
  };
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = 0; b < n; ++b) {
      if (a != b && round.at(a, b) >= 0 && flags.at(a, b) != 0) {
        out.found.push_back({.kind = outlier_kind::failed,
                             .node = -1,
                             .rank = static_cast<std::int32_t>(a),
                             .peer = static_cast<std::int32_t>(b),
                             .send_pct = nan,
                             .recv_pct = nan,
                             .pairs = 1});
      }
    }
  }
  std::vector<double> all;
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = 0; b < n; ++b) {
      if (measured(a, b)) all.push_back(bw.at(a, b));
    }
  }
  out.median = median_of(all);
  if (!(out.median > 0)) return out;
  const double limit = out.median * slow_pct / 100;
  auto slow = [&](std::uint32_t a, std::uint32_t b) { return measured(a, b) && bw.at(a, b) < limit; };

  // A side of a rank (its sends, its receives) is slow when more than half of its measured
  // pairs, and at least two, are slow: the rank is then the smaller cause than its links.
  // Returns the side's median pair in % of the run's, NaN when the side is not slow.
  auto side = [&](std::uint32_t r, bool sends) {
    std::vector<double> v;
    std::size_t slow_pairs = 0;
    for (std::uint32_t p = 0; p < n; ++p) {
      const std::uint32_t a = sends ? r : p, b = sends ? p : r;
      if (!measured(a, b)) continue;
      v.push_back(bw.at(a, b) / out.median * 100);
      if (slow(a, b)) ++slow_pairs;
    }
    return slow_pairs >= 2 && slow_pairs * 2 > v.size() ? median_of(v) : nan;
  };
  std::vector<outlier> ranks;
  std::vector<bool> explained(std::size_t{n} * n, false);
  for (std::uint32_t r = 0; r < n; ++r) {
    const double s = side(r, true), v = side(r, false);
    if (std::isnan(s) && std::isnan(v)) continue;
    outlier o{.kind = outlier_kind::rank,
              .node = r < node_of.size() ? node_of[r] : -1,
              .rank = static_cast<std::int32_t>(r),
              .peer = -1,
              .send_pct = s,
              .recv_pct = v,
              .pairs = 0};
    for (std::uint32_t p = 0; p < n; ++p) {
      for (const auto& [a, b] : {std::pair{r, p}, std::pair{p, r}}) {
        const bool own_side = (a == r && !std::isnan(s)) || (b == r && !std::isnan(v));
        if (own_side && slow(a, b) && !explained[std::size_t{a} * n + b]) {
          explained[std::size_t{a} * n + b] = true;
          ++o.pairs;
        }
      }
    }
    ranks.push_back(o);
  }

  // every rank of a node slow (and more than one node): the node is the cause
  std::map<std::int32_t, std::uint32_t> ranks_on, slow_on;
  for (std::uint32_t r = 0; r < n && r < node_of.size(); ++r) ++ranks_on[node_of[r]];
  for (const auto& o : ranks) ++slow_on[o.node];
  for (const auto& [node, count] : slow_on) {
    if (ranks_on.size() < 2 || count != ranks_on[node] || count < 2) continue;
    outlier o{
        .kind = outlier_kind::node, .node = node, .rank = -1, .peer = -1, .send_pct = 0, .recv_pct = 0, .pairs = 0};
    std::vector<double> s, v;
    for (const auto& r : ranks) {
      if (r.node != node) continue;
      s.push_back(r.send_pct);
      v.push_back(r.recv_pct);
      o.pairs += r.pairs;
    }
    o.send_pct = median_of(s);
    o.recv_pct = median_of(v);
    out.found.push_back(o);
  }
  for (const auto& r : ranks) {
    if (!slow_on.count(r.node) || ranks_on.size() < 2 || slow_on[r.node] != ranks_on[r.node] || slow_on[r.node] < 2) {
      out.found.push_back(r);
    }
  }
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = 0; b < n; ++b) {
      if (!slow(a, b) || explained[std::size_t{a} * n + b]) continue;
      const double pct = bw.at(a, b) / out.median * 100;
      out.found.push_back({.kind = outlier_kind::link,
                           .node = -1,
                           .rank = static_cast<std::int32_t>(a),
                           .peer = static_cast<std::int32_t>(b),
                           .send_pct = pct,
                           .recv_pct = nan,
                           .pairs = 1});
    }
  }
  return out;
}

}  // namespace rdmamesh::stats
