#include "rdmamesh/stats/pair_class.hpp"

#include "rdmamesh/stats/outliers.hpp"

namespace rdmamesh::stats {

pair_classes::pair_classes(std::uint32_t n, std::span<const std::int32_t> node_of,
                           std::span<const switch_group> uplinks, std::span<const nic_group> nics)
    : node_(node_of.begin(), node_of.end()), rail_(n, -1) {
  for (const auto& g : nics)
    for (std::uint32_t r = 0; r < n && r < g.members.size(); ++r)
      if (g.members[r]) rail_[r] = g.rail;
  for (const auto& u : uplinks)
    if (u.members.size() == n) under_.push_back(u.members);
}

int pair_classes::operator()(std::uint32_t a, std::uint32_t b) const {
  int c = across_nodes(node_, a, b) ? 1 : 0;
  for (const auto& u : under_) c += c > 0 && u[a] != u[b];
  const bool railed = a < rail_.size() && b < rail_.size() && rail_[a] >= 0 && rail_[b] >= 0;
  return c + (railed && rail_[a] != rail_[b] ? rails_key : 0);
}

int pair_classes::path(std::uint32_t a, std::uint32_t b) const {
  // FNV-1a over the class and each uplink crossed with its direction: a key, not a count
  std::uint32_t h = 2166136261U;
  const auto mix = [&](std::uint32_t x) {
    h ^= x;
    h *= 16777619U;
  };
  mix(static_cast<std::uint32_t>((*this)(a, b)));
  for (std::uint32_t i = 0; i < under_.size(); ++i)
    if (under_[i][a] != under_[i][b]) mix(2 * i + (under_[i][a] ? 1 : 0));
  return static_cast<int>(h & 0x7fffffffU);
}

}  // namespace rdmamesh::stats
