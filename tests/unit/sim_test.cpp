// The fabric simulator: its runs carry the injected fault and nothing else, and the figures the
// docs quote hold at unit size (the judging code named a clear fault and little else on a real
// NIC fabric's noise; every draw seeded, so a figure moves only when the code does).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "rdmamesh/sim/generate.hpp"
#include "rdmamesh/sim/judge.hpp"
#include "rdmamesh/sim/replay.hpp"
#include "rdmamesh/sim/tally.hpp"
#include "rdmamesh/stats/median.hpp"

using namespace rdmamesh;

TEST_CASE("a simulated node fault slows that node's sends to other nodes, and nothing else") {
  std::mt19937_64 g(3);
  const sim::fabric_shape f{.nodes = 4, .per_node = 2, .rails = 1};
  const auto r = sim::generate(f, sim::nic_noise(), {sim::fault_kind::node, 0.5}, g);
  REQUIRE(r.fault_node >= 0);
  std::vector<double> faulted, other;
  for (std::uint32_t a = 0; a < 8; ++a) {
    for (std::uint32_t b = 0; b < 8; ++b) {
      if (r.node_of[a] == r.node_of[b]) continue;  // loopback pairs: a class of their own
      (r.node_of[a] == r.fault_node ? faulted : other).push_back(r.m.tx_bw.at(a, b));
    }
  }
  CHECK(stats::median_of(faulted) / stats::median_of(other) == doctest::Approx(0.5).epsilon(0.1));
  std::mt19937_64 again(3);
  CHECK(sim::generate(f, sim::nic_noise(), {sim::fault_kind::node, 0.5}, again).m.tx_msgs.v == r.m.tx_msgs.v);
}

TEST_CASE("a simulated spread run plays its plan's pairs alone, and a slow uplink slows what leaves its leaf") {
  std::mt19937_64 g(5);
  const sim::fabric_shape f{
      .nodes = 16, .per_node = 1, .rails = 1, .leaves = 4, .pattern = pattern_kind::spread, .partners = 4};
  const auto r = sim::generate(f, sim::nic_noise(), {sim::fault_kind::uplink, 0.5}, g);
  REQUIRE(r.fault_leaf >= 0);
  std::size_t played = 0;
  std::vector<double> up, other;
  for (std::uint32_t a = 0; a < 16; ++a) {
    for (std::uint32_t b = 0; b < 16; ++b) {
      if (a == b || r.m.round.at(a, b) < 0) {
        if (a != b) CHECK(r.m.tx_msgs.at(a, b) == 0);
        continue;
      }
      ++played;
      CHECK(r.leaf_of[a] != r.leaf_of[b]);
      (r.leaf_of[a] == r.fault_leaf ? up : other).push_back(r.m.tx_bw.at(a, b));
    }
  }
  CHECK(played == 16 * 4);
  CHECK(stats::median_of(up) / stats::median_of(other) == doctest::Approx(0.5).epsilon(0.1));
}

TEST_CASE("a simulated shift plays every pair once, alone, in N-1 rounds each a permutation, and names a slow node") {
  std::mt19937_64 g(6);
  const sim::fabric_shape f{.nodes = 12, .per_node = 1, .rails = 1, .leaves = 3, .pattern = pattern_kind::shift};
  const auto r = sim::generate(f, sim::nic_noise(), {sim::fault_kind::node, 0.7}, g);
  std::vector<std::vector<int>> sends(11, std::vector<int>(12, 0)), receives = sends;
  for (std::uint32_t a = 0; a < 12; ++a) {
    for (std::uint32_t b = 0; b < 12; ++b) {
      if (a == b) continue;
      const auto k = r.m.round.at(a, b);
      REQUIRE((k >= 0 && k < 11));
      ++sends[static_cast<std::size_t>(k)][a];
      ++receives[static_cast<std::size_t>(k)][b];
    }
  }
  for (std::size_t k = 0; k < 11; ++k) {  // each rank sends once and receives once a round
    CHECK(std::ranges::count(sends[k], 1) == 12);
    CHECK(std::ranges::count(receives[k], 1) == 12);
  }
  // each pair alone moves what a spread pair does, N - 1 times a mesh pair's count
  CHECK(stats::median_of(std::vector<double>(r.m.tx_msgs.v.begin(), r.m.tx_msgs.v.end())) > 100000);
  const auto t = sim::run_jobs(f, sim::nic_noise(), sim::parse_fault("node:70"), 20, 61, 0, true);
  CHECK(t.named == 20);
  CHECK(t.false_jobs == 0);
}

