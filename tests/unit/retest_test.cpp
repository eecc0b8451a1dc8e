// --retest: which pairs go again, how they are packed so each runs alone, and the verdict.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "rdmamesh/plan/schedule.hpp"
#include "rdmamesh/stats/retest.hpp"
#include "rdmamesh/stats/verdict.hpp"

using namespace rdmamesh;

namespace {
struct run_matrices3 {
  stats::square<double> bw{4, 0};
  stats::square<std::uint8_t> flags{4, 0};
  stats::square<std::int32_t> round{4, 0};
};
run_matrices3 mesh4(double slow_row_value) {
  run_matrices3 m;
  for (std::uint32_t a = 0; a < 4; ++a) {
    for (std::uint32_t b = 0; b < 4; ++b) m.bw.at(a, b) = a == b ? NAN : (a == 2 ? slow_row_value : 100.0 + a + b);
  }
  return m;
}
}  // namespace

TEST_CASE("alone rounds: no rank in two pairs of a round, every pair once, in order") {
  const stats::pair_list pairs{{2, 0}, {2, 1}, {2, 3}, {0, 1}, {1, 3}, {0, 3}, {9, 1}, {1, 1}};
  const std::vector<std::uint32_t> own_port{0, 1, 2, 3};  // a port each
  const auto rounds = plan::alone_rounds(pairs, own_port);
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  for (const auto& round : rounds) {
    std::set<std::uint32_t> busy;
    for (const auto& [a, b] : round) {
      CHECK(busy.insert(a).second);
      CHECK(busy.insert(b).second);
      CHECK(seen.insert({a, b}).second);
    }
  }
  CHECK(seen.size() == 6);  // (9,1) is outside the job and (1,1) no pair: dropped
  CHECK(rounds[0].front() == std::pair<std::uint32_t, std::uint32_t>{2, 0});
  // the listed schedule plays exactly those roles
  const plan::subset_schedule sched(rounds, 4);
  CHECK(sched.rounds() == rounds.size());
  CHECK(sched.pattern() == pattern_kind::pairs);
  const auto r2 = sched.role(0, 2);
  CHECK(r2.send_to == std::vector<std::uint32_t>{0});
  CHECK(sched.role(0, 0).recv_from == std::vector<std::uint32_t>{2});
}

TEST_CASE("alone rounds: ranks that share a NIC port are never in two pairs of one round") {
  // three nodes of two ranks, one port each: a pair alone has both its ports to itself
  const std::vector<std::uint32_t> port_of{0, 0, 1, 1, 2, 2};
  const stats::pair_list pairs{{0, 2}, {1, 4}, {3, 5}, {4, 0}, {5, 1}, {2, 3}, {0, 1}};
  const auto rounds = plan::alone_rounds(pairs, port_of);
  std::size_t placed = 0;
  for (const auto& round : rounds) {
    std::set<std::uint32_t> busy;
    for (const auto& [a, b] : round) {
      CHECK(busy.insert(port_of[a]).second);
      if (port_of[b] != port_of[a]) CHECK(busy.insert(port_of[b]).second);
      ++placed;
    }
  }
  CHECK(placed == pairs.size());
  // a pair within node 2 (one port) fits beside one between nodes 1 and 3, first come first
  CHECK(rounds[1] == stats::pair_list{{1, 4}, {2, 3}});
  CHECK(rounds.size() == 5);
}

TEST_CASE("plan: a slow rank's sends go again, slowest first, with controls clear of that rank") {
  auto m = mesh4(30);
  m.bw.at(2, 1) = 20;
  m.flags.at(0, 3) = 1;  // failed pairs are no retest: their events say why
  const std::vector<std::int32_t> one_node(4, 0);
  const auto p = stats::plan_retest(m.bw, m.flags, m.round, stats::pair_classes(4, one_node), 90, 8, 2);
  REQUIRE(p.slow.size() == 3);
  CHECK(p.slow[0] == std::pair<std::uint32_t, std::uint32_t>{2, 1});
  for (const auto& [a, b] : p.slow) CHECK(a == 2);
  // two asked for, and the rest of the pairs as clear of rank 2, toward eight: the five left
  REQUIRE(p.controls.size() == 5);
  for (const auto& [a, b] : p.controls) {
    CHECK(a != 2);
    CHECK(b != 2);
    CHECK_FALSE((a == 0 && b == 3));
  }
  CHECK(stats::plan_retest(mesh4(100).bw, m.flags, m.round, stats::pair_classes(4, one_node), 90, 8, 2).slow.empty());
  CHECK(stats::plan_retest(m.bw, m.flags, m.round, stats::pair_classes(4, one_node), 90, 1, 2).slow.size() == 1);
}

