// The finder: causes named only beyond the run's own noise, like compared with like, the smallest
// set of causes, failed pairs apart, and --expect's absolute floor.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "rdmamesh/io/report.hpp"
#include "rdmamesh/stats/outliers.hpp"

using namespace rdmamesh;
using namespace rdmamesh::stats;

namespace {

constexpr std::uint64_t size = 4096;

// A run whose pairs carry `rate` messages/s for 1 s (counts are the rates), every pair in round 0.
struct run {
  run_matrices m;
  std::vector<std::int32_t> node_of;
  run(std::uint32_t n, std::vector<std::int32_t> nodes, double rate = 1000) : node_of(std::move(nodes)) {
    m.tx_bw = square<double>(n, NAN);
    m.tx_msgs = square<std::uint64_t>(n, 0);
    m.tx_s = square<double>(n, NAN);
    m.flags = square<std::uint8_t>(n, 0);
    m.round = square<std::int32_t>(n, -1);
    for (std::uint32_t a = 0; a < n; ++a) {
      for (std::uint32_t b = 0; b < n; ++b) {
        if (a != b) set(a, b, rate);
      }
    }
  }
  void set(std::uint32_t a, std::uint32_t b, double rate, std::int32_t round = 0) {
    m.tx_msgs.at(a, b) = static_cast<std::uint64_t>(std::llround(rate));
    m.tx_s.at(a, b) = 1;
    m.tx_bw.at(a, b) = static_cast<double>(m.tx_msgs.at(a, b)) * size;
    m.round.at(a, b) = round;
  }
  double rate(std::uint32_t a, std::uint32_t b) const { return static_cast<double>(m.tx_msgs.at(a, b)); }
  void scale(std::uint32_t a, std::uint32_t b, double f) { set(a, b, rate(a, b) * f, m.round.at(a, b)); }
  // every pair times a factor drawn from [1 - spread, 1 + spread], reproducibly
  void jitter(double spread, unsigned seed = 7) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<double> d(1 - spread, 1 + spread);
    for (std::uint32_t a = 0; a < m.tx_bw.n; ++a) {
      for (std::uint32_t b = 0; b < m.tx_bw.n; ++b) {
        if (a != b) scale(a, b, d(g));
      }
    }
  }
  outlier_report find(double slow = 90, double expect = 0) const {
    return find_outliers(m, size, node_of, {.slow_pct = slow, .expect_bps = expect, .counted = true});
  }
};

std::vector<std::int32_t> nodes_of(std::uint32_t nodes, std::uint32_t per_node) {
  std::vector<std::int32_t> out;
  for (std::uint32_t k = 0; k < nodes; ++k) out.insert(out.end(), per_node, static_cast<std::int32_t>(k));
  return out;
}

std::size_t named(const outlier_report& r) {
  std::size_t k = 0;
  for (const auto& o : r.found) k += o.kind != outlier_kind::failed;
  return k;
}

}  // namespace

TEST_CASE("a healthy run with noise names nothing and says so") {
  run r(6, nodes_of(3, 2));
  r.jitter(0.15);
  const auto rep = r.find();
  CHECK(named(rep) == 0);
  CHECK(rep.judged == 30);
  CHECK(rep.noise > 0.02);
  CHECK(io::judged_line(rep).starts_with("# healthy: no pair beyond the run's noise (30 of 30 pairs judged"));
}

TEST_CASE("a pair inside a node is judged against its own class, not against pairs across nodes") {
  run r(6, nodes_of(3, 2));
  r.jitter(0.05);
  for (std::uint32_t k = 0; k < 3; ++k) {  // loopback through the NIC: twice the pairs across the network
    r.scale(2 * k, 2 * k + 1, 2.0);
    r.scale(2 * k + 1, 2 * k, 2.0);
  }
  CHECK(named(r.find()) == 0);
}