TEST_CASE("a third switch tier: a pod's uplink at half slows what leaves its pod, and the verdict names that uplink") {
  // 32 nodes under 8 leaves under 4 pods: pod p holds leaves 2p and 2p + 1, its uplink index 8 + p
  const sim::fabric_shape f{.nodes = 32, .per_node = 1, .rails = 1, .leaves = 8, .pods = 4};
  std::mt19937_64 g(11);
  const auto r = sim::generate(f, sim::nic_noise(), sim::parse_fault("pod:50"), g);
  REQUIRE(r.fault_pod >= 0);
  for (std::uint32_t a = 0; a < 32; ++a) {
    CHECK(r.pod_of[a] == r.leaf_of[a] / 2);
    for (std::uint32_t b = 0; b < 32; ++b)
      CHECK(sim::faulted(r, sim::fault_kind::pod, a, b) == (r.pod_of[a] == r.fault_pod && r.pod_of[b] != r.fault_pod));
  }
  const auto sick = sim::run_jobs(f, sim::nic_noise(), sim::parse_fault("pod:50"), 20, 12);
  CHECK(sick.named >= 19);  // named as the pod's uplink, not as its leaves' or its nodes'
  CHECK(sick.false_jobs <= 3);
  CHECK_THROWS_AS(sim::parse_fault("pod:120"), std::invalid_argument);
}

TEST_CASE("on a real fabric's noise the verdict names a node at 30 %, and a healthy job rarely names anything") {
  const sim::fabric_shape f{.nodes = 3, .per_node = 2, .rails = 1};
  const auto healthy = sim::run_jobs(f, sim::nic_noise(), {}, 300, 1);
  CHECK(healthy.unjudged == 0);
  CHECK(healthy.false_jobs <= 9);  // 3 %: see docs/simulator.md for today's figure
  const auto sick = sim::run_jobs(f, sim::nic_noise(), sim::parse_fault("node:30"), 200, 2);
  CHECK(sick.named >= 190);
  const auto nic =
      sim::run_jobs({.nodes = 3, .per_node = 2, .rails = 2}, sim::nic_noise(), sim::parse_fault("nic:50"), 200, 3);
  CHECK(nic.named >= 190);
}

TEST_CASE("a simulated retest measures only the pairs it is given, alone, and the fault still slows them") {
  std::mt19937_64 g(7);
  const sim::fabric_shape f{.nodes = 4, .per_node = 2, .rails = 1};
  const auto r = sim::generate(f, sim::nic_noise(), {sim::fault_kind::node, 0.5}, g);
  stats::pair_list sick_pairs, fine_pairs;
  for (std::uint32_t a = 0; a < 8; ++a) {
    for (std::uint32_t b = 0; b < 8; ++b) {
      if (r.node_of[a] == r.node_of[b] || r.node_of[b] == r.fault_node) continue;
      (r.node_of[a] == r.fault_node ? sick_pairs : fine_pairs).emplace_back(a, b);
    }
  }
  auto all = sick_pairs;
  all.insert(all.end(), fine_pairs.begin(), fine_pairs.end());
  const auto alone = sim::generate_alone(r, sim::nic_noise(), {sim::fault_kind::node, 0.5}, all, g());
  std::vector<double> sick, fine;
  std::size_t measured = 0;
  for (std::uint32_t a = 0; a < 8; ++a) {
    for (std::uint32_t b = 0; b < 8; ++b) measured += std::isfinite(alone.at(a, b)) ? 1 : 0;
  }
  CHECK(measured == all.size());
  for (const auto& [a, b] : sick_pairs) sick.push_back(alone.at(a, b));
  for (const auto& [a, b] : fine_pairs) fine.push_back(alone.at(a, b));
  CHECK(stats::median_of(sick) / stats::median_of(fine) == doctest::Approx(0.5).epsilon(0.1));
  // alone, a pair has its ports to itself: N-1 times the mesh pair's rate
  CHECK(stats::median_of(fine) / r.m.tx_bw.at(fine_pairs[0].first, fine_pairs[0].second) ==
        doctest::Approx(7).epsilon(0.1));
}

