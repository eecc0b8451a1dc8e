// The model's retest (issue 42): a part the run shows slow is counted only where its pairs alone
// fall short of --slow % of the controls beyond chance; a rank that was slow only in company is
// cleared; a node's slow rank is named, not the node, when the node's other rank is fine alone;
// a part a little slower than the healthy, but above --slow, is never counted, however exact.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "rdmamesh/stats/model_retest.hpp"

using namespace rdmamesh;

namespace {

const std::vector<std::int32_t> three_by_two{0, 0, 1, 1, 2, 2};

// A mesh of six ranks on three nodes: log rate 20 + send[a] (+ ln 2 within a node) + noise.
stats::run_matrices mesh(const std::vector<double>& send, double sd, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> e(0, sd);
  stats::run_matrices m;
  m.tx_bw = stats::square<double>(6, NAN);
  m.flags = stats::square<std::uint8_t>(6, 0);
  for (std::uint32_t a = 0; a < 6; ++a)
    for (std::uint32_t b = 0; b < 6; ++b)
      if (a != b)
        m.tx_bw.at(a, b) = std::exp(20 + send[a] + (three_by_two[a] == three_by_two[b] ? std::log(2.0) : 0) + e(g));
  return m;
}

// The plan's pairs alone: log rate 21 + lasting[a] (+ ln 2 within a node) + noise of sd `sd`.
stats::square<double> alone(const stats::model_retest_plan& plan, const std::vector<double>& lasting, double sd,
                            std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> e(0, sd);
  auto out = stats::square<double>(6, NAN);
  for (const auto& [a, b] : plan.all())
    out.at(a, b) = std::exp(21 + lasting[a] + (three_by_two[a] == three_by_two[b] ? std::log(2.0) : 0) + e(g));
  return out;
}

// The retest's plan from the run's parts as a plain fit reads them (the matrices here hold rates
// only); `named` as in plan_model_retest.
stats::model_retest_plan plan_of(const stats::run_matrices& m, std::span<const std::int32_t> node_of,
                                 const stats::pair_classes& classes, const stats::model_settings& s,
                                 std::span<const std::uint8_t> named = {}) {
  const auto parts = stats::model_parts(stats::fit_effects(m, node_of), node_of, {}, s);
  return stats::plan_model_retest(m, parts, node_of, classes, s, 8, 8, named);
}

struct judged_job {
  stats::model_retest_plan plan;
  std::vector<stats::lasting_effect> parts;
  // the counted parts that stand, in words
  std::vector<std::string> named() const {
    std::vector<std::string> out;
    for (const auto& l : parts) {
      if (!l.counted || l.within || l.narrowed) continue;
      out.push_back(std::string(stats::to_string(l.part.kind)) +
                    std::to_string(l.part.kind == stats::outlier_kind::rank ? l.part.rank : l.part.node) +
                    (l.part.sends ? " sends" : " receives"));
    }
    std::ranges::sort(out);
    return out;
  }
};

judged_job judge(const std::vector<double>& run, const std::vector<double>& lasting, double alone_sd,
                 std::uint64_t seed, double slow_pct = 90) {
  const stats::pair_classes classes(6, three_by_two);
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = slow_pct};
  judged_job j{plan_of(mesh(run, 0.02, seed), three_by_two, classes, s), {}};
  j.parts = stats::judge_model_retest(j.plan, alone(j.plan, lasting, alone_sd, seed + 1), classes, s, 1.0);
  return j;
}

// node1's sends and rank 5's receives (its pairs `rank5`), both chosen by a 3 x 2 run, with
// controls that touch neither: the plan of the cases where one part may explain another away.
stats::model_retest_plan node1_and_rank5(stats::pair_list rank5) {
  stats::model_retest_plan plan;
  plan.parts = {{.kind = stats::outlier_kind::node, .node = 1, .sends = true, .members = {2, 3}},
                {.kind = stats::outlier_kind::rank, .node = 2, .rank = 5, .sends = false, .members = {5}}};
  plan.screened = {0, 1};
  plan.naming = {0, 0};
  plan.sides = {{{2, 0}, {2, 1}, {2, 4}, {2, 5}, {3, 0}, {3, 1}, {3, 4}, {3, 5}}, std::move(rank5)};
  plan.controls = {{0, 4}, {4, 0}, {1, 4}, {4, 1}, {0, 2}, {1, 3}};
  return plan;
}

// Every pair of `plan` alone at one healthy rate (log 21), each drawn apart by 3 %.
stats::square<double> at_full_speed(const stats::model_retest_plan& plan) {
  std::mt19937_64 g(7);
  std::normal_distribution<double> e(0, 0.03);
  stats::square<double> alone(6, NAN);
  for (const auto& [a, b] : plan.all()) alone.at(a, b) = std::exp(21 + e(g));
  return alone;
}

}  // namespace