TEST_CASE("plan: a slow pair through a named uplink is the uplink's evidence, not a link to retest") {
  // ranks 0 1 under leaf 0, 2 3 under leaf 1; rank 2's sends slow, its leaf's uplink named
  auto m = mesh4(30);
  const std::vector<std::int32_t> node_of{0, 1, 2, 3};
  const std::vector<stats::switch_group> uplinks{{0, {1, 1, 0, 0}}, {1, {0, 0, 1, 1}}};
  const stats::pair_classes classes(4, node_of, uplinks);
  const auto all = stats::plan_job_retest(m.bw, m.flags, m.round, classes, 90, {});
  CHECK(all.slow.size() == 3);  // 2 -> 0, 1, 3
  const std::vector<stats::outlier> found{
      {stats::outlier_kind::uplink, stats::outlier_basis::noise, 1, -1, -1, 30, NAN, 2, 0}};
  const auto p = stats::plan_job_retest(m.bw, m.flags, m.round, classes, 90, found, uplinks);
  REQUIRE(p.slow.size() == 1);  // only 2 -> 3, within its leaf
  CHECK(p.slow[0] == std::pair<std::uint32_t, std::uint32_t>{2, 3});
}

TEST_CASE("plan: the links the run named are marked among the slow pairs; a pair alone confirms only those") {
  auto m = mesh4(30);  // rank 2's sends slow
  const std::vector<std::int32_t> node_of{0, 1, 2, 3};
  const stats::pair_classes classes(4, node_of);
  const std::vector<stats::outlier> found{
      {stats::outlier_kind::link, stats::outlier_basis::noise, -1, 2, 3, 30, NAN, 1, 0},
      {stats::outlier_kind::link, stats::outlier_basis::noise, -1, 0, 1, 30, NAN, 1, 0}};  // not slow: not retested
  const auto p = stats::plan_job_retest(m.bw, m.flags, m.round, classes, 90, found);
  REQUIRE(p.links.size() == 1);
  CHECK(p.links[0] == std::pair<std::uint32_t, std::uint32_t>{2, 3});
  stats::square<double> alone(4, NAN);
  for (const auto& [a, b] : p.controls) alone.at(a, b) = 400;
  for (const auto& [a, b] : p.slow) alone.at(a, b) = 40;
  for (const auto& v : stats::judge_retest(p, m.bw, alone, 90, classes, 1.0)) {
    CAPTURE(v.dst);
    CHECK(v.still_slow);
    CHECK(v.named == (v.dst == 3));
  }
}

TEST_CASE("a retest round: ten messages for a pair at half the slowest control's rate, within 0.3 s and -D") {
  stats::square<double> bw(4, 1e6);  // bytes/s: 244 messages of 4 KiB a second
  stats::retest_plan p;
  p.slow = {{2, 1}, {2, 3}};
  p.controls = {{0, 1}, {1, 0}};
  bw.at(2, 1) = bw.at(2, 3) = 1;  // the slow pairs' own rates decide nothing: their count is the test
  // at half of 244 a second, ten messages take 0.08 s: the short round stands
  CHECK(stats::retest_round_seconds(p, bw, 4096, 0.3, 2, 10) == doctest::Approx(0.3));
  // a control at a tenth of that (a loaded host): 0.82 s
  bw.at(1, 0) = 1e5;
  CHECK(stats::retest_round_seconds(p, bw, 4096, 0.3, 2, 10) == doctest::Approx(10 * 4096 / 0.5e5));
  // at a hundredth, 8 s: the run's own -D bounds it
  bw.at(1, 0) = 1e4;
  CHECK(stats::retest_round_seconds(p, bw, 4096, 0.3, 2, 10) == doctest::Approx(2));
  // no control measured in the run: -D
  bw.at(0, 1) = bw.at(1, 0) = 0;
  CHECK(stats::retest_round_seconds(p, bw, 4096, 0.3, 1, 10) == doctest::Approx(1));
  // -D shorter than 0.3 s: -D
  bw.at(0, 1) = bw.at(1, 0) = 1e6;
  CHECK(stats::retest_round_seconds(p, bw, 4096, 0.2, 0.2, 10) == doctest::Approx(0.2));
}

