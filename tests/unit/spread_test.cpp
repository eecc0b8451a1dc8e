// --pattern spread: in every round each rank sends to one partner and receives from one, on its
// own rail, off its leaf (or node); over the rounds it meets as many different partners each way
// as there are rounds; every leaf's uplink carries traffic both ways in every round; the number
// of rounds is the user's, whatever the fabric's size; and the plan is the seed's alone.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/plan/spread.hpp"
#include "tally.hpp"

using namespace rdmamesh;

namespace {

// ranks by node, local ranks spread over the rails, nodes in equal blocks under the leaves
struct spread_shape {
  std::vector<std::uint32_t> members;
  std::vector<std::int32_t> node_of, rail_of, leaf_of;
};

spread_shape spread_fabric(std::uint32_t nodes, std::uint32_t per_node, std::uint32_t rails, std::uint32_t leaves) {
  spread_shape f;
  for (std::uint32_t r = 0; r < nodes * per_node; ++r) {
    const std::uint32_t node = r / per_node;
    f.members.push_back(r);
    f.node_of.push_back(static_cast<std::int32_t>(node));
    f.rail_of.push_back(static_cast<std::int32_t>(r % per_node % rails));
    f.leaf_of.push_back(leaves ? static_cast<std::int32_t>(node * leaves / nodes) : -1);
  }
  return f;
}

plan::spread_plan spread_plan_of(const spread_shape& f, std::uint32_t k, std::uint64_t seed = 1) {
  return plan::spread_rounds(f.members, f.node_of, f.rail_of, f.leaf_of, k, seed);
}

// Checks every property a user relies on; returns each member's partners each way.
void check_plan(const plan::spread_plan& p, const spread_shape& f) {
  const std::size_t n = f.node_of.size();
  std::vector<std::vector<std::uint32_t>> to(n), from(n);
  test::tally pairs, ranks;
  for (const auto& round : p.rounds) {
    std::vector<int> sends(n, 0), receives(n, 0);
    std::set<std::int32_t> up, down;  // leaves something left, leaves something reached
    for (const auto& [a, b] : round) {
      if (!pairs.expect(a < n && b < n && a != b, "{} -> {}: not two distinct ranks of {}", a, b, n)) continue;
      pairs.expect(f.rail_of[a] == f.rail_of[b], "{} -> {}: crosses rails", a, b);
      if (p.reach == plan::spread_reach::leaves) pairs.expect(f.leaf_of[a] != f.leaf_of[b], "{} -> {}: one leaf", a, b);
      if (p.reach == plan::spread_reach::nodes) pairs.expect(f.node_of[a] != f.node_of[b], "{} -> {}: one node", a, b);
      ++sends[a];
      ++receives[b];
      to[a].push_back(b);
      from[b].push_back(a);
      if (f.leaf_of[a] != f.leaf_of[b]) {
        up.insert(f.leaf_of[a]);
        down.insert(f.leaf_of[b]);
      }
    }
    // one flow each way per rank: nothing contends inside a NIC
    for (std::size_t r = 0; r < n; ++r) {
      ranks.expect(sends[r] <= 1 && sends[r] == receives[r], "rank {}: {} send(s), {} receive(s) in a round", r,
                   sends[r], receives[r]);
    }
    if (p.reach == plan::spread_reach::leaves) {
      const std::set<std::int32_t> leaves(f.leaf_of.begin(), f.leaf_of.end());
      CHECK(up == leaves);
      CHECK(down == leaves);
    }
  }
  CHECK_TALLY(pairs);
  for (auto r : f.members) {
    if (std::ranges::find(p.alone, r) != p.alone.end()) continue;
    for (auto* side : {&to[r], &from[r]}) {
      std::set<std::uint32_t> distinct(side->begin(), side->end());
      // a new partner every round
      ranks.expect(distinct.size() == side->size() && side->size() >= p.partners,
                   "rank {}: {} partner(s) one way, {} distinct, {} asked", r, side->size(), distinct.size(),
                   p.partners);
    }
  }
  CHECK_TALLY(ranks);
}

}  // namespace

TEST_CASE("spread: 3 nodes x 2 ranks without a tree: every off-node partner there is, each way") {
  const auto f = spread_fabric(3, 2, 1, 0);
  const auto p = spread_plan_of(f, 8);
  // 6 ranks, 2 on a node: offsets 2..4, three rounds, however many were asked for
  CHECK(p.rounds.size() == 3);
  CHECK(p.partners == 3);
  CHECK(p.reach == plan::spread_reach::nodes);
  CHECK(p.alone.empty());
  check_plan(p, f);
  CHECK(plan::describe(p, 1) == "3 round(s), seed 1: every rank meets 3 partner(s) each way, on other nodes");
}

TEST_CASE("spread: 4 096 nodes x 8 rails under 128 leaves: 16 rounds, every uplink both ways in each") {
  const auto f = spread_fabric(4096, 8, 8, 128);
  const auto p = spread_plan_of(f, 16);
  CHECK(p.rounds.size() == 16);  // the check's length: K rounds, whatever N is
  CHECK(p.partners == 16);
  CHECK(p.reach == plan::spread_reach::leaves);
  for (const auto& round : p.rounds) CHECK(round.size() == f.members.size());
  check_plan(p, f);
}