TEST_CASE("model retest: the t quantile inverts the t tail") {
  for (double dof : {2.0, 7.0, 30.0}) {
    for (double p : {0.025, 1e-3}) CHECK(stats::t_upper(stats::t_quantile(p, dof), dof) == doctest::Approx(p));
  }
}

TEST_CASE("model retest: a rank slow only in company is cleared alone, nothing counted") {
  // rank 3 at 40 % in the run (it lost its CPU), at full speed alone
  const auto j = judge({0, 0, 0, std::log(0.4), 0, 0}, {0, 0, 0, 0, 0, 0}, 0.05, 11);
  CHECK(j.named().empty());
  const auto rank3 = std::ranges::find_if(j.parts, [](const stats::lasting_effect& l) {
    return l.part.kind == stats::outlier_kind::rank && l.part.rank == 3 && l.part.sends;
  });
  REQUIRE(rank3 != j.parts.end());  // the run showed it slow: retested
  CHECK(rank3->cleared);
  CHECK(std::fabs(rank3->effect) < 0.1);  // at full speed, to within five of its standard errors
  CHECK(rank3->lo < rank3->effect);
  CHECK(rank3->hi > rank3->effect);
  CHECK(rank3->pairs >= 4);
}

TEST_CASE("model retest: a node at half alone is counted, its ranks within it") {
  const double half = std::log(0.5);
  const auto j = judge({0, 0, half, half, 0, 0}, {0, 0, half, half, 0, 0}, 0.05, 21);
  CHECK(j.named() == std::vector<std::string>{"node1 sends"});
  const auto node1 = std::ranges::find_if(j.parts, [](const stats::lasting_effect& l) {
    return l.part.kind == stats::outlier_kind::node && l.part.node == 1 && l.part.sends;
  });
  REQUIRE(node1 != j.parts.end());
  CHECK(std::exp(node1->effect) == doctest::Approx(0.5).epsilon(0.1));
  CHECK(node1->hi < std::log(0.9));
  CHECK(std::ranges::all_of(j.parts, [](const stats::lasting_effect& l) {
    return l.part.kind != stats::outlier_kind::rank || !l.counted || l.within;
  }));
}

TEST_CASE("model retest: a node's one slow rank is the rank, where its other rank is fine") {
  const double slow = std::log(0.3);
  const auto j = judge({0, 0, 0, slow, 0, 0}, {0, 0, 0, slow, 0, 0}, 0.05, 31);
  CHECK(j.named() == std::vector<std::string>{"rank3 sends"});
}

TEST_CASE("model retest: slower than the healthy but above --slow is never counted") {
  // node 2 lastingly at 95 %, measured to 0.5 %: beyond chance, and healthy by --slow 90's definition
  const double little = std::log(0.95);
  for (std::uint64_t seed : {41, 42, 43}) {
    const auto j = judge({0, 0, 0, 0, std::log(0.85), std::log(0.85)}, {0, 0, 0, 0, little, little}, 0.005, seed);
    CHECK(j.named().empty());
  }
  // the same node at --slow 97: slow by that definition, and counted
  const auto j = judge({0, 0, 0, 0, std::log(0.85), std::log(0.85)}, {0, 0, 0, 0, little, little}, 0.005, 44, 97);
  CHECK(j.named() == std::vector<std::string>{"node2 sends"});
}

TEST_CASE("model retest: a part whose pairs alone its host held back is neither counted nor cleared") {
  const double half = std::log(0.5);
  const stats::pair_classes classes(6, three_by_two);
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = 90};
  const auto plan = plan_of(mesh({0, 0, half, half, 0, 0}, 0.02, 71), three_by_two, classes, s);
  const auto a = alone(plan, {0, 0, half, half, 0, 0}, 0.05, 72);
  const auto node1 = [](const std::vector<stats::lasting_effect>& parts) {
    return std::ranges::find_if(parts, [](const stats::lasting_effect& l) {
      return l.part.kind == stats::outlier_kind::node && l.part.node == 1 && l.part.sends;
    });
  };
  const auto free = stats::judge_model_retest(plan, a, classes, s, 1.0);
  REQUIRE(node1(free) != free.end());
  CHECK(node1(free)->counted);
  // the same pairs alone, all but two of node 1's held back by their host
  const auto& side = plan.sides[static_cast<std::size_t>(node1(free) - free.begin())];  // parallel to the parts
  REQUIRE(side.size() >= 6);
  const stats::pair_list held(side.begin() + 2, side.end());
  const auto judged = stats::judge_model_retest(plan, a, classes, s, 1.0, held);
  CHECK(node1(judged)->held_back);
  CHECK(node1(judged)->held == held.size());
  CHECK_FALSE(node1(judged)->counted);
  CHECK_FALSE(node1(judged)->cleared);
}