TEST_CASE("an uplink's pairs: one end under it, either way, as the pair classes count the uplinks crossed") {
  // 3 leaves of one node each, 2 ranks a node: leaf 0's uplink holds ranks 0 and 1
  const std::vector<std::int32_t> node_of{0, 0, 1, 1, 2, 2};
  const std::vector<stats::switch_group> uplinks{
      {0, {1, 1, 0, 0, 0, 0}}, {1, {0, 0, 1, 1, 0, 0}}, {2, {0, 0, 0, 0, 1, 1}}};
  CHECK_FALSE(uplinks[0].crosses(0, 1));  // within the leaf
  CHECK(uplinks[0].crosses(0, 2));
  CHECK(uplinks[0].crosses(2, 0));        // acknowledgements come back through it too
  CHECK_FALSE(uplinks[0].crosses(2, 4));  // another leaf's pair
  CHECK_FALSE(uplinks[0].crosses(0, 6));  // a rank it does not list crosses nothing
  const stats::pair_classes cls(6, node_of, uplinks);
  const int same_leaf = cls(0, 1);
  for (std::uint32_t a = 0; a < 6; ++a)
    for (std::uint32_t b = 0; b < 6; ++b) {
      if (a == b || node_of[a] == node_of[b]) continue;
      const auto crossed = std::ranges::count_if(uplinks, [&](const auto& u) { return u.crosses(a, b); });
      CAPTURE(a);
      CAPTURE(b);
      CHECK(crossed == 2);  // leaf-spine-leaf
      CHECK(cls(a, b) == 1 + crossed);
    }
  CHECK(same_leaf == 0);
}

TEST_CASE("plan: controls of the slow pairs' class, not loopback pairs beside cross-node ones") {
  // 3 nodes x 2 ranks; pairs within a node run twice as fast as pairs across (rxe loopback)
  const std::vector<std::int32_t> node_of{0, 0, 1, 1, 2, 2};
  stats::square<double> bw(6, NAN);
  stats::square<std::uint8_t> flags(6, 0);
  stats::square<std::int32_t> round(6, 0);
  for (std::uint32_t a = 0; a < 6; ++a)
    for (std::uint32_t b = 0; b < 6; ++b)
      if (a != b) bw.at(a, b) = node_of[a] == node_of[b] ? 200.0 + a : 100.0 + a + b;
  for (std::uint32_t b : {0u, 1u, 4u, 5u}) bw.at(2, b) = bw.at(3, b) = 20;  // node 1's sends
  const auto p = stats::plan_retest(bw, flags, round, stats::pair_classes(6, node_of), 90, 12, 4);
  REQUIRE(p.slow.size() == 8);
  // one path slow: every healthy pair of it clear of node 1 (eight), and four loopback pairs that
  // lend the test their degrees of freedom (read against their own path's centre, not its)
  REQUIRE(p.controls.size() == 12);
  std::size_t across = 0;
  for (const auto& [a, b] : p.controls) {
    across += node_of[a] != node_of[b];
    CHECK(node_of[a] != 1);
    CHECK(node_of[b] != 1);
  }
  CHECK(across == 8);
  // alone, the slow pairs read against the cross-node controls only: 20 % of their 100-odd
  stats::square<double> alone = bw;
  for (const auto& [a, b] : p.slow) alone.at(a, b) = 0.2 * (100.0 + a + b);
  const auto v = stats::judge_retest(p, bw, alone, 90, stats::pair_classes(6, node_of), 1.0);
  for (const auto& x : v) {
    CHECK(x.pct == doctest::Approx(20).epsilon(0.1));
    CHECK(x.controls == 8);
  }
}