TEST_CASE("spread: partners are far and near, not one leaf's neighbours") {
  const auto f = spread_fabric(64, 1, 1, 16);
  const auto p = spread_plan_of(f, 8);
  check_plan(p, f);
  // rank 0 meets 8 partners on at least 6 different leaves (strata over the whole range)
  std::set<std::int32_t> leaves;
  for (const auto& round : p.rounds)
    for (const auto& [a, b] : round)
      if (a == 0) leaves.insert(f.leaf_of[b]);
  CHECK(leaves.size() >= 6);
}

TEST_CASE("spread: the seed alone makes the plan") {
  const auto f = spread_fabric(32, 2, 1, 4);
  CHECK(spread_plan_of(f, 6, 7).rounds == spread_plan_of(f, 6, 7).rounds);
  CHECK(spread_plan_of(f, 6, 7).rounds != spread_plan_of(f, 6, 8).rounds);
  check_plan(spread_plan_of(f, 6, 8), f);
}

TEST_CASE("spread: only the members play (a --scaling step), and a rank alone on its rail is said") {
  const auto f = spread_fabric(8, 4, 1, 2);
  std::vector<std::uint32_t> first;  // local rank 0 of each node
  for (auto r : f.members)
    if (r % 4 == 0) first.push_back(r);
  const auto p = plan::spread_rounds(first, f.node_of, f.rail_of, f.leaf_of, 4, 1);
  for (const auto& round : p.rounds)
    for (const auto& [a, b] : round) CHECK((a % 4 == 0 && b % 4 == 0));
  // two leaves of four: one shift leaves every leaf (by four); the other rounds leave the node
  CHECK(p.partners == 4);
  CHECK(p.reach == plan::spread_reach::nodes);
  CHECK(p.leaf_rounds == 1);
  for (const auto& [a, b] : p.rounds.front()) CHECK(f.leaf_of[a] != f.leaf_of[b]);
  CHECK(plan::describe(p, 1) ==
        "4 round(s), seed 1: every rank meets 4 partner(s) each way, on other nodes (on other leaves in 1 of the "
        "rounds)");

  // 3 nodes with 2 NICs, the third node's second NIC driving no rank: rail 1 has 2 ranks, rail 0 3
  const std::vector<std::int32_t> node_of{0, 0, 1, 1, 2}, rail_of{0, 1, 0, 1, 0}, leaf_of;
  const std::vector<std::uint32_t> all{0, 1, 2, 3, 4};
  const auto q = plan::spread_rounds(all, node_of, rail_of, leaf_of, 8, 1);
  CHECK(q.partners == 1);  // rail 1: two ranks, one partner each way
  CHECK(q.rounds.size() == 2);
  const auto lone = plan::spread_rounds(std::vector<std::uint32_t>{0, 1, 2}, node_of, rail_of, leaf_of, 8, 1);
  CHECK(lone.alone == std::vector<std::uint32_t>{1});
  CHECK(plan::describe(lone, 1).find("alone on its rail, not measured: rank(s) 1") != std::string::npos);
}

TEST_CASE("spread: a leaf with most of the ranks falls back to other nodes, one node to loopback") {
  // 5 nodes under leaf 0, 3 under leaf 1: no offset takes every rank off its leaf
  std::vector<std::int32_t> node_of, rail_of, leaf_of;
  std::vector<std::uint32_t> all;
  for (std::uint32_t r = 0; r < 8; ++r) {
    all.push_back(r);
    node_of.push_back(static_cast<std::int32_t>(r));
    rail_of.push_back(0);
    leaf_of.push_back(r < 5 ? 0 : 1);
  }
  const auto p = plan::spread_rounds(all, node_of, rail_of, leaf_of, 4, 1);
  CHECK(p.reach == plan::spread_reach::nodes);
  CHECK(p.partners == 4);
  check_plan(p, {all, node_of, rail_of, leaf_of});

  const auto one = spread_fabric(1, 4, 1, 0);
  const auto q = spread_plan_of(one, 8);
  CHECK(q.reach == plan::spread_reach::within_node);
  CHECK(q.partners == 3);
  check_plan(q, one);
}

TEST_CASE("spread: --partners and --seed apply to --pattern spread, at least one partner") {
  const auto parse = [](std::vector<const char*> argv) {
    argv.insert(argv.begin(), "rdmamesh");
    return parse_command_line(static_cast<int>(argv.size()), argv.data());
  };
  const auto ok = parse({"--pattern", "spread", "--partners", "4", "--seed", "9"});
  REQUIRE(ok.opts);
  CHECK(ok.opts->patterns == std::vector<pattern_kind>{pattern_kind::spread});
  CHECK(ok.opts->partners == 4);
  CHECK(ok.opts->seed == 9);
  CHECK(ok.opts->connect == connect_kind::round);  // a round holds two partners, not N-1
  CHECK(ok.opts->max_partners(4096) == 2);
  const auto stray = parse({"--partners", "4"});
  CHECK(stray.exit_code == 2);
  CHECK(stray.text.find("--partners applies to --pattern spread") != std::string::npos);
  const auto none = parse({"--pattern", "spread", "--partners", "0"});
  CHECK(none.exit_code == 2);
  CHECK(none.text.find("--partners must be at least 1") != std::string::npos);
}