TEST_CASE("model retest: the ranks the run named are retested, whatever the run read of them") {
  const stats::pair_classes classes(6, three_by_two);
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = 90};
  const auto m = mesh({0, 0, 0, 0, 0, 0}, 0.01, 81);
  const auto plain = plan_of(m, three_by_two, classes, s);
  const std::vector<std::uint8_t> named{0, 0, 0, 0, stats::named_sends, 0};  // rank 4, for its sends
  const auto flagged = plan_of(m, three_by_two, classes, s, named);
  const auto holds4 = [&](const stats::model_retest_plan& p) {
    return std::ranges::any_of(p.screened, [&](std::size_t i) { return p.parts[i].holds(4); });
  };
  CHECK_FALSE(holds4(plain));
  CHECK(holds4(flagged));
}

TEST_CASE("model retest: a side the run named is retested, the other side only where the run read it slow") {
  const stats::pair_classes classes(6, three_by_two);
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = 90};
  // the finder named node 2 for its sends (its receives' figure NaN: not named)
  const stats::outlier sends_only{stats::outlier_kind::node, stats::outlier_basis::noise, 2, -1, -1, 40, NAN, 8, 0};
  const auto named = stats::named_sides(std::span(&sends_only, 1), three_by_two, {}, 6);
  CHECK(named == std::vector<std::uint8_t>{0, 0, 0, 0, stats::named_sends, stats::named_sends});
  const auto m = mesh({0, 0, 0, 0, std::log(0.4), std::log(0.4)}, 0.01, 91);
  const auto plan = plan_of(m, three_by_two, classes, s, named);
  const auto screened_of_node2 = [&](bool sends) {
    return std::ranges::count_if(
        plan.screened, [&](std::size_t i) { return plan.parts[i].node == 2 && plan.parts[i].sends == sends; });
  };
  CHECK(screened_of_node2(true) == 3);   // the node's sends and each of its ranks'
  CHECK(screened_of_node2(false) == 0);  // its receives read fine and were not named: no test spent on them
  // both sides named: both retested
  stats::outlier both = sends_only;
  both.recv_pct = 60;
  const auto named_both = stats::named_sides(std::span(&both, 1), three_by_two, {}, 6);
  CHECK(named_both[4] == (stats::named_sends | stats::named_receives));
  const auto plan_both = plan_of(m, three_by_two, classes, s, named_both);
  CHECK(std::ranges::count_if(plan_both.screened, [&](std::size_t i) {
          return plan_both.parts[i].node == 2 && !plan_both.parts[i].sends;
        }) == 3);
}

namespace {

// Six ranks, one a node, under three leaves of two: 0,1 | 2,3 | 4,5.
std::vector<stats::switch_group> three_leaves() {
  std::vector<stats::switch_group> out;
  for (std::int32_t l = 0; l < 3; ++l) {
    stats::switch_group g{l, std::vector<std::uint8_t>(6, 0)};
    g.members[2 * l] = g.members[2 * l + 1] = 1;
    out.push_back(g);
  }
  return out;
}

}  // namespace

TEST_CASE("model retest: a path is the uplinks a pair crosses and which way, not how many") {
  // six nodes of one rank under three leaves (two each): 0,1 | 2,3 | 4,5
  const std::vector<std::int32_t> nodes{0, 1, 2, 3, 4, 5};
  const auto leaves = three_leaves();
  const stats::pair_classes classes(6, nodes, leaves);
  CHECK(classes(0, 2) == classes(2, 4));            // both cross two uplinks
  CHECK(classes.path(0, 2) != classes.path(2, 4));  // not the same two
  CHECK(classes.path(0, 2) != classes.path(2, 0));  // nor the same way
  CHECK(classes.path(0, 2) == classes.path(1, 3));  // leaf 0 up, leaf 1 down, from either rank
  CHECK(classes.path(0, 1) == classes.path(4, 5));  // within a leaf: no uplink
}