TEST_CASE("plan and verdict: a pair between rails is judged against controls between rails") {
  // CI's sick health job on the rail cluster, 2026-11-26: 3 nodes x 2 NICs, one rank per NIC;
  // pairs between rails run at half a rail's speed (they cross the spine), and rank 5's pairs
  // between rails alone read 31-47 % of four controls on rail 0, so node3 was drained
  const std::vector<std::int32_t> node_of{0, 0, 1, 1, 2, 2}, rail_of{0, 1, 0, 1, 0, 1};
  const auto nics = stats::nic_groups(node_of, rail_of);
  const stats::pair_classes class_of(6, node_of, {}, nics);
  CHECK(class_of(0, 2) != class_of(0, 3));  // a rail, and between rails
  CHECK(class_of(0, 1) != class_of(0, 3));  // within a node, and across
  CHECK(stats::pair_classes::across(class_of(0, 3)));
  CHECK_FALSE(stats::pair_classes::across(class_of(0, 1)));
  stats::square<double> bw(6, NAN);
  stats::square<std::uint8_t> flags(6, 0);
  stats::square<std::int32_t> round(6, 0);
  for (std::uint32_t a = 0; a < 6; ++a)
    for (std::uint32_t b = 0; b < 6; ++b)
      if (a != b) bw.at(a, b) = (rail_of[a] == rail_of[b] ? 200.0 : 100.0) + a + b;
  // within a node (between its rails) slower still: slow only against their own class's median
  for (std::uint32_t a : {0u, 2u, 4u}) bw.at(a, a + 1) = bw.at(a + 1, a) = 60 + a;
  for (std::uint32_t b : {0u, 1u, 2u, 4u, 5u}) bw.at(3, b) = 10;  // rank 3's NIC, shaped
  bw.at(5, 0) = 50;                                               // rank 5's pairs: contention
  bw.at(5, 4) = 50;
  const auto p = stats::plan_retest(bw, flags, round, class_of, 90, 12, 2);
  std::set<int> slow_classes, control_classes;
  for (const auto& [a, b] : p.slow) slow_classes.insert(class_of.path(a, b));
  for (const auto& [a, b] : p.controls) {
    control_classes.insert(class_of.path(a, b));
    CHECK((a != 3 && b != 3));  // clear of the shaped NIC's rank, each class having others
  }
  CHECK(slow_classes.size() >= 2);
  CHECK(control_classes == slow_classes);  // every path of the slow pairs has its controls
  for (const auto& [a, b] : p.slow) CHECK((a == 3 || a == 5 || b == 3 || node_of[a] != node_of[b]));
  // alone, every healthy pair runs at its class's speed; rank 3's sends at a tenth of it
  stats::square<double> alone(6, NAN);
  for (const auto& [a, b] : p.controls) alone.at(a, b) = rail_of[a] == rail_of[b] ? 400 : 200;
  for (const auto& [a, b] : p.slow) alone.at(a, b) = a == 3 ? 20 : rail_of[a] == rail_of[b] ? 400 : 200;
  for (const auto& v : stats::judge_retest(p, bw, alone, 90, class_of, 1.0)) {
    CAPTURE(v.src);
    CAPTURE(v.dst);
    CHECK(v.still_slow == (v.src == 3));
    CHECK(v.controls >= 1);
    if (v.src != 3) CHECK(v.pct == doctest::Approx(100));
  }
}

TEST_CASE("verdict: still slow alone where its interval lies below --slow % of the controls alone") {
  const auto before = mesh4(30);
  stats::retest_plan p;
  p.slow = {{2, 0}, {2, 1}};
  p.controls = {{0, 1}, {1, 3}, {3, 0}};
  stats::square<double> alone(4, NAN);
  alone.at(0, 1) = 400;
  alone.at(1, 3) = 420;
  alone.at(3, 0) = 380;
  alone.at(2, 0) = 120;  // 30 % of 400: the link or NIC
  alone.at(2, 1) = 396;  // 99 %: it was contention
  const auto v =
      stats::judge_retest(p, before.bw, alone, 90, stats::pair_classes(4, std::vector<std::int32_t>(4, 0)), 1.0);
  REQUIRE(v.size() == 2);
  CHECK(v[0].pct == doctest::Approx(30).epsilon(0.02));
  CHECK(v[0].hi_pct < 90);
  CHECK(v[0].still_slow);
  CHECK(v[0].before == doctest::Approx(30));
  CHECK(v[1].pct == doctest::Approx(99).epsilon(0.02));
  CHECK_FALSE(v[1].still_slow);
  CHECK(v[1].lo_pct < 90);  // three controls: its interval spans --slow, undecided
  CHECK_FALSE(v[1].fine);
  CHECK_FALSE(v[0].named);  // the plan names no link: alone it confirms none
  // no control measured: nothing decided either way (neither fine nor a link's evidence)
  p.controls.clear();
  const auto none =
      stats::judge_retest(p, before.bw, alone, 90, stats::pair_classes(4, std::vector<std::int32_t>(4, 0)), 1.0);
  for (const auto& u : none) {
    CHECK(std::isnan(u.pct));
    CHECK_FALSE(u.still_slow);
    CHECK_FALSE(u.fine);
  }
}

