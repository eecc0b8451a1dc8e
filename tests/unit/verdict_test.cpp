// The job's verdict: a cause counts when most judged runs name it, a failed pair always, and a
// suspect link (one pair in one run) only when a retest or several runs confirm it.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "rdmamesh/stats/verdict.hpp"

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

const folded_cause* find(const job_verdict& v, outlier_kind k) {
  for (const auto& c : v.causes) {
    if (c.kind == k) return &c;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("a node named in most judged runs is counted and the job is degraded; in a minority it is not") {
  outlier_report named, clean;
  named.found = {node2()};
  std::vector<judged_run> runs{
      {0, "mesh 4 KiB", &named, true, {}}, {1, "mesh 64 KiB", &named, true, {}}, {2, "pairs 4 KiB", &clean, true, {}}};
  auto v = fold(runs);
  CHECK(v.status == health::degraded);
  CHECK(v.runs_judged == 3);
  REQUIRE(find(v, outlier_kind::node) != nullptr);
  CHECK(find(v, outlier_kind::node)->counted);
  CHECK(find(v, outlier_kind::node)->runs.size() == 2);
  runs[1].report = &clean;
  v = fold(runs);
  CHECK(v.status == health::healthy);
  CHECK_FALSE(find(v, outlier_kind::node)->counted);
}

TEST_CASE("a suspect link in one run is not a verdict; a retest that finds it still slow alone is") {
  outlier_report sus;
  sus.found = {link(1, 3)};
  std::vector<judged_run> runs{{0, "mesh 64 KiB", &sus, true, {}}};
  auto v = fold(runs);
  CHECK(v.status == health::healthy);
  REQUIRE(find(v, outlier_kind::link) != nullptr);
  CHECK_FALSE(find(v, outlier_kind::link)->counted);
  runs[0].confirmed = {{1, 3}};
  v = fold(runs);
  CHECK(v.status == health::degraded);
  CHECK(find(v, outlier_kind::link)->counted);
  runs[0].confirmed = {{3, 1}};  // the other direction confirms nothing
  CHECK(fold(runs).status == health::healthy);
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