TEST_CASE("one node's sends slow: the node is named, not its ranks, not the pairs into it") {
  run r(6, nodes_of(3, 2));
  r.jitter(0.08);
  for (std::uint32_t a : {2u, 3u}) {
    for (std::uint32_t b : {0u, 1u, 4u, 5u}) r.scale(a, b, 0.5);
  }
  for (std::uint32_t k = 0; k < 3; ++k) {  // the CPU the sick node frees speeds up every pair inside a node
    r.scale(2 * k, 2 * k + 1, 3.0);
    r.scale(2 * k + 1, 2 * k, 3.0);
  }
  const auto rep = r.find();
  REQUIRE(named(rep) == 1);
  const auto& o = rep.found[0];
  CHECK(o.kind == outlier_kind::node);
  CHECK(o.node == 1);
  CHECK(o.send_pct == doctest::Approx(50).epsilon(0.15));
  CHECK(std::isnan(o.recv_pct));
  CHECK(o.pairs == 8);
  CHECK(o.fine == 0);
  CHECK(io::judged_line(rep).starts_with("# judged: "));
}

TEST_CASE("a node slow both ways, the receives only a little (its ACKs leave through the same port): one cause") {
  run r(6, nodes_of(3, 2));
  r.jitter(0.05);
  for (std::uint32_t a : {2u, 3u}) {
    for (std::uint32_t b : {0u, 1u, 4u, 5u}) {
      r.scale(a, b, 0.3);
      r.scale(b, a, 0.7);
    }
  }
  const auto rep = r.find();
  REQUIRE(named(rep) == 1);
  CHECK(rep.found[0].kind == outlier_kind::node);
  CHECK(rep.found[0].send_pct < 40);
  CHECK(rep.found[0].recv_pct < 80);
  CHECK(rep.found[0].pairs == 16);
}

TEST_CASE("one rank of a node slow: the rank, not its node") {
  run r(6, nodes_of(3, 2));
  r.jitter(0.05);
  for (std::uint32_t b = 0; b < 6; ++b) {
    if (b != 2) r.scale(2, b, 0.4);
  }
  const auto rep = r.find();
  REQUIRE(named(rep) == 1);
  CHECK(rep.found[0].kind == outlier_kind::rank);
  CHECK(rep.found[0].rank == 2);
  CHECK(rep.found[0].pairs == 5);
}

// A step tests in full only candidates that could be named (half a side's pairs below --slow %
// of a median their removal moves little): a large mesh must read as a small one does.
TEST_CASE("a 96-rank mesh on 12 nodes: healthy names nothing; a node's sends, a rank's receives are named") {
  const std::uint32_t n = 96;
  SUBCASE("healthy") {
    run r(n, nodes_of(12, 8));
    r.jitter(0.05);
    CHECK(named(r.find()) == 0);
  }
  SUBCASE("node 5's sends at half, rank 70's receives at 40 %") {
    run r(n, nodes_of(12, 8));
    r.jitter(0.05);
    for (std::uint32_t a = 40; a < 48; ++a) {
      for (std::uint32_t b = 0; b < n; ++b) {
        if (b < 40 || b >= 48) r.scale(a, b, 0.5);
      }
    }
    for (std::uint32_t a = 0; a < n; ++a) {
      if (a != 70 && (a < 40 || a >= 48)) r.scale(a, 70, 0.4);
    }
    const auto rep = r.find();
    REQUIRE(named(rep) == 2);
    CHECK(rep.found[0].kind == outlier_kind::node);
    CHECK(rep.found[0].node == 5);
    CHECK(rep.found[0].send_pct == doctest::Approx(50).epsilon(0.15));
    CHECK(rep.found[0].pairs == 8 * 88);
    CHECK(rep.found[1].kind == outlier_kind::rank);
    CHECK(rep.found[1].rank == 70);
    CHECK(std::isnan(rep.found[1].send_pct));
    CHECK(rep.found[1].recv_pct == doctest::Approx(40).epsilon(0.15));
  }
}

