// The job's verdict: a rank, NIC, node or uplink counts where the job's runs, pooled as one fit,
// name it; another cause when most judged runs name it, a failed pair always, a suspect link (one
// pair in one run) only when a retest or several runs confirm it, and a retested run's ranks,
// NICs and nodes as the model's parts alone say.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "rdmamesh/stats/verdict.hpp"
#include "runs.hpp"

using namespace rdmamesh::stats;

namespace {

outlier node2() {
  return {outlier_kind::node, outlier_basis::noise, 1, -1, -1, 30, NAN, 8, 0};
}
outlier link(int a, int b) {
  return {outlier_kind::link, outlier_basis::noise, -1, a, b, 40, NAN, 1, 0};
}
outlier failed(int a, int b) {
  return {outlier_kind::failed, outlier_basis::failed, -1, a, b, NAN, NAN, 1, 0};
}

// a pair alone, still slow (and, named, counted by the job's test) or fine
retest_verdict alone(std::uint32_t a, std::uint32_t b, bool still_slow, double pct = NAN) {
  if (std::isnan(pct)) pct = still_slow ? 40 : 95;
  return {.src = a,
          .dst = b,
          .before = 1,
          .alone = 1,
          .pct = pct,
          .lo_pct = pct * 0.8,
          .hi_pct = pct * 1.25,
          .p_slow = still_slow ? 1e-6 : 1,
          .still_slow = still_slow,
          .fine = !still_slow,
          .named = true,
          .counted = still_slow};
}

// slow alone, but its busy end had 38 % of a CPU where the controls' ends had 60 %: undecided
retest_verdict starved(std::uint32_t a, std::uint32_t b) {
  auto v = alone(a, b, false, 45);
  v.fine = false;
  v.starved = true;
  v.cpu_share = 0.38;
  v.controls_cpu_share = 0.60;
  return v;
}

const folded_cause* find(const job_verdict& v, outlier_kind k) {
  for (const auto& c : v.causes) {
    if (c.kind == k) return &c;
  }
  return nullptr;
}

}  // namespace

namespace {

// A mesh run of 6 nodes of 2 ranks: every pair about 2 000 messages of 4 KiB over 1 s, each
// jittered by up to +-20 % (`seed`), node `slow` sending at `factor` of the rest; judged.
outlier_report mesh_run(unsigned seed, std::int32_t slow = -1, double factor = 1) {
  const std::vector<std::int32_t> node_of{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5};
  const auto m = rdmamesh::test::jittered_mesh(12, 2000, 0.2, seed, 4096, [&](std::uint32_t a, std::uint32_t b) {
    return node_of[a] == slow && node_of[b] != slow ? factor : 1;
  });
  return find_outliers(m, 4096, node_of, {.slow_pct = 90, .counted = true});
}

bool names_node(const outlier_report& r, std::int32_t node) {
  return std::ranges::any_of(r.found, [&](const outlier& o) { return o.kind == outlier_kind::node && o.node == node; });
}

}  // namespace