TEST_CASE("verdict: a pair alone within its controls' spread is not still slow, even under --slow") {
  // controls alone at 0.121, 0.117, 0.147, 0.137 Gb/s: pairs at 84-89 % of them are within what
  // healthy pairs alone differ by (a bare 90 % bound named healthy links); one at 17 % is not
  const auto before = mesh4(30);
  stats::retest_plan p;
  p.slow = {{2, 0}, {2, 1}, {2, 3}};
  p.controls = {{0, 1}, {1, 3}, {3, 0}, {0, 3}};
  stats::square<double> alone(4, NAN);
  alone.at(0, 1) = 121;
  alone.at(1, 3) = 117;
  alone.at(3, 0) = 147;
  alone.at(0, 3) = 137;
  alone.at(2, 0) = 108;  // 84 %
  alone.at(2, 1) = 115;  // 89 %
  alone.at(2, 3) = 22;   // 17 %
  const auto v =
      stats::judge_retest(p, before.bw, alone, 90, stats::pair_classes(4, std::vector<std::int32_t>(4, 0)), 1.0);
  REQUIRE(v.size() == 3);
  for (std::size_t i : {0u, 1u}) {
    CAPTURE(i);
    CHECK_FALSE(v[i].still_slow);
    CHECK_FALSE(v[i].fine);  // nor fine: its interval spans 90 %
    CHECK(v[i].lo_pct < 90);
    CHECK(v[i].hi_pct > 90);
  }
  CHECK(v[2].still_slow);
  CHECK(v[2].controls == 4);
}

TEST_CASE("verdict: how closely the controls agree sets how far below --slow a pair must read") {
  // a real NIC fabric: pairs alone agree to about 1 %, and a pair at 85 % alone is below --slow
  // beyond doubt; where the controls spread as the emulated cluster's do, the same 85 % is
  // undecided (neither slow nor fine: it clears nothing)
  const auto before = mesh4(30);
  stats::retest_plan p;
  p.slow = {{2, 0}, {2, 1}, {2, 3}};
  p.controls = {{0, 1}, {1, 3}, {3, 0}, {0, 3}};
  stats::square<double> alone(4, NAN);
  alone.at(0, 1) = 100;
  alone.at(1, 3) = 101;
  alone.at(3, 0) = 99;
  alone.at(0, 3) = 100;
  alone.at(2, 0) = 85;
  alone.at(2, 1) = 95;
  alone.at(2, 3) = 60;
  const stats::pair_classes one_node(4, std::vector<std::int32_t>(4, 0));
  auto v = stats::judge_retest(p, before.bw, alone, 90, one_node, 1.0);
  REQUIRE(v.size() == 3);
  CHECK(v[0].still_slow);
  CHECK(v[1].fine);
  CHECK(v[2].still_slow);
  alone.at(1, 3) = 120;
  alone.at(3, 0) = 85;
  alone.at(0, 3) = 105;
  v = stats::judge_retest(p, before.bw, alone, 90, one_node, 1.0);
  CHECK_FALSE(v[0].still_slow);
  CHECK_FALSE(v[0].fine);
  CHECK(v[2].hi_pct > v[2].pct);
}

TEST_CASE("verdict: a named link counts where its pair alone is below --slow beyond chance at the job's level") {
  // one pair alone is one sample: at 10 % of controls that spread fourfold (0.055-0.203 Gb/s on
  // a busy host) it is still slow, but not beyond chance at 0.1 %; beside controls that agree it is
  const std::vector<std::int32_t> node_of(4, 0);
  const stats::pair_classes classes(4, node_of);
  const auto before = mesh4(30);
  stats::retest_plan p;
  p.slow = {{1, 2}, {2, 0}};
  p.links = {{2, 0}};
  p.controls = {{0, 1}, {1, 3}, {3, 0}, {0, 3}};
  stats::square<double> alone(4, NAN);
  alone.at(0, 1) = 203;
  alone.at(1, 3) = 55;
  alone.at(3, 0) = 86;
  alone.at(0, 3) = 115;
  alone.at(1, 2) = 44;
  alone.at(2, 0) = 10;
  const stats::model_settings ms{.alpha = 1e-3, .slow_pct = 90};
  const auto count = [&](const stats::square<double>& a) {
    auto v = stats::judge_retest(p, before.bw, a, 90, classes, 1.0);
    stats::judge_model_retest({}, a, classes, ms, 1.0, {}, v);
    return v;
  };
  auto v = count(alone);
  REQUIRE(v.size() == 2);
  CHECK_FALSE(v[0].still_slow);  // 44 %, its interval across --slow
  CHECK(v[1].still_slow);
  CHECK(v[1].named);
  CHECK(v[1].p_slow > ms.alpha);
  CHECK_FALSE(v[1].counted);
  for (const auto& [a, b] : p.controls) alone.at(a, b) = 100 + a;
  v = count(alone);
  CHECK(v[1].counted);
  CHECK_FALSE(v[0].counted);  // still slow, but the run named no link there
}