TEST_CASE("a 300-node mesh with 45 slow nodes names each of them, on its slow side, and nothing else") {
  // many causes at once: a step names several that touch none of one another
  const std::uint32_t n = 300;
  run r(n, nodes_of(n, 1));
  r.jitter(0.05);
  std::set<std::int32_t> senders, receivers;
  for (std::uint32_t a = 3; a < n; a += 8) senders.insert(static_cast<std::int32_t>(a));     // 37 of them
  for (std::uint32_t b = 5; b < n; b += 37) receivers.insert(static_cast<std::int32_t>(b));  // 8, one a sender
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = 0; b < n; ++b) {
      if (a == b) continue;
      if (senders.contains(static_cast<std::int32_t>(a))) r.scale(a, b, 0.6);
      if (receivers.contains(static_cast<std::int32_t>(b))) r.scale(a, b, 0.5);
    }
  }
  const auto rep = r.find();
  std::set<std::int32_t> sent, received;
  for (const auto& o : rep.found) {
    REQUIRE(o.kind == outlier_kind::node);
    if (!std::isnan(o.send_pct)) sent.insert(o.node);
    if (!std::isnan(o.recv_pct)) received.insert(o.node);
    CHECK(o.fine <= o.pairs / 10);
  }
  std::set<std::int32_t> both = senders;
  both.insert(receivers.begin(), receivers.end());
  CHECK(named(rep) == both.size());  // one cause a node, whichever sides
  CHECK(sent == senders);
  CHECK(received == receivers);
}

TEST_CASE("one slow pair is a link; the same dip is noise in a run that spreads as much") {
  run quiet(4, nodes_of(1, 4));
  quiet.jitter(0.02);
  quiet.scale(1, 3, 0.6);
  const auto rep = quiet.find();
  REQUIRE(named(rep) == 1);
  CHECK(rep.found[0].kind == outlier_kind::link);
  CHECK(rep.found[0].rank == 1);
  CHECK(rep.found[0].peer == 3);

  // every rank sends two pairs at 135 % and two at 65 % of the median, and receives the same
  run noisy(5, nodes_of(1, 5));
  for (std::uint32_t a = 0; a < 5; ++a) {
    for (std::uint32_t b = 0; b < 5; ++b) {
      if (a != b) noisy.set(a, b, (b + 5 - a) % 5 <= 2 ? 1350 : 650);
    }
  }
  noisy.set(1, 3, 600);
  CHECK(named(noisy.find()) == 0);
}

TEST_CASE("counts that move in coarse steps are judged by their steps: 100 or 200 messages is not a fault") {
  run r(6, nodes_of(3, 2), 200);
  for (std::uint32_t b = 0; b < 6; ++b) {
    if (b != 0) r.set(0, b, 100);  // one moderation group fewer on every pair of rank 0
  }
  r.set(4, 5, 100);
  const auto rep = r.find();
  CHECK(rep.quantum == 100);
  CHECK(named(rep) == 0);
}

TEST_CASE("a pair is compared with the pairs of its round: a round that is slow as a whole is not a fault") {
  run r(4, nodes_of(1, 4));
  for (std::uint32_t a = 0; a < 4; ++a) {
    for (std::uint32_t b = 0; b < 4; ++b) {
      if (a != b) r.set(a, b, 1000 * (a < b ? 1.0 : 0.6), a < b ? 0 : 1);  // round 1 runs at 60 %
    }
  }
  CHECK(named(r.find()) == 0);
}

TEST_CASE("failed pairs are causes of their own and do not drag the judgement") {
  run r(4, nodes_of(1, 4));
  r.jitter(0.03);
  r.m.flags.at(0, 1) = r.m.flags.at(1, 0) = 1;
  r.set(0, 1, 1);
  const auto rep = r.find();
  REQUIRE(rep.found.size() == 2);
  CHECK(rep.found[0].kind == outlier_kind::failed);
  CHECK(rep.found[1].kind == outlier_kind::failed);
  CHECK(rep.measured == 10);
}

TEST_CASE("--expect: pairs below the floor are named even when every pair is; one node below it is the node") {
  run all(6, nodes_of(3, 2));
  all.jitter(0.05);
  const double floor = 2000.0 * size;  // every pair carries about half of it
  const auto rep = all.find(90, floor);
  REQUIRE(named(rep) == 1);
  CHECK(rep.found[0].kind == outlier_kind::fabric);
  CHECK(rep.found[0].basis == outlier_basis::expect);
  CHECK(rep.found[0].send_pct == doctest::Approx(50).epsilon(0.1));
  CHECK(rep.found[0].pairs == 30);

  run one(6, nodes_of(3, 2), 3000);
  one.jitter(0.05);
  for (std::uint32_t a : {4u, 5u}) {
    for (std::uint32_t b = 0; b < 4; ++b) one.scale(a, b, 0.5);
  }
  const auto rep2 = one.find(90, floor);
  REQUIRE(named(rep2) >= 1);
  CHECK(rep2.found[0].kind == outlier_kind::node);
  CHECK(rep2.found[0].basis == outlier_basis::expect);
  CHECK(rep2.found[0].node == 2);
}