TEST_CASE(
    "model retest: an uplink the run reads slow is retested against its tier's other uplinks, its nodes beside it") {
  // six nodes of one rank under three leaves (two each); everything out of leaf 1 (nodes 2, 3)
  // at 40 %: the run's fit puts it on leaf 1's way up, not on the two nodes
  const std::vector<std::int32_t> nodes{0, 1, 2, 3, 4, 5};
  const auto leaves = three_leaves();
  const stats::pair_classes classes(6, nodes, leaves);
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = 90};
  stats::run_matrices m;
  m.tx_bw = stats::square<double>(6, NAN);
  m.flags = stats::square<std::uint8_t>(6, 0);
  std::mt19937_64 g(5);
  std::normal_distribution<double> e(0, 0.01);
  for (std::uint32_t a = 0; a < 6; ++a)
    for (std::uint32_t b = 0; b < 6; ++b)
      if (a != b) m.tx_bw.at(a, b) = std::exp(20 + (a / 2 == 1 && b / 2 != 1 ? std::log(0.4) : 0) + e(g));
  const auto parts =
      stats::model_parts(stats::fit_effects(m, nodes, {.classes = &classes, .uplinks = leaves}), nodes, {}, s, leaves);
  const auto up1 = std::ranges::find_if(
      parts, [](const auto& p) { return p.kind == stats::outlier_kind::uplink && p.node == 1 && p.sends; });
  REQUIRE(up1 != parts.end());
  CHECK(up1->effect < std::log(0.5));  // the run reads the uplink ...
  for (const auto& p : parts)          // ... and not the nodes under it
    if (p.kind == stats::outlier_kind::node) CHECK(p.effect > std::log(0.9));
  const auto plan = stats::plan_model_retest(m, parts, nodes, classes, s);
  std::set<std::pair<stats::outlier_kind, std::int32_t>> sends_of;
  for (const auto i : plan.screened) {
    CHECK(plan.parts[i].sends);  // only the side the uplink reads slow
    sends_of.insert({plan.parts[i].kind, plan.parts[i].node});
  }
  CHECK(sends_of == std::set<std::pair<stats::outlier_kind, std::int32_t>>{{stats::outlier_kind::uplink, 1},
                                                                           {stats::outlier_kind::node, 2},
                                                                           {stats::outlier_kind::node, 3}});
  // alone, the uplink's pairs at 40 % of pairs through the other leaves' uplinks: counted, its
  // nodes within it (their pairs alone read against controls through the same uplink: alike)
  const auto lasting = [](std::uint32_t a, std::uint32_t b) { return a / 2 == 1 && b / 2 != 1 ? std::log(0.4) : 0.0; };
  auto alone = stats::square<double>(6, NAN);
  for (const auto& [a, b] : plan.all()) alone.at(a, b) = std::exp(21 + lasting(a, b) + e(g));
  const auto judged = stats::judge_model_retest(plan, alone, classes, s, 1.0);
  const auto up =
      std::ranges::find_if(judged, [](const auto& l) { return l.part.kind == stats::outlier_kind::uplink; });
  REQUIRE(up != judged.end());
  CHECK(up->stands());
  CHECK(std::exp(up->effect) == doctest::Approx(0.4).epsilon(0.05));
  CHECK(std::ranges::none_of(judged,
                             [](const auto& l) { return l.part.kind == stats::outlier_kind::node && l.stands(); }));
  // alone, only node 2's sends at 40 % (its port; the uplink fine): the uplink narrowed to node 2
  for (const auto& [a, b] : plan.all()) alone.at(a, b) = std::exp(21 + (a == 2 ? std::log(0.4) : 0) + e(g));
  const auto port = stats::judge_model_retest(plan, alone, classes, s, 1.0);
  const auto find = [&](stats::outlier_kind k, std::int32_t node) {
    return std::ranges::find_if(port, [&](const auto& l) { return l.part.kind == k && l.part.node == node; });
  };
  REQUIRE(find(stats::outlier_kind::uplink, 1) != port.end());
  CHECK(find(stats::outlier_kind::uplink, 1)->narrowed);
  CHECK_FALSE(find(stats::outlier_kind::uplink, 1)->stands());
  CHECK(find(stats::outlier_kind::node, 2)->stands());
  CHECK_FALSE(find(stats::outlier_kind::node, 3)->stands());
}

TEST_CASE("model retest: a screened node's ranks go too, only to name: they never widen the family") {
  // node 1 at half alone; in the run its rank 2 read half and its rank 3 read 95 %: the run chose
  // the node and rank 2, and rank 3 goes only to tell the node from its rank 2
  const double half = std::log(0.5);
  const auto j = judge({0, 0, half, std::log(0.95), 0, 0}, {0, 0, half, half, 0, 0}, 0.05, 51);
  std::vector<std::int32_t> naming;
  for (std::size_t i = 0; i < j.plan.screened.size(); ++i) {
    const auto& p = j.plan.parts[j.plan.screened[i]];
    if (j.plan.naming[i]) naming.push_back(p.kind == stats::outlier_kind::rank && p.sends ? p.rank : -1);
  }
  CHECK(naming == std::vector<std::int32_t>{3});
  // both its ranks slow alone: the node stands, not its rank 2
  CHECK(j.named() == std::vector<std::string>{"node1 sends"});
  // the same run with rank 3 fine alone: rank 2 is named, the node narrowed to it
  const auto one = judge({0, 0, half, std::log(0.95), 0, 0}, {0, 0, half, 0, 0, 0}, 0.05, 52);
  CHECK(one.named() == std::vector<std::string>{"rank2 sends"});
}