TEST_CASE("verdict: a pair whose path has one control measured is undecided") {
  // one control is one sample, no centre: vm.rails' within-node path once had one, at three
  // times the speed of its pairs alone, and every such pair read still slow against it
  const std::vector<std::int32_t> node_of{0, 0, 1, 1};
  const stats::pair_classes class_of(4, node_of);
  const auto before = mesh4(30);
  stats::retest_plan p;
  p.slow = {{1, 0}};
  p.controls = {{2, 3}, {0, 2}, {1, 3}, {2, 0}};
  stats::square<double> alone(4, NAN);
  alone.at(2, 3) = 260;  // the within-node path's one control
  alone.at(0, 2) = 90;
  alone.at(1, 3) = 100;
  alone.at(2, 0) = 110;
  alone.at(1, 0) = 70;
  const auto v = stats::judge_retest(p, before.bw, alone, 90, class_of, 1.0);
  REQUIRE(v.size() == 1);
  CHECK(std::isnan(v[0].pct));
  CHECK_FALSE(v[0].still_slow);
  CHECK_FALSE(v[0].fine);
}

TEST_CASE("pairs travel as text between ranks unchanged") {
  const stats::pair_list pairs{{0, 1}, {65535, 7}, {3, 2}};
  CHECK(stats::decode_pairs(stats::encode_pairs(pairs)) == pairs);
  CHECK(stats::decode_pairs("").empty());
}

namespace {
// A spread-like run on 6 one-rank nodes: each rank met two partners (r + 1, r + 2), the rest
// unmeasured; rank 0's sends to the two it met slow, in the run and alone (their path, e.g. a
// switch port both sit behind), its sends to anyone else fine
struct spread6 {
  std::vector<std::int32_t> node_of{0, 1, 2, 3, 4, 5};
  stats::square<double> bw{6, NAN}, alone{6, NAN};
  stats::square<std::uint8_t> flags{6, 0};
  stats::square<std::int32_t> round{6, -1};
  spread6() {
    for (std::uint32_t a = 0; a < 6; ++a) {
      for (std::uint32_t k : {1u, 2u}) {
        const std::uint32_t b = (a + k) % 6;
        bw.at(a, b) = 100 + a;
        round.at(a, b) = static_cast<std::int32_t>(k - 1);
      }
      for (std::uint32_t b = 0; b < 6; ++b)
        if (a != b) alone.at(a, b) = 100;
    }
    bw.at(0, 1) = 30;
    bw.at(0, 2) = 40;
    alone.at(0, 1) = alone.at(0, 2) = 30;
  }
};
}  // namespace

TEST_CASE("spread: a rank slow only toward the partners it met is cleared by fresh partners alone") {
  const auto verdict_of = [](const spread6& s) {
    const stats::pair_classes classes(6, s.node_of);
    const std::vector<stats::outlier> found{
        {stats::outlier_kind::rank, stats::outlier_basis::noise, 0, 0, -1, 35, NAN, 2, 0}};
    stats::outlier_report rep;
    rep.found = found;
    stats::run_matrices m;
    m.tx_bw = s.bw;
    m.flags = s.flags;
    m.round = s.round;
    const stats::model_settings ms{.alpha = 1e-3, .slow_pct = 90};
    rep.parts = stats::model_parts(stats::fit_effects(m, s.node_of), s.node_of, {}, ms);
    const auto plan = stats::plan_full_retest(m, classes, ms, rep, s.node_of, {});
    std::vector<stats::judged_run> runs{{0, "spread 4 KiB", &rep, true, {}}};
    runs[0].alone = stats::judge_retest(plan.pairs, s.bw, s.alone, 90, classes, 1.0);
    runs[0].parts = stats::judge_model_retest(plan.model, s.alone, classes, ms, 1.0);
    runs[0].retested = true;
    runs[0].alpha = ms.alpha;
    return stats::fold(runs, s.node_of);
  };
  const auto counted = [](const stats::job_verdict& v, std::int32_t rank) {
    return std::ranges::any_of(v.causes, [&](const auto& c) { return c.rank == rank && c.counted; });
  };
  // beside fresh partners, fine alone, most of its sends are fine: rank 0 is not counted
  const auto v = verdict_of(spread6{});
  CHECK_FALSE(counted(v, 0));
  CHECK(v.status == stats::health::healthy);
  REQUIRE(v.causes.size() == 1);
  CHECK(v.causes[0].cleared);
  CHECK(v.causes[0].alone_pairs == 5);  // the two it met and three fresh partners
  // a rank slow toward every partner is counted, fresh partners or not
  spread6 bad;
  for (std::uint32_t b = 1; b < 6; ++b) bad.alone.at(0, b) = 30;
  const auto w = verdict_of(bad);
  CHECK(w.status == stats::health::degraded);
  CHECK(counted(w, 0));
}