TEST_CASE("a run of two pairs is too small to measure its noise: nothing is judged") {
  run r(2, nodes_of(1, 2));
  r.scale(0, 1, 0.3);
  const auto rep = r.find();
  CHECK(named(rep) == 0);
  CHECK(io::judged_line(rep).starts_with("# not judged: 2 pair(s) are too few"));
}

TEST_CASE("-n runs count exactly: rates that differ by time are judged by the spread alone") {
  run r(4, nodes_of(1, 4));
  for (std::uint32_t a = 0; a < 4; ++a) {
    for (std::uint32_t b = 0; b < 4; ++b) {
      if (a == b) continue;
      r.set(a, b, 500);  // every pair sent 500 messages; their seconds differ
      r.m.tx_s.at(a, b) = 1 + 0.01 * (a + b);
      r.m.tx_bw.at(a, b) = 500.0 * size / r.m.tx_s.at(a, b);
    }
  }
  r.m.tx_s.at(2, 1) = 3;
  r.m.tx_bw.at(2, 1) = 500.0 * size / 3;
  const auto rep = find_outliers(r.m, size, r.node_of, {.slow_pct = 90, .expect_bps = 0, .counted = false});
  REQUIRE(named(rep) == 1);
  CHECK(rep.found[0].kind == outlier_kind::link);
  CHECK(rep.found[0].rank == 2);
}

TEST_CASE("-n runs whose median pair took under 0.1 s are not judged: start-up, not links") {
  // CI's vm.bw on a fast machine, 2026-11-25: 4 ranks on 2 vCPUs, -n 100 at 4 KiB, each pair
  // done in ~7 ms; the same pair (its sender sharing a CPU) at 43-57 % in 3 of 4 runs
  const std::uint64_t size = 4096;
  run r(4, nodes_of(1, 4));
  for (std::uint32_t a = 0; a < 4; ++a) {
    for (std::uint32_t b = 0; b < 4; ++b) {
      if (a == b) continue;
      r.set(a, b, 100);
      r.m.tx_s.at(a, b) = 0.0065 * (1 + 0.01 * (a + b));
      r.m.tx_bw.at(a, b) = 100.0 * size / r.m.tx_s.at(a, b);
    }
  }
  r.m.tx_s.at(1, 0) = 0.015;
  r.m.tx_bw.at(1, 0) = 100.0 * size / 0.015;
  const finder_settings s{.slow_pct = 90, .expect_bps = 0, .counted = false, .min_pair_s = 0.1};
  const auto rep = find_outliers(r.m, size, r.node_of, s);
  CHECK(named(rep) == 0);
  CHECK(rep.too_short);
  CHECK(rep.median_s == doctest::Approx(0.0065).epsilon(0.05));
  CHECK(io::judged_line(rep).starts_with("# not judged: the median pair took 0.0067 s, too short"));
  // the same pairs over 100 times as long: judged, and the slow pair is named
  for (std::uint32_t a = 0; a < 4; ++a) {
    for (std::uint32_t b = 0; b < 4; ++b) {
      if (a == b) continue;
      r.set(a, b, 10000);
      r.m.tx_s.at(a, b) = a == 1 && b == 0 ? 1.5 : 0.65 * (1 + 0.01 * (a + b));
      r.m.tx_bw.at(a, b) = 10000.0 * size / r.m.tx_s.at(a, b);
    }
  }
  const auto rep2 = find_outliers(r.m, size, r.node_of, s);
  CHECK_FALSE(rep2.too_short);
  REQUIRE(named(rep2) == 1);
  CHECK(rep2.found[0].rank == 1);
}