TEST_CASE("a job's runs are one fit: a node slow in each counts on them pooled; one run's slow node alone does not") {
  const std::vector<std::int32_t> node_of{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5};
  std::vector<outlier_report> reports;
  for (unsigned s = 0; s < 8; ++s) reports.push_back(mesh_run(100 + s, 2, 0.8));
  std::vector<judged_run> runs;
  for (std::uint32_t i = 0; i < reports.size(); ++i) runs.push_back({i, "mesh 4 KiB", &reports[i], true, {}});
  // each run alone reads node 2's sends inside its noise: a vote would count nothing
  const auto named_alone = std::ranges::count_if(reports, [](const outlier_report& r) { return names_node(r, 2); });
  CHECK(2 * named_alone <= static_cast<std::ptrdiff_t>(reports.size()));
  auto v = fold(runs, node_of);
  CHECK(v.status == health::degraded);
  const auto* node = find(v, outlier_kind::node);
  REQUIRE(node != nullptr);
  CHECK(node->node == 2);
  CHECK(node->counted);
  CHECK(node->pool_runs == 8);
  CHECK(node->pool_pct == doctest::Approx(80).epsilon(0.05));
  CHECK(node->pool_p < 1e-3);
  CHECK(node->by_pool == (named_alone == 0));
  for (const auto& c : v.causes) CHECK((c.counted == (c.kind == outlier_kind::node && c.node == 2)));

  // node 1 at 60 % in one run of eight, healthy in the others: that run names it, the job does not
  // (pooled, its sends are above --slow), nor anything else
  reports.clear();
  for (unsigned s = 0; s < 8; ++s) reports.push_back(mesh_run(200 + s, s == 0 ? 1 : -1, 0.6));
  REQUIRE(names_node(reports[0], 1));
  v = fold(runs, node_of);
  CHECK(v.status == health::healthy);
  node = find(v, outlier_kind::node);
  REQUIRE(node != nullptr);
  CHECK_FALSE(node->counted);
  CHECK(node->runs == std::vector<std::uint32_t>{0});
  CHECK(node->pool_pct > 90);
  // one fitted run is its own pool: what it named counts
  CHECK(fold(std::span(runs).first(1), node_of).status == health::degraded);
}

TEST_CASE("a suspect link in one run is not a verdict; a retest that finds it still slow alone is") {
  outlier_report sus;
  sus.found = {link(1, 3)};
  std::vector<judged_run> runs{{0, "mesh 64 KiB", &sus, true, {}}};
  auto v = fold(runs);
  CHECK(v.status == health::healthy);
  REQUIRE(find(v, outlier_kind::link) != nullptr);
  CHECK_FALSE(find(v, outlier_kind::link)->counted);
  runs[0].alone = {alone(1, 3, true)};
  v = fold(runs);
  CHECK(v.status == health::degraded);
  CHECK(find(v, outlier_kind::link)->counted);
  runs[0].alone = {alone(3, 1, true)};  // the other direction confirms nothing
  CHECK(fold(runs).status == health::healthy);
  // still slow alone, but not beyond chance at the job's level: one sample, no verdict
  auto noisy = alone(1, 3, true, 44);
  noisy.counted = false;
  runs[0].alone = {noisy};
  v = fold(runs);
  CHECK(v.status == health::healthy);
  CHECK_FALSE(find(v, outlier_kind::link)->counted);
  // named by most of two or more runs: counted without a retest
  std::vector<judged_run> two{{0, "mesh 4 KiB", &sus, true, {}}, {1, "mesh 64 KiB", &sus, true, {}}};
  CHECK(fold(two).status == health::degraded);
}

TEST_CASE("a failed pair needs no majority: the job is failed") {
  outlier_report bad, clean;
  bad.found = {failed(0, 2)};
  std::vector<judged_run> runs{
      {0, "mesh 4 KiB", &bad, true, {}}, {1, "mesh 64 KiB", &clean, true, {}}, {2, "mesh 1 MiB", &clean, true, {}}};
  const auto v = fold(runs);
  CHECK(v.status == health::failed);
  CHECK(find(v, outlier_kind::failed)->counted);
}

// ---- --retest: the model's parts decide the runs' ranks, NICs and nodes

namespace {

const std::vector<std::int32_t> three_nodes{0, 0, 1, 1, 2, 2};

// A part the model measured alone: `kind` over the ranks in `members`, its sends (or receives),
// alone at `pct` % of the controls with an interval of +-10 %, counted, cleared or neither.
lasting_effect part(outlier_kind kind, std::int32_t node, std::int32_t rank, std::vector<std::uint32_t> members,
                    bool sends, double pct, bool counted, bool cleared) {
  std::ranges::sort(members);
  model_cause c{kind, node, rank, -1, sends, std::log(pct / 100), 1e-3, members};
  lasting_effect l{c};
  l.effect = std::log(pct / 100);
  l.lo = std::log(0.9 * pct / 100);
  l.hi = std::log(1.1 * pct / 100);
  l.pairs = 8;
  l.p_slow = counted ? 1e-6 : 0.3;
  l.counted = counted;
  l.cleared = cleared;
  return l;
}

judged_run retested(const outlier_report* report, std::vector<lasting_effect> parts) {
  judged_run r{0, "mesh 4 KiB", report, true, {}};
  r.parts = std::move(parts);
  r.retested = true;
  r.alpha = 1e-3;
  return r;
}

}  // namespace

