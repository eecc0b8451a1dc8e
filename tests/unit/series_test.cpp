// Bandwidth over time: marks read by the engine become rates per slot of one grid.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "rdmamesh/stats/series.hpp"

using namespace rdmamesh;

TEST_CASE("slots cover the duration, the last one partial; off is zero slots") {
  CHECK(stats::series_slots(2.0, 0.5) == 4);
  CHECK(stats::series_slots(2.2, 0.5) == 5);
  CHECK(stats::series_slots(5.0, 0.0) == 0);
  CHECK(stats::series_slots(0.3, 0.5) == 1);
}

TEST_CASE("rates between marks fill the slots they span; bytes are conserved") {
  // marks at 0, 0.5, 1.0 (late: the loop was busy), 2.0 (the end), slot 0.5 s, 4096 B messages
  const std::vector<double> at = {0.0, 0.5, 1.5, 2.0};
  const std::vector<std::uint32_t> slot = {0, 1, 3, 4};
  const std::vector<std::uint64_t> count = {0, 100, 400, 500};
  const auto r = stats::slot_rates(at, slot, count, 4, 4096);
  REQUIRE(r.size() == 4);
  CHECK(r[0] == doctest::Approx(100 * 4096 / 0.5));
  CHECK(r[1] == doctest::Approx(300 * 4096 / 1.0));  // one mark missed: both slots get the mean
  CHECK(r[2] == doctest::Approx(r[1]));
  CHECK(r[3] == doctest::Approx(100 * 4096 / 0.5));
  double bytes = 0;
  for (double x : r) bytes += x * 0.5;
  CHECK(bytes == doctest::Approx(500.0 * 4096));
}

TEST_CASE("a run cut short leaves the slots after its last mark NaN") {
  const std::vector<double> at = {0.0, 0.5, 0.7};
  const std::vector<std::uint32_t> slot = {0, 1, 2};
  const std::vector<std::uint64_t> count = {0, 10, 12};
  const auto r = stats::slot_rates(at, slot, count, 4, 1);
  CHECK(r[0] == doctest::Approx(20));
  CHECK(r[1] == doctest::Approx(10));
  CHECK(std::isnan(r[2]));
  CHECK(std::isnan(r[3]));
}