TEST_CASE("a run whose median pair counted fewer than 20 messages is not judged, whatever it shows") {
  // the 3-node VM, mesh 64 KiB for 1 s: about 8 messages a pair, and one rank's cross-node
  // receives starved for the whole window while its node-mate's loopback pair took the rest
  run r(6, nodes_of(3, 2), 8);
  for (std::uint32_t a : {0U, 1U, 2U, 3U}) r.set(a, 4, a == 1 ? 1 : 0);
  r.set(5, 4, 24);
  const auto rep = r.find();
  CHECK(named(rep) == 0);
  CHECK(rep.too_few_msgs);
  CHECK(rep.median_msgs == doctest::Approx(8));
  CHECK(std::isnan(rep.threshold_pct));
  CHECK(io::judged_line(rep) ==
        "# not judged: the median pair counted 8 message(s), too few to tell a slow pair from scheduling (20 "
        "needed: a longer -D or a smaller -s)");
  // 20 messages a pair: judged, and a node with nothing through its port for the window is named
  run ok(6, nodes_of(3, 2), 22);
  ok.jitter(0.1);  // counts that share no step (identical counts would read as one quantum)
  for (std::uint32_t a : {0U, 1U, 2U, 3U}) {
    ok.set(a, 4, 0);
    ok.set(a, 5, 0);
  }
  const auto rep2 = ok.find();
  CHECK_FALSE(rep2.too_few_msgs);
  REQUIRE(named(rep2) == 1);
  CHECK(rep2.found[0].kind == outlier_kind::node);
  // an absolute floor still holds on coarse counts
  run slow(6, nodes_of(3, 2), 8);
  const auto rep3 = slow.find(90, 1e9);
  CHECK(rep3.too_few_msgs);
  REQUIRE(rep3.found.size() == 1);
  CHECK(rep3.found[0].kind == outlier_kind::fabric);
}

TEST_CASE("counts that share a divisor by lockstep are no coarser than the CQ moderation says") {
  // vm.faults: 4 ranks, 64 KiB, every WR signaled; each sender's counts equal across its peers
  run r(4, nodes_of(1, 4));
  const double row[4] = {256, 480, 256, 352};
  for (std::uint32_t a = 0; a < 4; ++a) {
    for (std::uint32_t b = 0; b < 4; ++b) {
      if (a != b) r.set(a, b, row[a]);
    }
  }
  r.set(1, 3, 160);  // the held-back pair: a third of its row
  auto settings = finder_settings{.slow_pct = 90, .expect_bps = 0, .counted = true};
  CHECK(find_outliers(r.m, size, r.node_of, settings).quantum == 32);  // gcd: lockstep, not moderation
  settings.max_quantum = 1;
  const auto rep = find_outliers(r.m, size, r.node_of, settings);
  CHECK(rep.quantum == 1);
  REQUIRE(rep.found.size() == 1);
  CHECK(rep.found[0].kind == outlier_kind::link);
  CHECK(rep.found[0].rank == 1);
  CHECK(rep.found[0].peer == 3);
}

namespace {

// Leaves of `per_leaf` nodes under one spine: one uplink per leaf, the ranks under it.
std::vector<switch_group> leaves(const std::vector<std::int32_t>& node_of, std::vector<std::int32_t> leaf_of_node) {
  std::vector<switch_group> out;
  const auto count = *std::max_element(leaf_of_node.begin(), leaf_of_node.end()) + 1;
  for (std::int32_t l = 0; l < count; ++l) {
    switch_group g{l, std::vector<std::uint8_t>(node_of.size(), 0)};
    for (std::size_t r = 0; r < node_of.size(); ++r)
      g.members[r] = leaf_of_node[static_cast<std::size_t>(node_of[r])] == l;
    out.push_back(std::move(g));
  }
  return out;
}

outlier_report find_with(const run& r, const std::vector<switch_group>& up) {
  return find_outliers(r.m, size, r.node_of, {.slow_pct = 90, .expect_bps = 0, .counted = true}, up);
}

}  // namespace