TEST_CASE("--retest: a named node counts only where its sends alone are counted, with their figures") {
  outlier_report named;
  named.found = {node2()};  // node 1's sends at 30 % in the one run
  SUBCASE("counted alone") {
    const std::vector<judged_run> runs{
        retested(&named, {part(outlier_kind::node, 1, -1, {2, 3}, true, 40, true, false)})};
    const auto v = fold(runs, three_nodes);
    CHECK(v.status == health::degraded);
    REQUIRE(find(v, outlier_kind::node) != nullptr);
    CHECK(find(v, outlier_kind::node)->counted);
    CHECK(find(v, outlier_kind::node)->alone_pct == doctest::Approx(40));
    CHECK(v.parts_retested == 1);
    CHECK(v.false_alarm == doctest::Approx(1e-3));
  }
  SUBCASE("two runs, each tested at half the level: the job states the whole level, and the split") {
    std::vector<judged_run> runs{retested(&named, {part(outlier_kind::node, 1, -1, {2, 3}, true, 40, true, false)}),
                                 retested(&named, {part(outlier_kind::node, 1, -1, {2, 3}, true, 45, true, false)})};
    runs[1].index = 1;
    for (auto& r : runs) {
      r.alpha = 5e-4;
      r.alpha_runs = 2;
    }
    const auto v = fold(runs, three_nodes);
    CHECK(v.status == health::degraded);
    CHECK(v.parts_retested == 2);
    CHECK(v.false_alarm == doctest::Approx(1e-3));
    CHECK(v.false_alarm_runs == 2);
  }
  SUBCASE("cleared alone: healthy, whatever the run read") {
    const std::vector<judged_run> runs{
        retested(&named, {part(outlier_kind::node, 1, -1, {2, 3}, true, 99, false, true)})};
    const auto v = fold(runs, three_nodes);
    CHECK(v.status == health::healthy);
    CHECK(find(v, outlier_kind::node)->cleared);
    CHECK_FALSE(find(v, outlier_kind::node)->counted);
  }
  SUBCASE("neither: undecided, nothing drained") {
    const std::vector<judged_run> runs{
        retested(&named, {part(outlier_kind::node, 1, -1, {2, 3}, true, 85, false, false)})};
    const auto v = fold(runs, three_nodes);
    CHECK(v.status == health::healthy);
    CHECK(find(v, outlier_kind::node)->undecided);
  }
  SUBCASE("alone slow only toward a counted part of the other side: that part's evidence, not counted") {
    auto l = part(outlier_kind::node, 1, -1, {2, 3}, true, 40, false, false);
    l.explained = true;
    const std::vector<judged_run> runs{retested(&named, {l})};
    const auto v = fold(runs, three_nodes);
    CHECK(v.status == health::healthy);
    REQUIRE(find(v, outlier_kind::node) != nullptr);
    CHECK(find(v, outlier_kind::node)->explained);
    CHECK_FALSE(find(v, outlier_kind::node)->undecided);
    CHECK_FALSE(find(v, outlier_kind::node)->counted);
  }
  SUBCASE("its receives counted, its sends named: the sends' word decides the named cause") {
    const std::vector<judged_run> runs{
        retested(&named, {part(outlier_kind::node, 1, -1, {2, 3}, true, 99, false, true),
                          part(outlier_kind::node, 1, -1, {2, 3}, false, 40, true, false)})};
    const auto v = fold(runs, three_nodes);
    CHECK(v.status == health::degraded);
    // the named sends cleared; the receives, which no run named, counted on the retest's evidence
    int counted = 0;
    for (const auto& c : v.causes) {
      if (c.kind != outlier_kind::node || c.node != 1) continue;
      if (c.basis == outlier_basis::noise) CHECK(c.cleared);
      if (c.basis == outlier_basis::retest) {
        CHECK(c.counted);
        CHECK(std::isnan(c.send_lo));
        CHECK(c.recv_lo == doctest::Approx(40));
        ++counted;
      }
    }
    CHECK(counted == 1);
  }
}