TEST_CASE("verdict: a pair slow alone because its own host held it back is undecided, not its link's") {
  // 8 ranks, one pair per round: what each end's engine counted in its round (every other rank
  // idle there). Controls (rounds 0-3) had half a CPU and found work on a fifth of their passes
  // idle; the slow pairs (rounds 4-5) read 45 % of them alone.
  const std::uint32_t n = 8, rounds = 6;
  stats::retest_plan p;
  p.controls = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  p.slow = {{5, 7}, {4, 6}};
  stats::square<std::int32_t> round(n, -1);
  stats::square<double> alone(n, NAN), before(n, 100);
  for (std::uint32_t i = 0; i < p.controls.size(); ++i) {
    round.at(p.controls[i].first, p.controls[i].second) = static_cast<std::int32_t>(i);
    alone.at(p.controls[i].first, p.controls[i].second) = 200 + i;
  }
  round.at(5, 7) = 4;
  round.at(4, 6) = 5;
  alone.at(5, 7) = alone.at(4, 6) = 91;
  std::vector<engine::host_use> host(std::size_t{n} * rounds);
  const auto set = [&](std::uint32_t rank, std::uint32_t r, double cpu, double idle) {
    auto& h = host[std::size_t{rank} * rounds + r];
    h = {.wall_s = 1, .cpu_s = cpu, .passes = 1000, .idle_passes = 1000 * idle, .known = true};
  };
  for (std::uint32_t i = 0; i < 4; ++i) {
    set(p.controls[i].first, i, 0.5, 0.2);
    set(p.controls[i].second, i, 0.5, 0.2);
  }
  // 5 -> 7: its sender had a fifth of a CPU and found work on nearly every pass (starved);
  // 4 -> 6: its ends had a fifth of a CPU too, but found nothing to do on most passes: they
  // waited on the pair's link and gave the CPU away
  set(5, 4, 0.2, 0.05);
  set(7, 4, 0.5, 0.3);
  set(4, 5, 0.2, 0.8);
  set(6, 5, 0.25, 0.9);
  const auto figures = stats::pair_host_figures(round, host, rounds);
  CHECK(figures.cpu.at(5, 7) == doctest::Approx(0.2));
  CHECK(figures.idle.at(5, 7) == doctest::Approx(0.05));
  CHECK(std::isnan(figures.cpu.at(5, 6)));  // not measured
  const stats::pair_classes one_class(n, std::vector<std::int32_t>(n, 0));
  const auto v = stats::judge_retest(p, before, alone, 90, one_class, 1.0, &figures);
  REQUIRE(v.size() == 2);
  CHECK(v[0].pct == doctest::Approx(45).epsilon(0.01));
  CHECK(v[0].starved);
  CHECK_FALSE(v[0].still_slow);
  CHECK_FALSE(v[0].fine);
  CHECK(v[0].cpu_share == doctest::Approx(0.2));
  CHECK(v[0].controls_cpu_share == doctest::Approx(0.5));
  CHECK_FALSE(v[1].starved);
  CHECK(v[1].still_slow);

  SUBCASE("a CPU deficit smaller than half the shortfall does not explain it: still slow") {
    set(5, 4, 0.4, 0.05);
    const auto more_cpu = stats::pair_host_figures(round, host, rounds);
    const auto w = stats::judge_retest(p, before, alone, 90, one_class, 1.0, &more_cpu);
    CHECK(w[0].still_slow);
    CHECK_FALSE(w[0].starved);
  }
  SUBCASE("an end that found nothing to do on most passes did not hold the pair back, whatever its CPU") {
    // 5 -> 7's receiver polled an empty queue on nearly every pass with even less of a CPU: the
    // figures are its busy sender's, and the pair is still starved
    set(7, 4, 0.1, 0.99);
    const auto idle_receiver = stats::pair_host_figures(round, host, rounds);
    CHECK(idle_receiver.cpu.at(5, 7) == doctest::Approx(0.2));
    CHECK(idle_receiver.idle.at(5, 7) == doctest::Approx(0.05));
    const auto w = stats::judge_retest(p, before, alone, 90, one_class, 1.0, &idle_receiver);
    CHECK(w[0].starved);
    CHECK_FALSE(w[0].still_slow);
    // and where neither end was busy, the one with less of a CPU, idle: not starved
    CHECK(idle_receiver.cpu.at(4, 6) == doctest::Approx(0.2));
    CHECK_FALSE(w[1].starved);
  }
  SUBCASE("without host figures the reading is the rates' alone") {
    CHECK(stats::judge_retest(p, before, alone, 90, one_class, 1.0)[0].still_slow);
  }
}