TEST_CASE("a simulated retest: pairs alone into one rank share its effect alone, whichever pairs are planned") {
  // a receiver's effect alone of 0.3 and pairs' own of 0.01: two pairs into one rank agree, two
  // into different ranks differ by about the receivers' spread; a pair reads the same whether
  // the retest plans one pair or all of them
  std::mt19937_64 g(9);
  const sim::fabric_shape f{.nodes = 8, .per_node = 1, .rails = 1};
  auto nm = sim::nic_noise();
  nm.keep = 0;
  nm.msgs = 1e9;
  nm.alone = 0.01;
  nm.alone_recv = 0.3;
  const auto r = sim::generate(f, nm, {}, g);
  stats::pair_list all;
  for (std::uint32_t a = 0; a < 8; ++a)
    for (std::uint32_t b = 0; b < 8; ++b)
      if (a != b) all.emplace_back(a, b);
  const std::uint64_t seed = 17;
  const auto alone = sim::generate_alone(r, nm, {}, all, seed);
  double same = 0, apart = 0;
  for (std::uint32_t b = 0; b < 8; ++b) {
    const std::uint32_t a1 = (b + 1) % 8, a2 = (b + 2) % 8, b2 = (b + 3) % 8;
    same += std::fabs(std::log(alone.at(a1, b) / alone.at(a2, b))) / 8;
    apart += std::fabs(std::log(alone.at(a1, b) / alone.at(a1, b2))) / 8;
  }
  CHECK(same < 0.05);
  CHECK(apart > 0.1);
  const stats::pair_list one{{3, 5}};
  CHECK(sim::generate_alone(r, nm, {}, one, seed).at(3, 5) == alone.at(3, 5));
}

TEST_CASE("with --retest, emulated healthy jobs rarely count a cause; a real fabric's node at 85 % stays named") {
  // one run of the emulator's contention names a healthy part at most about as often as its
  // level says (0.1 % a run, the model's yardstick the run's own spread: 1 of 500 here), and the
  // retest, which redraws that contention alone, keeps it so
  const sim::fabric_shape f{.nodes = 3, .per_node = 2, .rails = 1};
  const auto once = sim::run_jobs(f, sim::emulator_noise(), {}, 500, 21);
  const auto retested = sim::run_jobs(f, sim::emulator_noise(), {}, 500, 21, 0, true);
  CHECK(once.false_jobs <= 5);
  CHECK(retested.false_jobs <= 6);
  CHECK(retested.retested > 0);
  // a real NIC fabric's pairs alone agree to about 1 %: a node at 85 % alone is below --slow
  // beyond chance and counted (the model names it in 93-94 % of 4 000 simulated jobs, one of its
  // ranks instead in 2 %: the same node drained)
  const auto sick = sim::run_jobs(f, sim::nic_noise(), sim::parse_fault("node:85"), 200, 22, 0, true);
  CHECK(sick.named >= 180);
  const auto healthy = sim::run_jobs(f, sim::nic_noise(), {}, 300, 23, 0, true);
  CHECK(healthy.false_jobs == 0);
}

TEST_CASE("emulated nodes pinned onto one kernel's CPUs: a port at half is named alone, healthy nodes drained rarely") {
  // every emulated node's local rank k on vCPU k: alone, a pair on one vCPU runs at about 0.6 of
  // one between two, and one way between the two lastingly faster. Read by those paths, a node's
  // sends at half stand out of its controls (96.8 % of 2 000 jobs; read as one path, 37 %)
  const sim::fabric_shape f{.nodes = 3, .per_node = 2, .rails = 1};
  const auto sick = sim::run_jobs(f, sim::emulator_noise(), sim::parse_fault("node:50"), 300, 71, 0, true);
  CHECK(sick.named >= 270);
  // issue 42's bar on the emulator: at most 1 false drain per 1 000 healthy node-jobs
  const auto healthy = sim::run_jobs(f, sim::emulator_noise(), {}, 1000, 72, 0, true);
  CHECK(healthy.false_nodes <= 3);
}