TEST_CASE("--retest: a part no run named counts alone (basis retest); a rank inside a counted node is its node's") {
  outlier_report clean;
  auto l = part(outlier_kind::rank, 2, 4, {4}, true, 30, true, false);
  l.below = 6;  // of its 8 pairs alone, 6 below --slow of their controls
  auto v = fold(std::vector<judged_run>{retested(&clean, {l})}, three_nodes);
  REQUIRE(find(v, outlier_kind::rank) != nullptr);
  CHECK(find(v, outlier_kind::rank)->counted);
  CHECK(find(v, outlier_kind::rank)->basis == outlier_basis::retest);
  // its pairs as its test read them, whatever the pairs' own lines (other bounds) said
  CHECK(find(v, outlier_kind::rank)->pairs == 6);
  CHECK(find(v, outlier_kind::rank)->fine == 2);
  CHECK(v.status == health::degraded);
  // named by the run as rank 2, but the model counted its node (rank 2 within it)
  outlier_report rank2;
  rank2.found = {{outlier_kind::rank, outlier_basis::noise, 1, 2, -1, 30, NAN, 4, 0}};
  auto inner = part(outlier_kind::rank, 1, 2, {2}, true, 30, true, false);
  inner.within = true;
  v = fold(std::vector<judged_run>{retested(&rank2,
                                            {inner, part(outlier_kind::node, 1, -1, {2, 3}, true, 35, true, false)})},
           three_nodes);
  REQUIRE(find(v, outlier_kind::rank) != nullptr);
  CHECK(find(v, outlier_kind::rank)->within);
  CHECK_FALSE(find(v, outlier_kind::rank)->counted);
  REQUIRE(find(v, outlier_kind::node) != nullptr);
  CHECK(find(v, outlier_kind::node)->counted);
}

TEST_CASE("--retest: a named node the retest could not measure, or held back by its host, is undecided") {
  outlier_report named;
  named.found = {node2()};
  auto v = fold(std::vector<judged_run>{retested(&named, {})}, three_nodes);
  CHECK(find(v, outlier_kind::node)->undecided);
  CHECK(v.status == health::healthy);
  auto held = part(outlier_kind::node, 1, -1, {2, 3}, true, 40, false, false);
  held.held_back = true;
  auto run = retested(&named, {held});
  run.alone = {starved(2, 0), starved(3, 4)};
  v = fold(std::vector<judged_run>{run}, three_nodes);
  CHECK(find(v, outlier_kind::node)->undecided);
  CHECK(find(v, outlier_kind::node)->held_cpu == doctest::Approx(0.38));
}

namespace {

// A part of the retest, alone at `pct` % of its controls: counted (standing) or cleared.
lasting_effect alone_at(outlier_kind kind, std::int32_t node, std::vector<std::uint32_t> members, double pct,
                        bool counted) {
  model_cause c{
      kind, node, -1, kind == outlier_kind::uplink ? node : -1, true, std::log(pct / 100), 1e-3, std::move(members)};
  lasting_effect l{c};
  l.effect = std::log(pct / 100);
  l.lo = l.effect - 0.1;
  l.hi = l.effect + 0.1;
  l.pairs = 8;
  l.counted = counted;
  l.cleared = !counted;
  return l;
}

}  // namespace