TEST_CASE("each control alone reads as % of the other controls of its path, as a pair under test does") {
  // 2 nodes x 2 ranks: controls across nodes at 100, 110, 40 and 90; within a node 200 and 180
  const std::vector<std::int32_t> node_of{0, 0, 1, 1};
  const stats::pair_classes class_of(4, node_of);
  stats::retest_plan plan;
  plan.controls = {{0, 2}, {1, 3}, {2, 0}, {3, 1}, {0, 1}, {2, 3}};
  stats::square<double> alone(4, NAN);
  alone.at(0, 2) = 100;
  alone.at(1, 3) = 110;
  alone.at(2, 0) = 40;
  alone.at(3, 1) = 90;
  alone.at(0, 1) = 200;
  alone.at(2, 3) = 180;
  const auto pct = stats::control_pcts(plan, alone, class_of);
  REQUIRE(pct.size() == 6);
  // left out of its own reference: the slow one reads 40 % of the others' median, not of a
  // median it pulls down
  CHECK(pct[0] == doctest::Approx(100.0 / 0.9));  // 100 / median(110, 40, 90)
  CHECK(pct[1] == doctest::Approx(110.0 / 0.9));  // 110 / median(100, 40, 90)
  CHECK(pct[2] == doctest::Approx(40));           // 40 / median(100, 110, 90)
  CHECK(pct[3] == doctest::Approx(90));           // 90 / median(100, 110, 40)
  // a class with one other control borrows all the others: 200 / median(100, 110, 40, 90, 180)
  CHECK(pct[4] == doctest::Approx(200));
  CHECK(pct[5] == doctest::Approx(180));
  // a control that measured nothing alone is no reading
  alone.at(3, 1) = NAN;
  CHECK(stats::control_pcts(plan, alone, class_of).size() == 5);
  SUBCASE("two paths of one class: each control against its own path's") {
    // 2 nodes x 3 ranks, each node's ranks pinned to one shared CPU set: the pairs from node 0
    // to node 1 are one path, those back another, alone at 100 and at half of it
    const std::vector<std::int32_t> nodes{0, 0, 0, 1, 1, 1};
    const std::vector<std::int32_t> cpu_group{0, 0, 0, 1, 1, 1};
    const stats::pair_classes paths(6, nodes, {}, {}, cpu_group);
    stats::retest_plan two;
    two.controls = {{0, 3}, {1, 4}, {2, 5}, {3, 0}, {4, 1}, {5, 2}};
    stats::square<double> fast_one_way(6, NAN);
    for (std::uint32_t k = 0; k < 3; ++k) {
      fast_one_way.at(k, k + 3) = 100 + 10.0 * k;
      fast_one_way.at(k + 3, k) = 50 + 5.0 * k;
    }
    const auto by_path = stats::control_pcts(two, fast_one_way, paths);
    REQUIRE(by_path.size() == 6);
    CHECK(by_path[0] == doctest::Approx(10000.0 / 115));  // 100 / median(110, 120)
    CHECK(by_path[3] == doctest::Approx(10000.0 / 115));  // 50 / median(55, 60): its way's, not the class's
    CHECK(by_path[5] == doctest::Approx(12000.0 / 105));  // 60 / median(50, 55)
  }
}