TEST_CASE("model retest: a part's pairs alone avoid partners the run also chose, where it has others") {
  // 16 ranks, one per node: rank 0 sends at a quarter; every rank's receives from rank 0 are its
  // slowest, and rank 5's receives read slow in the run too
  const std::uint32_t n = 16;
  std::vector<std::int32_t> node_of(n);
  for (std::uint32_t r = 0; r < n; ++r) node_of[r] = static_cast<std::int32_t>(r);
  stats::run_matrices m;
  m.tx_bw = stats::square<double>(n, NAN);
  m.flags = stats::square<std::uint8_t>(n, 0);
  for (std::uint32_t a = 0; a < n; ++a)
    for (std::uint32_t b = 0; b < n; ++b)
      if (a != b) m.tx_bw.at(a, b) = 1e9 * (a == 0 ? 0.25 : 1) * (b == 5 ? 0.5 : 1) * (1 + 0.001 * (a + 3 * b));
  const stats::pair_classes classes(n, node_of);
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = 90};
  const auto plan = plan_of(m, node_of, classes, s);
  bool found = false;
  for (std::size_t i = 0; i < plan.screened.size(); ++i) {
    const auto& p = plan.parts[plan.screened[i]];
    if (p.kind != stats::outlier_kind::node || p.node != 5 || p.sends) continue;
    found = true;
    CHECK(plan.sides[i].size() == 8);
    // rank 0 is a part the run chose (its sends): its pair into rank 5 is not among the 8
    CHECK(std::ranges::find(plan.sides[i], std::pair<std::uint32_t, std::uint32_t>{0, 5}) == plan.sides[i].end());
  }
  CHECK(found);
}

TEST_CASE("model retest: pairs whose ends share a CPU are read against pairs that share that CPU too") {
  // six ranks of one host on two cores, pinned as 0,2,4 on one and 1,3,5 on the other. Alone, a
  // pair of one core runs at half a pair of two, and on core 0 (busier) at a quarter
  const std::vector<std::int32_t> one_host(6, 0), cores{0, 1, 0, 1, 0, 1};
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = 60};
  // the run reads rank `slow` at a tenth; alone it sends at `lasting` of the healthy
  const auto judged = [&](std::span<const std::int32_t> cpu_group, std::uint32_t slow, double lasting) {
    stats::run_matrices m;
    m.tx_bw = stats::square<double>(6, NAN);
    m.flags = stats::square<std::uint8_t>(6, 0);
    for (std::uint32_t a = 0; a < 6; ++a)
      for (std::uint32_t b = 0; b < 6; ++b)
        if (a != b) m.tx_bw.at(a, b) = 1e9 * (a == slow ? 0.1 : 1) * (1 + 0.01 * (a + 3 * b));
    const stats::pair_classes classes(6, one_host, {}, {}, cpu_group);
    const auto plan = plan_of(m, one_host, classes, s);
    std::mt19937_64 g(61);
    std::normal_distribution<double> e(0, 0.1);
    auto alone = stats::square<double>(6, NAN);
    for (const auto& [a, b] : plan.all()) {
      const double path = cores[a] != cores[b] ? 1 : cores[a] == 0 ? 0.25 : 0.5;
      alone.at(a, b) = 1e8 * (a == slow ? lasting : 1) * path * std::exp(e(g));
    }
    const auto parts = stats::judge_model_retest(plan, alone, classes, s, 1.0);
    const auto it = std::ranges::find_if(parts, [&](const stats::lasting_effect& l) {
      return l.part.kind == stats::outlier_kind::rank && l.part.rank == static_cast<std::int32_t>(slow) && l.part.sends;
    });
    REQUIRE(it != parts.end());  // the run read it slow: retested
    return *it;
  };
  // rank 2 at a fifth alone: each of its pairs against its like, counted at its fifth. Its like:
  // for 2 -> 0 and 2 -> 4, the pairs on core 0 (0 -> 4, 4 -> 0); for 2 -> 1, 2 -> 3 and 2 -> 5,
  // the pairs from core 0 to core 1 (0 -> 1, 4 -> 5, ...)
  const auto slow = judged(cores, 2, 0.2);
  CHECK(std::exp(slow.effect) == doctest::Approx(0.2).epsilon(0.2));
  CHECK(slow.counted);
  CHECK(slow.pairs == 5);
  CHECK(slow.below == 5);  // each of its pairs alone below --slow of its like
  // rank 2 slow in the run only, at full speed alone: cleared, at full speed, though its pairs on
  // core 0 run at half those on core 1
  const auto fine = judged(cores, 2, 1);
  CHECK(fine.cleared);
  CHECK(std::fabs(fine.effect) < 0.15);
  CHECK(fine.below == 0);
  // the sharing unknown (an empty list): the cores' halving is read as noise, and the same
  // rank's interval is far wider
  const auto unknown = judged({}, 2, 0.2);
  CHECK(unknown.hi - unknown.lo > slow.hi - slow.lo);
}