TEST_CASE("--retest, --topology: a run-named uplink is what its pairs alone say, against its tier's other uplinks") {
  // 6 ranks, one per node, under 3 leaves; the run named leaf 2's uplink (ranks 4, 5) and a link
  // through it
  const std::vector<std::int32_t> node_of{0, 1, 2, 3, 4, 5};
  const std::vector<switch_group> uplinks{{0, {1, 1, 0, 0, 0, 0}}, {1, {0, 0, 1, 1, 0, 0}}, {2, {0, 0, 0, 0, 1, 1}}};
  outlier_report run;
  run.found = {{outlier_kind::uplink, outlier_basis::noise, 2, -1, -1, 55, NAN, 8, 0}, link(4, 0)};
  const auto up = [](bool counted) { return alone_at(outlier_kind::uplink, 2, {4, 5}, counted ? 50 : 99, counted); };
  const auto node = [](std::int32_t n, bool counted) {
    return alone_at(outlier_kind::node, n, {static_cast<std::uint32_t>(n)}, counted ? 40 : 99, counted);
  };
  SUBCASE("counted alone, its nodes alike: the uplink, and the link through it is its evidence") {
    const auto v =
        fold(std::vector<judged_run>{retested(&run, {up(true), node(4, false), node(5, false)})}, node_of, uplinks);
    CHECK(v.status == health::degraded);
    REQUIRE(find(v, outlier_kind::uplink) != nullptr);
    CHECK(find(v, outlier_kind::uplink)->counted);
    CHECK(find(v, outlier_kind::uplink)->alone_pct == doctest::Approx(50));
    CHECK_FALSE(find(v, outlier_kind::link)->counted);
    CHECK(find(v, outlier_kind::node) == nullptr);
  }
  SUBCASE("cleared alone: not counted, whatever the run read") {
    const auto v = fold(std::vector<judged_run>{retested(&run, {up(false)})}, node_of, uplinks);
    CHECK(find(v, outlier_kind::uplink)->cleared);
    CHECK_FALSE(find(v, outlier_kind::uplink)->counted);
  }
  SUBCASE("narrowed by the retest to the node under it that is slow: that node") {
    auto u = up(true);
    u.narrowed = true;
    const auto v = fold(std::vector<judged_run>{retested(&run, {u, node(4, true), node(5, false)})}, node_of, uplinks);
    CHECK(v.status == health::degraded);
    CHECK(find(v, outlier_kind::uplink)->narrowed);
    CHECK_FALSE(find(v, outlier_kind::uplink)->counted);
    REQUIRE(find(v, outlier_kind::node) != nullptr);
    CHECK(find(v, outlier_kind::node)->node == 4);
    CHECK(find(v, outlier_kind::node)->counted);
    CHECK(find(v, outlier_kind::node)->basis == outlier_basis::retest);
  }
  SUBCASE("still slow without the slow node's pairs: the uplink and the node both count") {
    const auto v =
        fold(std::vector<judged_run>{retested(&run, {up(true), node(4, true), node(5, false)})}, node_of, uplinks);
    CHECK(find(v, outlier_kind::uplink)->counted);
    REQUIRE(find(v, outlier_kind::node) != nullptr);
    CHECK(find(v, outlier_kind::node)->counted);
  }
  SUBCASE("named its way up, counted alone both ways: one uplink, with the run's figure") {
    auto down = alone_at(outlier_kind::uplink, 2, {4, 5}, 45, true);
    down.part.sends = false;
    const auto v = fold(std::vector<judged_run>{retested(&run, {up(true), down})}, node_of, uplinks);
    int listed = 0;
    for (const auto& c : v.causes) listed += c.kind == outlier_kind::uplink ? 1 : 0;
    CHECK(listed == 1);
    REQUIRE(find(v, outlier_kind::uplink) != nullptr);
    CHECK(find(v, outlier_kind::uplink)->counted);
    CHECK(find(v, outlier_kind::uplink)->send_lo == doctest::Approx(55));
    CHECK(std::isnan(find(v, outlier_kind::uplink)->recv_lo));
  }
  SUBCASE("not measured alone: undecided, nothing drained on it") {
    const auto v = fold(std::vector<judged_run>{retested(&run, {})}, node_of, uplinks);
    CHECK(find(v, outlier_kind::uplink)->undecided);
    CHECK_FALSE(find(v, outlier_kind::uplink)->counted);
  }
}