TEST_CASE("a job of three runs is one fit: a port at half none alone may name is named pooled, healthy jobs rarely") {
  // without a retest, on the emulated cluster's noise: each run alone names a node at half in
  // about a third of jobs, so a vote of three counted it in 17 % of 3 000; pooled, 72 %
  const sim::fabric_shape f{.nodes = 3, .per_node = 2, .rails = 1};
  const auto sick = sim::run_jobs(f, sim::emulator_noise(), sim::parse_fault("node:50"), 300, 81, 0, false, 0, {}, 3);
  CHECK(sick.named >= 180);
  CHECK(sick.false_nodes == 0);
  // issue 42's bar on the emulator: at most 1 false drain per 1 000 healthy node-jobs
  const auto healthy = sim::run_jobs(f, sim::emulator_noise(), {}, 1000, 82, 0, false, 0, {}, 3);
  CHECK(healthy.false_nodes <= 3);
}

TEST_CASE("the model with its retest: healthy jobs count a part at most as often as alpha; a rank at half is found") {
  // alpha is the chance of counting any healthy part in a job: 2 000 healthy 3 x 2 jobs at 0.003
  // expect 6 at most; the retest's pairs alone, not the run's contention, decide
  const sim::fabric_shape f{.nodes = 3, .per_node = 2, .rails = 1};
  const auto healthy = sim::run_jobs(f, sim::emulator_noise(), {}, 2000, 31, 0, true, 0.003);
  CHECK(healthy.false_jobs <= 12);
  CHECK(healthy.retested > 200);  // the runs did show parts below --slow: the retest cleared them
  // a rank at half, which one run can never tell from the emulator's contention, is found alone
  const auto rank = sim::run_jobs(f, sim::emulator_noise(), sim::parse_fault("rank:50"), 500, 32, 0, true, 0.003);
  CHECK(rank.named >= 375);
  // on a real fabric's noise a node at 70 % is named whenever its run shows it
  const auto nic = sim::run_jobs(f, sim::nic_noise(), sim::parse_fault("node:70"), 300, 33, 0, true, 0.001);
  CHECK(nic.named >= 297);
  CHECK(nic.false_jobs <= 1);
}

TEST_CASE("a spread run judged from its pairs only reads as the same run held N x N") {
  // at thousands of ranks a spread run's matrices hold its pairs only; the judging walks those
  // pairs and must come to the same verdict, retest plan included, as over the full matrices
  for (const auto& [noise, fault] :
       {std::pair{sim::emulator_noise(), "nic:50"}, std::pair{sim::nic_noise(), "uplink:50"}}) {
    sim::fabric_shape f{
        .nodes = 24, .per_node = 2, .rails = 2, .leaves = 4, .pattern = pattern_kind::spread, .partners = 6};
    const auto sparse = sim::run_jobs(f, noise, sim::parse_fault(fault), 25, 51, 0, true);
    f.dense = true;
    const auto dense = sim::run_jobs(f, noise, sim::parse_fault(fault), 25, 51, 0, true);
    CHECK(sparse.named == dense.named);
    CHECK(sparse.named > 0);
    CHECK(sparse.false_jobs == dense.false_jobs);
    CHECK(sparse.false_nodes == dense.false_nodes);
    CHECK(sparse.run_named == dense.run_named);
    CHECK(sparse.retested == dense.retested);
    CHECK(sparse.alone == dense.alone);
    CHECK(sparse.false_kinds == dense.false_kinds);
  }
}

TEST_CASE("the simulator tells a false drain from a part its noise model drew slow by --slow's definition") {
  // ranks far apart in the run, one run judged alone at a loose level (20 % a run): it drains
  // the slowest nodes
  auto spread_out = sim::nic_noise();
  spread_out.sender = spread_out.receiver = 0.15;
  const sim::fabric_shape f{.nodes = 8, .per_node = 1, .rails = 1};
  // each keeping all of its run's effect alone: most of what is drained is lastingly slow
  spread_out.keep = 1;
  const auto kept = sim::run_jobs(f, spread_out, {}, 60, 41, 0, false, 0.2);
  REQUIRE(kept.false_nodes > 0);
  CHECK(2 * kept.drawn_slow_nodes > kept.false_nodes);
  CHECK(kept.drawn_slow_nodes <= kept.false_nodes);
  // the same runs, keeping nothing alone: the same drains, none of them slow by definition
  spread_out.keep = 0;
  const auto passing = sim::run_jobs(f, spread_out, {}, 60, 41, 0, false, 0.2);
  CHECK(passing.false_nodes == kept.false_nodes);
  CHECK(passing.drawn_slow_nodes == 0);
}