TEST_CASE("model retest: a pair on one CPU whose own CPU has too few pairs is read against the host's other CPUs") {
  // four ranks of one host on two cores (0,2 on one, 1,3 on the other): each core has two pairs
  // of its own, both touching either end of each, so a rank's pair on its core has none to be
  // read against but the other core's, whose offset from its own is a draw of cpu_sd
  const std::vector<std::int32_t> one_host(4, 0), cores{0, 1, 0, 1};
  const stats::pair_classes classes(4, one_host, {}, {}, cores);
  const auto alone_of = [&](std::uint32_t slow_a, std::uint32_t slow_b, double lasting, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> e(0, 0.05);
    auto alone = stats::square<double>(4, NAN);
    for (std::uint32_t a = 0; a < 4; ++a)
      for (std::uint32_t b = 0; b < 4; ++b)
        if (a != b)
          alone.at(a, b) = 1e8 * (cores[a] == cores[b] ? 0.5 : 1) *
                           (a == slow_a && (b == slow_b || slow_b > 3) ? lasting : 1) * std::exp(e(g));
    return alone;
  };
  // a link on core 1 at a tenth alone: read against core 0's pairs, still slow, its interval
  // wider by its core's offset
  const stats::pair_list controls{{0, 2}, {2, 0}, {3, 1}, {0, 1}, {1, 0}, {2, 3}, {3, 2}, {0, 3}, {3, 0}};
  const auto alone = alone_of(1, 3, 0.1, 7);
  const auto link = stats::judge_pairs_alone({{1, 3}}, controls, alone, classes, {.slow_pct = 60}, 1.0);
  REQUIRE(link.size() == 1);
  CHECK(std::exp(link[0].effect) == doctest::Approx(0.1).epsilon(0.3));
  CHECK(link[0].hi < std::log(0.6));
  const auto sure = stats::judge_pairs_alone({{1, 3}}, controls, alone, classes, {.slow_pct = 60, .cpu_sd = 0}, 1.0);
  CHECK(link[0].hi - link[0].lo > sure[0].hi - sure[0].lo);
  // rank 2 slow in the run: the plan measures core 1's pairs for its pair on core 0 (2 -> 0),
  // and every pair of its side is read: at full speed alone, cleared
  stats::run_matrices m;
  m.tx_bw = stats::square<double>(4, NAN);
  m.flags = stats::square<std::uint8_t>(4, 0);
  for (std::uint32_t a = 0; a < 4; ++a)
    for (std::uint32_t b = 0; b < 4; ++b)
      if (a != b) m.tx_bw.at(a, b) = 1e9 * (a == 2 ? 0.1 : 1) * (1 + 0.01 * (a + 3 * b));
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = 60};
  const auto plan = plan_of(m, one_host, classes, s);
  const auto measured = plan.all();
  CHECK(std::ranges::count_if(measured, [](const auto& ab) { return ab.first % 2 == 1 && ab.second % 2 == 1; }) >= 2);
  const auto parts = stats::judge_model_retest(plan, alone_of(2, 9, 1, 11), classes, s, 1.0);
  const auto rank2 = std::ranges::find_if(parts, [](const stats::lasting_effect& l) {
    return l.part.kind == stats::outlier_kind::rank && l.part.rank == 2 && l.part.sends;
  });
  REQUIRE(rank2 != parts.end());
  CHECK(rank2->pairs == 3);
  CHECK(rank2->cleared);
  // at a fifth alone, counted
  const auto slow = stats::judge_model_retest(plan, alone_of(2, 9, 0.2, 11), classes, s, 1.0);
  const auto slow2 = std::ranges::find_if(slow, [](const stats::lasting_effect& l) {
    return l.part.kind == stats::outlier_kind::rank && l.part.rank == 2 && l.part.sends;
  });
  REQUIRE(slow2 != slow.end());
  CHECK(slow2->counted);
}

