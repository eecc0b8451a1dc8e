#include "rdmamesh/stats/setup.hpp"

#include <algorithm>
#include <map>

namespace rdmamesh::stats {
namespace {

phase_summary summarize(const std::vector<double>& v) {
  phase_summary s;
  if (v.empty()) return s;
  const auto it = std::max_element(v.begin(), v.end());
  s.max = *it;
  s.slowest = static_cast<std::uint32_t>(it - v.begin());
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t m = sorted.size() / 2;
  s.median = sorted.size() % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
  return s;
}

}  // namespace

setup_summary summarize_setup(std::span<const setup_times> per_rank) {
  setup_summary out;
  for (std::size_t p = 0; p < setup_phases; ++p) {
    std::vector<double> v;
    for (const auto& r : per_rank) v.push_back(r[p]);
    out.phases[p] = summarize(v);
  }
  std::vector<double> totals;
  // the barrier is waiting, not work: the slowest rank is the one with the most work
  for (const auto& r : per_rank) {
    double t = 0;
    for (std::size_t p = 0; p + 1 < setup_phases; ++p) t += r[p];
    totals.push_back(t);
  }
  out.total = summarize(totals);
  return out;
}

resource_peaks peak_resources(std::span<const setup_resources> per_rank, std::span<const std::int32_t> node_of) {
  resource_peaks out;
  std::map<std::int32_t, setup_resources> nodes;
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    const setup_resources& x = per_rank[r];
    out.rank.qps = std::max(out.rank.qps, x.qps);
    out.rank.cq_entries = std::max(out.rank.cq_entries, x.cq_entries);
    out.rank.registered_bytes = std::max(out.rank.registered_bytes, x.registered_bytes);
    setup_resources& n = nodes[r < node_of.size() ? node_of[r] : 0];
    n.qps += x.qps;
    n.cq_entries += x.cq_entries;
    n.registered_bytes += x.registered_bytes;
  }
  for (const auto& [node, x] : nodes) {
    out.node.qps = std::max(out.node.qps, x.qps);
    out.node.cq_entries = std::max(out.node.cq_entries, x.cq_entries);
    out.node.registered_bytes = std::max(out.node.registered_bytes, x.registered_bytes);
  }
  return out;
}

}  // namespace rdmamesh::stats