TEST_CASE("--topology: a leaf's slow uplink is named once, not as the nodes under it") {
  // 6 nodes of 2 ranks under 3 leaves; everything leaving leaf 0 crosses its uplink at 30 %
  run r(12, nodes_of(6, 2), 2000);
  r.jitter(0.1);
  const auto up = leaves(r.node_of, {0, 0, 1, 1, 2, 2});
  for (std::uint32_t a = 0; a < 4; ++a) {
    for (std::uint32_t b = 4; b < 12; ++b) r.scale(a, b, 0.3);
  }
  const auto rep = find_with(r, up);
  REQUIRE(named(rep) == 1);
  const auto& o = rep.found[0];
  CHECK(o.kind == outlier_kind::uplink);
  CHECK(o.node == 0);
  CHECK(o.send_pct == doctest::Approx(30).epsilon(0.15));
  CHECK(std::isnan(o.recv_pct));
  CHECK(o.pairs == 32);
  CHECK(o.fine == 0);
  const std::vector<std::string> names{"leaf0-spine (node0,node1)", "leaf1-spine (node2,node3)",
                                       "leaf2-spine (node4,node5)"};
  CHECK(io::cause_line(o, rep, {}, names) == "# slow: uplink leaf0-spine (node0,node1): up at " +
                                                 fmt::format("{:.0f}", o.send_pct) +
                                                 " % of the median; 32 slow pair(s)");
  // without the tree the same run names the two nodes (or their ranks): the crowd the tree avoids
  CHECK(named(r.find()) >= 2);
}

TEST_CASE("--topology: a slow node under a leaf is the node, not its leaf's uplink") {
  run r(8, nodes_of(4, 2), 2000);
  r.jitter(0.1);
  const auto up = leaves(r.node_of, {0, 0, 1, 1});
  for (std::uint32_t a = 0; a < 2; ++a) {
    for (std::uint32_t b = 2; b < 8; ++b) r.scale(a, b, 0.3);
  }
  const auto rep = find_with(r, up);
  REQUIRE(named(rep) == 1);
  CHECK(rep.found[0].kind == outlier_kind::node);
  CHECK(rep.found[0].node == 0);
}

TEST_CASE("--topology: a leaf of one node cannot tell its uplink from the node's port: the node") {
  run r(8, nodes_of(4, 2), 2000);
  r.jitter(0.1);
  const auto up = leaves(r.node_of, {0, 1, 2, 2});  // node 0 alone under leaf 0
  for (std::uint32_t b = 2; b < 8; ++b) {
    r.scale(0, b, 0.3);
    r.scale(1, b, 0.3);
  }
  const auto rep = find_with(r, up);
  REQUIRE(named(rep) == 1);
  CHECK(rep.found[0].kind == outlier_kind::node);
}

TEST_CASE("--topology: a healthy run names no uplink") {
  run r(12, nodes_of(6, 2), 2000);
  r.jitter(0.15, 11);
  const auto rep = find_with(r, leaves(r.node_of, {0, 0, 1, 1, 2, 2}));
  CHECK(named(rep) == 0);
  // and says how slow an uplink must be to be named, beside a node and a rank
  const auto line = io::judged_line(rep);
  CHECK(line.find(" for an uplink") != std::string::npos);
  CHECK(line.find(" for a node") != std::string::npos);
  CHECK(line.find(" for a rank") != std::string::npos);
}

TEST_CASE("--topology: with two leaves the spine's pairs have nothing beside them; --expect names both uplinks") {
  run r(8, nodes_of(4, 2), 2000);
  r.jitter(0.1);
  const auto up = leaves(r.node_of, {0, 0, 1, 1});
  for (std::uint32_t a = 0; a < 4; ++a) {
    for (std::uint32_t b = 4; b < 8; ++b) r.scale(a, b, 0.3);
  }
  // every pair through the spine crosses both uplinks: no cohort to be slow against, nothing named
  const auto quiet = find_with(r, up);
  CHECK(named(quiet) == 0);
  // a floor needs no cohort: leaf0's way up (leaf1's way down, the same pairs) is below it
  const auto rep =
      find_outliers(r.m, size, r.node_of, {.slow_pct = 90, .expect_bps = 1000 * size, .counted = true}, up);
  REQUIRE(named(rep) == 1);
  const auto& o = rep.found[0];
  CHECK(o.kind == outlier_kind::uplink);
  CHECK(o.basis == outlier_basis::expect);
  CHECK(o.node == 0);
  CHECK(o.peer == 1);
  CHECK(std::isfinite(o.send_pct));
  CHECK(std::isnan(o.recv_pct));
  const std::vector<std::string> names{"leaf0-spine (node0,node1)", "leaf1-spine (node2,node3)"};
  CHECK(io::cause_line(o, rep, {}, names)
            .starts_with("# below --expect: uplink leaf0-spine (node0,node1) (or leaf1-spine (node2,node3), the same "
                         "pairs the other "
                         "way): up at "));
}