TEST_CASE("a fault the simulator cannot draw is refused with the form it takes") {
  CHECK_THROWS_AS(sim::parse_fault("switch:50"), std::invalid_argument);
  CHECK_THROWS_AS(sim::parse_fault("node:150"), std::invalid_argument);
  CHECK(sim::parse_fault("nic:70").fraction == doctest::Approx(0.7));
}

TEST_CASE("recorded runs read back as the finder saw them; a record cut short names its line") {
  std::istringstream ok(
      "run a.h5:0000 2 4096 1 100 60 node\n"
      "node 0 1\nrail -1 -1\n"
      "tx_bw nan 4096000.0 2048000.0 nan\ntx_msgs 0 1000 500 0\ntx_s nan 1 1 nan\nflags 0 0 0 0\n"
      "round -1 0 0 -1\n");
  const auto runs = sim::read_runs(ok);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].label == "a.h5:0000");
  CHECK(runs[0].cq_mod == 100);
  CHECK(runs[0].slow_pct == 60);
  CHECK(runs[0].recorded == "node");
  CHECK(std::isnan(runs[0].m.tx_bw.at(0, 0)));
  CHECK(runs[0].m.tx_msgs.at(1, 0) == 500);
  CHECK(runs[0].m.round.at(0, 0) == -1);
  std::istringstream cut("run a.h5:0000 2 4096 1 100 60 node\nnode 0 1\nrail -1 -1\ntx_bw nan 1 2\n");
  CHECK_THROWS_WITH_AS(sim::read_runs(cut), doctest::Contains("line 4"), std::runtime_error);
}

TEST_CASE("rdmamesh-sim judge: another tool's per-pair figures named by the finder's own rule") {
  // 3 nodes x 2 ranks; node 1's sends to the other nodes at half, every other pair near 1;
  // node 2's leaf uplink given so that its candidate is judged too
  std::ostringstream in;
  in << R"({"ranks": 6, "node": [0, 0, 1, 1, 2, 2], "slow_pct": 90, "uplinks": [[7, [4, 5]]], "runs": [)"
     << R"({"label": "mesh 4K", "round": [)";
  for (int i = 0; i < 36; ++i) in << (i ? "," : "") << (i % 7 == 0 ? -1 : 0);
  in << R"(], "value": [)";
  for (int a = 0; a < 6; ++a) {
    for (int b = 0; b < 6; ++b) {
      const bool half = a / 2 == 1 && b / 2 != 1;
      in << (a + b ? "," : "") << (half ? 0.5 : 1.0) * (1 + 0.01 * ((a * 6 + b) % 3));
    }
  }
  in << "]}]}";
  std::istringstream src(in.str());
  std::ostringstream out;
  sim::judge_json(src, out);
  const std::string got = out.str();
  CHECK(got.find(R"("kind":"node")") != std::string::npos);
  CHECK(got.find(R"("node":1)") != std::string::npos);
  CHECK(got.find(R"("recv_pct":null)") != std::string::npos);  // its receives were not named
  CHECK(got.find(R"("kind":"uplink")") == std::string::npos);
  CHECK(got.find(R"("label":"mesh 4K")") != std::string::npos);

  SUBCASE("input it cannot read is refused by what is missing or wrong") {
    std::istringstream short_value(
        R"({"ranks": 2, "node": [0, 1], "runs": [{"value": [1, 1], "round": [0, 0, 0, 0]}]})");
    CHECK_THROWS_WITH_AS(sim::judge_json(short_value, out), "judge: 'value' holds 2 values, wanted 4",
                         std::runtime_error);
    std::istringstream no_node(R"({"ranks": 2, "runs": []})");
    CHECK_THROWS_WITH_AS(sim::judge_json(no_node, out), "judge: no 'node' in the input", std::runtime_error);
    std::istringstream bad_uplink(R"({"ranks": 2, "node": [0, 1], "uplinks": [[3, [5]]], "runs": []})");
    CHECK_THROWS_WITH_AS(sim::judge_json(bad_uplink, out), "judge: uplink 3 holds rank 5 of 2", std::runtime_error);
  }
}