TEST_CASE("model retest: a receiver slow alone only toward a counted sender is that sender's evidence") {
  // node1's port loses packets: alone, its sends stall. The run also read rank 5's receives slow,
  // so they go too, and alone they are slow as a whole: two of the three pairs measured into it
  // come from node1. Without those two, rank 5 receives at full speed: node1's evidence, not its own.
  const stats::pair_classes classes(6, three_by_two);
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = 90};
  const auto plan = node1_and_rank5({{1, 5}, {2, 5}, {3, 5}});
  auto alone = at_full_speed(plan);
  for (const auto& [a, b] : plan.all())
    if (three_by_two[a] == 1) alone.at(a, b) *= 0.02;
  auto parts = stats::judge_model_retest(plan, alone, classes, s, 1.0);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].counted);
  CHECK(parts[1].effect < std::log(0.9));  // alone, as a whole, far below --slow
  CHECK(parts[1].p_slow < s.alpha);        // Holm counted it ...
  CHECK_FALSE(parts[1].counted);           // ... but without node1's pairs it is fine
  CHECK(parts[1].explained);
  CHECK_FALSE(parts[0].explained);
  // a receiver slow from every sender is its own cause, whatever a slow sender beside it reads
  alone.at(1, 5) *= 0.02;
  parts = stats::judge_model_retest(plan, alone, classes, s, 1.0);
  CHECK(parts[0].counted);
  CHECK(parts[1].counted);
  CHECK_FALSE(parts[1].explained);
}

TEST_CASE("model retest: a receiver slow alone toward a sender that reads slow alone, counted or not, is not counted") {
  // node1's port loses packets: alone, some of its pairs stall and the rest run near the
  // controls, too spread to count it. Rank 5's receives went too; two of its four pairs come from
  // node1 (one stalled, one at a third). Counted by those, rank 5 would be drained for node1's
  // loss; without them its pairs run at full speed
  const stats::pair_classes classes(6, three_by_two);
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = 90};
  const auto plan = node1_and_rank5({{0, 5}, {1, 5}, {2, 5}, {3, 5}});
  auto alone = at_full_speed(plan);
  for (const auto& [a, b] : {std::pair{2, 0}, {2, 5}, {3, 1}}) alone.at(a, b) = 0;  // stalled
  for (const auto& [a, b] : {std::pair{2, 1}, {3, 5}}) alone.at(a, b) *= 0.3;
  const auto parts = stats::judge_model_retest(plan, alone, classes, s, 1.0);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].effect < std::log(0.9));  // node1 slow alone, but too spread to count or clear
  CHECK_FALSE(parts[0].counted);
  CHECK_FALSE(parts[0].cleared);
  CHECK(parts[1].p_slow < s.alpha);  // rank 5 as a whole: Holm counted it ...
  CHECK_FALSE(parts[1].counted);     // ... but its slow pairs from node1 are node1's evidence
  CHECK(parts[1].explained);
}

TEST_CASE("model retest: a rank whose sends moved nothing in the run is retested, not left without a figure") {
  const stats::pair_classes classes(6, three_by_two);
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = 60};
  auto m = mesh({0, 0, 0, 0, 0, 0}, 0.02, 91);
  for (std::uint32_t b = 0; b < 6; ++b)
    if (b != 2) m.tx_bw.at(2, b) = 0;  // rank 2 ran and completed nothing toward anyone
  // the run as rdmamesh records it (4 KiB messages over one-second windows, one round), judged
  // by its finder: the plan reads the finder's parts
  constexpr std::uint64_t size = 4096;
  m.tx_s = stats::square<double>(6, 1.0);
  m.tx_msgs = stats::square<std::uint64_t>(6, 0);
  m.round = stats::square<std::int32_t>(6, 0);
  for (std::uint32_t a = 0; a < 6; ++a) {
    m.round.at(a, a) = -1;
    for (std::uint32_t b = 0; b < 6; ++b)
      if (a != b) m.tx_msgs.at(a, b) = static_cast<std::uint64_t>(m.tx_bw.at(a, b) / size);
  }
  const auto run = stats::find_outliers(m, size, three_by_two, {.slow_pct = 60});
  const auto named = stats::named_sides(run.found, three_by_two, {}, 6);
  REQUIRE(named[2] == stats::named_sends);
  const auto plan = stats::plan_model_retest(m, run.parts, three_by_two, classes, s, 8, 8, named);
  bool sends_of_2 = false;
  for (std::size_t k = 0; k < plan.screened.size(); ++k) {
    const auto& p = plan.parts[plan.screened[k]];
    if (p.kind == stats::outlier_kind::rank && p.rank == 2 && p.sends) sends_of_2 = plan.sides[k].size() >= 3;
  }
  CHECK(sends_of_2);
  // its pairs alone still at a tenth: counted, as the run named it
  auto lasting = std::vector<double>(6, 0);
  lasting[2] = std::log(0.1);
  const auto parts = stats::judge_model_retest(plan, alone(plan, lasting, 0.02, 92), classes, s, 1, {}, {});
  CHECK(std::ranges::any_of(
      parts, [](const stats::lasting_effect& l) { return l.counted && l.part.rank == 2 && l.part.sends; }));
}