TEST_CASE(
    "--topology: an uplink slow one way is named for that way, first, though acknowledgements slow a node's receives") {
  // leaf0's way up at 25 %; what comes down to node1 waits on acknowledgements going up (60 %),
  // while node0, with the CPU that frees, receives faster (130 %): the way down as a whole is not
  // slow, node1's receives alone are (the VM's shaped leaf once read so). The model reads the way
  // up as the uplink's and node1's receives from outside its leaf as node1's own: a second,
  // weaker cause, which the retest decides (alone, its pairs' acknowledgements still go up)
  run r(12, nodes_of(6, 2), 2000);
  r.jitter(0.1, 3);
  const auto up = leaves(r.node_of, {0, 0, 1, 1, 2, 2});
  for (std::uint32_t a = 0; a < 4; ++a) {
    for (std::uint32_t b = 4; b < 12; ++b) {
      r.scale(a, b, 0.25);
      r.scale(b, a, a >= 2 ? 0.6 : 1.3);
    }
  }
  const auto rep = find_with(r, up);
  REQUIRE(named(rep) >= 1);
  CHECK(rep.found[0].kind == outlier_kind::uplink);
  CHECK(rep.found[0].node == 0);
  CHECK(rep.found[0].send_pct == doctest::Approx(25).epsilon(0.2));
  CHECK(std::isnan(rep.found[0].recv_pct));
  for (std::size_t i = 1; i < rep.found.size(); ++i) {
    CHECK(rep.found[i].kind == outlier_kind::node);
    CHECK(rep.found[i].node == 1);
    CHECK(std::isnan(rep.found[i].send_pct));
  }
}

TEST_CASE("two NICs per node: one NIC's sends slow names that NIC, not its node or rank; both NICs slow, the node") {
  // 3 nodes x 2 NICs, one rank per NIC: rank 2k on rail 0, rank 2k + 1 on rail 1 of node k
  const std::vector<std::int32_t> rail_of{0, 1, 0, 1, 0, 1};
  const auto nics = nic_groups(nodes_of(3, 2), rail_of);
  REQUIRE(nics.size() == 6);
  for (bool both : {false, true}) {
    CAPTURE(both);
    run r(6, nodes_of(3, 2));
    r.jitter(0.08);
    for (std::uint32_t a : both ? std::vector<std::uint32_t>{2, 3} : std::vector<std::uint32_t>{3}) {
      for (std::uint32_t b : {0u, 1u, 4u, 5u}) r.scale(a, b, 0.5);
    }
    const auto rep = find_outliers(r.m, size, r.node_of, {.slow_pct = 90, .counted = true}, {}, nics);
    REQUIRE(named(rep) == 1);
    const auto& o = rep.found[0];
    CHECK(o.kind == (both ? outlier_kind::node : outlier_kind::nic));
    CHECK(o.node == 1);
    if (!both) {
      CHECK(o.peer == 1);  // its rail
      CHECK(o.pairs == 4);
    }
    CHECK(o.send_pct == doctest::Approx(50).epsilon(0.15));
  }
  // a NIC's sends slow, and its receives too (their acknowledgements queue behind the sends): one
  // cause, the NIC's, both sides, not its one rank beside it. vm.rails' run, 2026-11-26, messages
  // in 2 s: the cover named rank 3's NIC for its sends, node1's rail-1 NIC, then rank 3 for its
  // receives at 61 %
  const std::vector<std::vector<int>> msgs{{0, 540, 979, 469, 925, 655},  {364, 0, 372, 622, 191, 672},
                                           {1461, 393, 0, 197, 986, 171}, {190, 139, 58, 0, 203, 382},
                                           {938, 799, 937, 276, 0, 778},  {574, 828, 594, 832, 820, 0}};
  run vm(6, nodes_of(3, 2));
  for (std::uint32_t a = 0; a < 6; ++a)
    for (std::uint32_t b = 0; b < 6; ++b)
      if (a != b) vm.set(a, b, msgs[a][b]);
  // at ±50 % noise (the model's residual scale here 0.41) its four pairs each way are not beyond
  // the run's noise at 0.1 % over the run's 18 parts (p 0.007): nothing is named, and no rank
  // ever is (a rank alone on its NIC is that NIC)
  const auto rep = find_outliers(vm.m, size, vm.node_of, {.slow_pct = 90, .counted = true}, {}, nics);
  CHECK(named(rep) == 0);
  CHECK(std::ranges::none_of(rep.found, [](const outlier& o) { return o.kind == outlier_kind::rank; }));
  // a node's one slow NIC in a noisy run, its sibling a little slow too (they share the node's
  // CPU): the sibling's pairs fall under --slow % without being beyond the noise. The node is
  // named only where each of its NICs is named on its own; at ±20 % the slow NIC's four pairs at
  // 40 % are beyond the noise at the run's level in about half of the runs (seeded: the same runs
  // each time), never the node for it
  int as_node = 0, as_nic = 0;
  for (unsigned seed = 1; seed <= 50; ++seed) {
    run noisy(6, nodes_of(3, 2));
    noisy.jitter(0.2, seed);
    for (std::uint32_t b : {0u, 1u, 4u, 5u}) {
      noisy.scale(3, b, 0.4);
      noisy.scale(2, b, 0.9);
    }
    const auto one = find_outliers(noisy.m, size, noisy.node_of, {.slow_pct = 90, .counted = true}, {}, nics);
    as_node += std::ranges::any_of(one.found, [](const outlier& o) { return o.kind == outlier_kind::node; });
    as_nic += std::ranges::any_of(one.found, [](const outlier& o) {
      return o.kind == outlier_kind::nic && o.node == 1 && o.peer == 1 && o.send_pct < 60;
    });
  }
  CHECK(as_node == 0);
  CHECK(as_nic >= 20);  // 24 of 50 at 0.1 %
  // a node that drives one NIC has no NIC apart from itself
  CHECK(nic_groups(nodes_of(3, 2), std::vector<std::int32_t>{0, 0, 0, 1, 0, 0}).size() == 2);
}

