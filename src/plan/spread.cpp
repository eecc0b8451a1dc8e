#include "rdmamesh/plan/spread.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace rdmamesh::plan {
namespace {

// splitmix64: the same draws on every rank and every platform (std's distributions are
// implementation-defined, and the plan must be identical on every rank and across releases)
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t draw(std::uint64_t seed, std::uint64_t what, std::uint64_t which) {
  return mix(mix(mix(seed) ^ what) ^ static_cast<std::uint64_t>(which));
}

// The most members any one value of `block_of` holds.
std::uint32_t largest_block(const std::vector<std::uint32_t>& ranks, std::span<const std::int32_t> block_of) {
  std::map<std::int32_t, std::uint32_t> n;
  std::uint32_t most = 0;
  for (auto r : ranks) most = std::max(most, ++n[r < block_of.size() ? block_of[r] : -1]);
  return most;
}

std::uint32_t distinct(const std::vector<std::uint32_t>& ranks, std::span<const std::int32_t> block_of) {
  std::map<std::int32_t, int> n;
  for (auto r : ranks) ++n[r < block_of.size() ? block_of[r] : -1];
  return static_cast<std::uint32_t>(n.size());
}

struct rail_plan {
  std::vector<std::uint32_t> order;  // the rail's members in play order
  std::vector<std::uint32_t> offsets;
  spread_reach reach = spread_reach::leaves;
  std::uint32_t leaf_rounds = 0;  // rounds whose every pair leaves its leaf
};

// `count` of the sorted `from`, one from each of `count` equal strata of it: partners near and
// far, never one twice (all of them when there are no more)
std::vector<std::uint32_t> pick(const std::vector<std::uint32_t>& from, std::uint32_t count, std::uint64_t seed,
                                std::uint64_t salt) {
  const std::uint64_t w = from.size(), used = std::min<std::uint64_t>(count, w);
  std::vector<std::uint32_t> out;
  for (std::uint64_t j = 0; j < used; ++j) {
    const std::uint64_t begin = j * w / used, end = (j + 1) * w / used;
    out.push_back(from[begin + draw(seed, salt, j) % (end - begin)]);
  }
  return out;
}

rail_plan plan_rail(std::vector<std::uint32_t> ranks, std::int32_t rail, std::span<const std::int32_t> node_of,
                    std::span<const std::int32_t> leaf_of, std::uint32_t k, std::uint64_t seed) {
  const auto at = [](std::span<const std::int32_t> v, std::uint32_t r) { return r < v.size() ? v[r] : -1; };
  // leaves, and nodes within them, in a seeded order, each block's ranks together
  const auto key = [&](std::uint32_t r) {
    const auto leaf = at(leaf_of, r), node = at(node_of, r);
    return std::tuple(draw(seed, 1, static_cast<std::uint64_t>(leaf)), leaf,
                      draw(seed, 2, static_cast<std::uint64_t>(node)), node, r);
  };
  std::ranges::sort(ranks, {}, key);
  rail_plan p;
  const auto m = static_cast<std::uint32_t>(ranks.size());
  // an offset in [s, m - s] takes every rank out of its block when no block holds more than s
  const auto offsets_off = [&](std::span<const std::int32_t> block_of) {
    std::vector<std::uint32_t> out;
    const std::uint32_t s = largest_block(ranks, block_of);
    for (std::uint32_t d = s; d + s <= m; ++d) out.push_back(d);
    return out;
  };
  const auto off_leaf = distinct(ranks, leaf_of) >= 2 ? offsets_off(leaf_of) : std::vector<std::uint32_t>{};
  std::vector<std::uint32_t> off_node = offsets_off(node_of);
  if (off_node.empty()) {  // one node holds most of the rail: loopback pairs too
    p.reach = spread_reach::within_node;
    for (std::uint32_t d = 1; d < m; ++d) off_node.push_back(d);
  }
  // off the leaf where the fabric allows k of those; else every such offset, the rest off the node
  std::uint32_t salt = 3 + static_cast<std::uint32_t>(rail + 1) * 2;
  if (off_leaf.size() >= k) {
    p.offsets = pick(off_leaf, k, seed, salt);
  } else {
    p.offsets = off_leaf;
    std::erase_if(off_node, [&](std::uint32_t d) { return std::ranges::binary_search(off_leaf, d); });
    const auto more = pick(off_node, k - static_cast<std::uint32_t>(off_leaf.size()), seed, salt + 1);
    p.offsets.insert(p.offsets.end(), more.begin(), more.end());
    if (p.reach == spread_reach::leaves) p.reach = spread_reach::nodes;
  }
  p.leaf_rounds = std::min<std::uint32_t>(static_cast<std::uint32_t>(off_leaf.size()), k);
  p.order = std::move(ranks);
  return p;
}

}  // namespace

const char* to_string(spread_reach r) {
  switch (r) {
    case spread_reach::leaves: return "on other leaves";
    case spread_reach::nodes: return "on other nodes";
    case spread_reach::within_node: return "within its node (one node holds most of its rail)";
  }
  return "?";
}

spread_plan spread_rounds(std::span<const std::uint32_t> members, std::span<const std::int32_t> node_of,
                          std::span<const std::int32_t> rail_of, std::span<const std::int32_t> leaf_of, std::uint32_t k,
                          std::uint64_t seed) {
  std::map<std::int32_t, std::vector<std::uint32_t>> by_rail;
  for (auto r : members) by_rail[r < rail_of.size() ? rail_of[r] : -1].push_back(r);
  spread_plan out;
  bool any = false;
  for (auto& [rail, ranks] : by_rail) {
    if (ranks.size() < 2) {
      out.alone.insert(out.alone.end(), ranks.begin(), ranks.end());
      continue;
    }
    const auto p = plan_rail(std::move(ranks), rail, node_of, leaf_of, k, seed);
    out.partners = any ? std::min<std::uint32_t>(out.partners, static_cast<std::uint32_t>(p.offsets.size()))
                       : static_cast<std::uint32_t>(p.offsets.size());
    out.reach = std::max(out.reach, p.reach);
    out.leaf_rounds = any ? std::min(out.leaf_rounds, p.leaf_rounds) : p.leaf_rounds;
    any = true;
    if (out.rounds.size() < p.offsets.size()) out.rounds.resize(p.offsets.size());
    const std::size_t m = p.order.size();
    for (std::size_t j = 0; j < p.offsets.size(); ++j) {
      for (std::size_t i = 0; i < m; ++i) out.rounds[j].emplace_back(p.order[i], p.order[(i + p.offsets[j]) % m]);
    }
  }
  std::ranges::sort(out.alone);
  return out;
}

std::string describe(const spread_plan& p, std::uint64_t seed) {
  std::string s = fmt::format("{} round(s), seed {}: every rank meets {} partner(s) each way, {}", p.rounds.size(),
                              seed, p.partners, to_string(p.reach));
  if (p.reach == spread_reach::nodes && p.leaf_rounds > 0) {
    s += fmt::format(" (on other leaves in {} of the rounds)", p.leaf_rounds);
  }
  if (!p.alone.empty()) {
    s += fmt::format("; alone on its rail, not measured: rank(s) {}", fmt::join(p.alone, ","));
  }
  return s;
}

}  // namespace rdmamesh::plan