TEST_CASE("model retest: a counted link is its own pair's evidence, not its ends'") {
  // rank 3's receives, read alone by one pair only (its others had no controls): the run's named
  // link 1 -> 3, at a tenth alone. Counted beside the link, rank 3 is the link's end, not a cause
  std::vector<std::int32_t> node_of{0, 0, 1, 1, 2, 2};
  const stats::pair_classes classes(6, node_of);
  stats::model_cause rank3{.kind = stats::outlier_kind::rank, .node = 1, .rank = 3, .sends = false};
  rank3.effect = std::log(0.3);
  rank3.members = {3};
  stats::model_retest_plan plan;
  plan.parts = {rank3};
  plan.screened = {0};
  plan.naming = {0};
  plan.sides = {{{1, 3}}};
  plan.controls = {{0, 2}, {2, 0}, {0, 4}, {4, 0}, {1, 4}, {4, 1}, {2, 5}, {5, 2}, {1, 5}, {5, 1}, {2, 4}, {4, 2}};
  std::mt19937_64 g(5);
  std::normal_distribution<double> e(0, 0.05);
  auto alone = stats::square<double>(6, NAN);
  for (const auto& [a, b] : plan.all()) alone.at(a, b) = 1e8 * (a == 1 && b == 3 ? 0.1 : 1) * std::exp(e(g));
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = 60};
  const auto judged = [&](bool named) {
    std::vector<stats::retest_verdict> links{{.src = 1, .dst = 3, .p_slow = 1e-12, .named = named}};
    auto parts = stats::judge_model_retest(plan, alone, classes, s, 1.0, {}, links);
    REQUIRE(parts.size() == 1);
    return std::pair{parts[0], links[0]};
  };
  const auto [part, link] = judged(true);
  CHECK(link.counted);
  CHECK_FALSE(part.counted);
  CHECK(part.explained);
  // the run named no link there: the pair alone is rank 3's evidence, and it counts
  const auto [alone_part, no_link] = judged(false);
  CHECK_FALSE(no_link.counted);
  CHECK(alone_part.counted);
}

TEST_CASE("model retest: where ranks share CPUs, a rank's pairs alone are one draw of its share, not each a proof") {
  // three nodes of two ranks, every node's local ranks on vCPUs 0 and 1 of one kernel (as the
  // emulated cluster pins them) or each on a core of its own. Rank 2's pairs alone all read
  // `lasting` of the healthy, each within 2 % of it: exact as pairs, but a share every pair of
  // a rank short of a CPU in the retest has (model_settings::part_sd)
  const std::vector<std::int32_t> vcpus{0, 1, 0, 1, 0, 1};
  const stats::model_settings s{.alpha = 1e-3, .slow_pct = 90};
  const auto rank2 = [&](std::span<const std::int32_t> cpu_group, double lasting) {
    const stats::pair_classes classes(6, three_by_two, {}, {}, cpu_group);
    const auto plan = plan_of(mesh({0, 0, -1, 0, 0, 0}, 0.02, 7), three_by_two, classes, s);
    const auto parts =
        stats::judge_model_retest(plan, alone(plan, {0, 0, std::log(lasting), 0, 0, 0}, 0.02, 8), classes, s, 1.0);
    const auto it = std::ranges::find_if(parts, [](const stats::lasting_effect& l) {
      return l.part.kind == stats::outlier_kind::rank && l.part.rank == 2 && l.part.sends;
    });
    REQUIRE(it != parts.end());
    return *it;
  };
  // at 84 %, on cores of its own: eight exact pairs below --slow, counted
  CHECK(rank2({}, 0.84).counted);
  // on shared vCPUs the same reading is one draw of the rank's share, a little below --slow:
  // neither counted nor cleared
  const auto shared = rank2(vcpus, 0.84);
  CHECK_FALSE(shared.counted);
  CHECK_FALSE(shared.cleared);
  CHECK(std::exp(shared.effect) == doctest::Approx(0.84).epsilon(0.05));
  // at half it is counted there too: the share widens the interval, it does not blind the test
  CHECK(rank2(vcpus, 0.5).counted);
  // and at full speed cleared
  CHECK(rank2(vcpus, 1).cleared);
}
