// --pattern spread: a check whose length does not grow with the fabric. K rounds; in each, every
// rank sends to one partner and receives from one (so nothing contends inside a NIC and a pair's
// rate is its ports'), and over the K rounds each rank meets K different partners each way,
// spread over the fabric: on other leaves where --topology names two or more (every leaf's
// uplink then carries traffic up and down in every round), else on other nodes. Ranks pair
// with their own rail only (a rail-optimized fabric may not join rails at all).
//
// A round is a shift by offset d over a rail's ranks in a seeded order that keeps each leaf's
// (and each node's) ranks together: an offset at least the largest block and at most the rest
// lands every rank outside its own block. The K offsets are drawn one from each of K equal
// strata of the valid ones, so partners lie near and far. Where fewer than K offsets leave every
// leaf (two equal leaves allow one), those rounds come first and the rest leave the node. A pure
// function of the ranks' places
// and the seed: every rank computes the same plan, and a rerun with the seed repeats it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rdmamesh::plan {

using pair_rounds = std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>>;

// How far apart the partners of the plan's pairs are, for the header and the file.
enum class spread_reach : std::uint8_t { leaves, nodes, within_node };
const char* to_string(spread_reach r);

struct spread_plan {
  pair_rounds rounds;                         // ordered (source, destination) pairs per round
  std::uint32_t partners = 0;                 // the fewest partners any member meets each way
  spread_reach reach = spread_reach::leaves;  // the nearest any of its pairs reaches
  std::uint32_t leaf_rounds = 0;              // rounds whose every pair leaves its leaf
  std::vector<std::uint32_t> alone;           // members with no partner (alone on their rail)
};

// `members`: the ranks that play (all, or a --scaling step's); `node_of`, `rail_of`, `leaf_of`
// by rank (-1 leaf: unknown). `k`: the rounds asked for (fewer when the rail has fewer valid
// offsets: then every one of them).
spread_plan spread_rounds(std::span<const std::uint32_t> members, std::span<const std::int32_t> node_of,
                          std::span<const std::int32_t> rail_of, std::span<const std::int32_t> leaf_of, std::uint32_t k,
                          std::uint64_t seed);

// "8 rounds, seed 1: every rank meets 8 partners each way, on other leaves"
std::string describe(const spread_plan& p, std::uint64_t seed);

}  // namespace rdmamesh::plan
