#include "rdmamesh/stats/pair_class.hpp"

#include "rdmamesh/stats/outliers.hpp"

#include <map>
#include <set>
#include <utility>

namespace rdmamesh::stats {

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

pair_classes::pair_classes(std::uint32_t n, std::span<const std::int32_t> node_of,
                           std::span<const switch_group> uplinks, std::span<const nic_group> nics,
                           std::span<const std::int32_t> cpu_group)
    : node_(node_of.begin(), node_of.end()), rail_(n, -1), cpu_group_(cpu_group.begin(), cpu_group.end()), over_(n) {
  for (const auto& g : nics)
    for (const auto r : g.members)
      if (r < n) rail_[r] = g.rail;
  std::uint32_t k = 0;
  for (const auto& u : uplinks) {
    if (u.members.size() != n) continue;
    for (std::uint32_t r = 0; r < n; ++r)
      if (u.members[r]) over_[r].push_back(k);
    ++k;
  }
}

int pair_classes::operator()(std::uint32_t a, std::uint32_t b) const {
  int c = across_nodes(node_, a, b) ? 1 : 0;
  if (c > 0) each_crossed(over_[a], over_[b], [&](std::uint32_t, bool) { ++c; });
  const bool railed = a < rail_.size() && b < rail_.size() && rail_[a] >= 0 && rail_[b] >= 0;
  return c + (railed && rail_[a] != rail_[b] ? rails_key : 0);
}

bool pair_classes::one_cpu(std::uint32_t a, std::uint32_t b) const {
  return a < cpu_group_.size() && b < cpu_group_.size() && cpu_group_[a] >= 0 && cpu_group_[a] == cpu_group_[b];
}

int pair_classes::path(std::uint32_t a, std::uint32_t b, bool with_uplinks, bool which_cpu) const {
  // FNV-1a over the class and each uplink crossed with its direction: a key, not a count
  std::uint32_t h = 2166136261U;
  const auto mix = [&](std::uint32_t x) {
    h ^= x;
    h *= 16777619U;
  };
  mix(static_cast<std::uint32_t>((*this)(a, b)));
  if (with_uplinks) each_crossed(over_[a], over_[b], [&](std::uint32_t i, bool up) { mix(2 * i + (up ? 1 : 0)); });
  // where both ends are pinned to CPUs they share with other ranks of their kernel: alone, a pair
  // whose two ends share one runs on one core's time, at a speed that depends on which core, and
  // a pair between two of them at a speed that depends on which two and which way (a kernel does
  // not spread its network work, nor its other work, evenly over its CPUs). Mixed in only there,
  // so that every other pair keeps its key
  const bool pinned = a < cpu_group_.size() && b < cpu_group_.size() && cpu_group_[a] >= 0 && cpu_group_[b] >= 0;
  if (pinned && cpu_group_[a] == cpu_group_[b]) {
    mix(0x40000000U);
    if (which_cpu) mix(static_cast<std::uint32_t>(cpu_group_[a]));
  } else if (pinned) {
    mix(0x20000000U);
    mix(static_cast<std::uint32_t>(cpu_group_[a]));
    mix(static_cast<std::uint32_t>(cpu_group_[b]));
  }
  return static_cast<int>(h & 0x7fffffffU);
}

}  // namespace rdmamesh::stats