TEST_CASE("a run says how slow a part must be to be named: below --slow where parts of its kind stray as far") {
  // four ranks on one node: rank 2's sends at 10 %, and the other ranks' sends strayed by half
  // either way (ranks waiting for a CPU), so the yardstick a rank is read against is wide
  run r(4, nodes_of(1, 4));
  r.jitter(0.01);
  for (std::uint32_t b = 0; b < 4; ++b) {
    if (b != 0) r.scale(0, b, 1.6);
    if (b != 3) r.scale(3, b, 0.6);
    if (b != 2) r.scale(2, b, 0.1);
  }
  const auto wide = r.find(60);
  CHECK(named(wide) == 0);
  const auto rank_bound = std::ranges::find(wide.part_bound_pct, outlier_kind::rank, &outlier_report::part_bound::kind);
  REQUIRE(rank_bound != wide.part_bound_pct.end());
  // a rank's sends at --slow, or at 10 %, go unnamed by this run; its receives, which agree, not
  CHECK(rank_bound->sends_pct < 10);
  CHECK(rank_bound->recvs_pct > 10);
  CHECK(io::judged_line(wide).find(fmt::format(", {:.2g} % for a rank's sends and ", rank_bound->sends_pct)) !=
        std::string::npos);

  // the same rank at 10 % among ranks that agree: named, and a rank's bound is --slow itself
  run quiet(4, nodes_of(1, 4));
  quiet.jitter(0.01);
  for (std::uint32_t b : {0u, 1u, 3u}) quiet.scale(2, b, 0.1);
  const auto rep = quiet.find(60);
  REQUIRE(named(rep) == 1);
  CHECK(rep.found[0].kind == outlier_kind::rank);
  CHECK(rep.found[0].rank == 2);
  for (const auto& b : rep.part_bound_pct) {
    CHECK(b.sends_pct <= 60);
    CHECK(b.recvs_pct <= 60);
  }
  CHECK(io::judged_line(rep).find("60 % for a rank") != std::string::npos);
  // one node is the whole job: nothing to tell it from, so no node's bound is stated
  CHECK(io::judged_line(rep).find("for a node") == std::string::npos);
}
