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

namespace {

// what the slots say moved: each slot's rate times its width (the last one to the end)
double bytes_in(const std::vector<double>& r, double interval, double end) {
  double bytes = 0;
  for (std::size_t k = 0; k < r.size() && std::isfinite(r[k]); ++k) {
    const bool last = k + 1 == r.size() || !std::isfinite(r[k + 1]);
    bytes += r[k] * (last ? end - static_cast<double>(k) * interval : interval);
  }
  return bytes;
}

}  // namespace

TEST_CASE("marks on the grid give each slot its own rate") {
  const std::vector<double> at = {0.0, 0.5, 1.0, 1.5, 2.0};
  const std::vector<std::uint64_t> count = {0, 100, 300, 300, 400};
  const auto r = stats::slot_rates(at, count, 4, 0.5, 4096);
  REQUIRE(r.size() == 4);
  CHECK(r[0] == doctest::Approx(100 * 4096 / 0.5));
  CHECK(r[1] == doctest::Approx(200 * 4096 / 0.5));
  CHECK(r[2] == 0);  // nothing completed: an honest 0, not a gap
  CHECK(r[3] == doctest::Approx(100 * 4096 / 0.5));
}

TEST_CASE("a mark missed by a busy loop: the slots it spans share its rate, bytes are conserved") {
  const std::vector<double> at = {0.0, 0.5, 1.5, 2.0};  // the mark at 1.0 never happened
  const std::vector<std::uint64_t> count = {0, 100, 400, 500};
  const auto r = stats::slot_rates(at, count, 4, 0.5, 4096);
  CHECK(r[1] == doctest::Approx(300 * 4096 / 1.0));
  CHECK(r[2] == doctest::Approx(r[1]));
  CHECK(bytes_in(r, 0.5, 2.0) == doctest::Approx(500.0 * 4096));
}

TEST_CASE("late marks straddling a boundary move no bytes between slots (a starved rank's marks)") {
  // the loop woke at 0.98 s and 1.02 s: 10 messages in those 40 ms belong half to slot 1 and
  // half to slot 2, not 10 / 0.04 s standing for all of slot 1
  const std::vector<double> at = {0.0, 0.98, 1.02, 1.5};
  const std::vector<std::uint64_t> count = {0, 98, 108, 156};
  const auto r = stats::slot_rates(at, count, 3, 0.5, 1);
  CHECK(r[0] == doctest::Approx(100.0));
  CHECK(r[1] == doctest::Approx((98 - 50 + 5) / 0.5));
  CHECK(r[2] == doctest::Approx((5 + 48) / 0.5));
  for (double x : r) CHECK(x < 150);  // no slot at the straddling pair's 250 messages/s
  CHECK(bytes_in(r, 0.5, 1.5) == doctest::Approx(156.0));
}

TEST_CASE("an interval that ends early or late: partial last slot, NaN after it, overrun in the last") {
  const std::vector<double> at = {0.0, 0.5, 0.7};  // a rank starved when its interval opened
  const std::vector<std::uint64_t> count = {0, 10, 12};
  const auto r = stats::slot_rates(at, count, 4, 0.5, 1);
  CHECK(r[0] == doctest::Approx(20));
  CHECK(r[1] == doctest::Approx(2 / 0.2));  // its rate over the 0.2 s it covered
  CHECK(std::isnan(r[2]));
  CHECK(std::isnan(r[3]));
  CHECK(bytes_in(r, 0.5, 0.7) == doctest::Approx(12.0));

  const std::vector<double> over = {0.0, 0.5, 1.1};  // the end noticed 0.1 s late
  const std::vector<std::uint64_t> c2 = {0, 10, 22};
  const auto r2 = stats::slot_rates(over, c2, 2, 0.5, 1);
  CHECK(r2[1] == doctest::Approx(12 / 0.6));
  CHECK(bytes_in(r2, 0.5, 1.1) == doctest::Approx(22.0));
}

TEST_CASE("fewer than two marks: every slot NaN") {
  const std::vector<double> at = {0.0};
  const std::vector<std::uint64_t> count = {5};
  const auto r = stats::slot_rates(at, count, 3, 0.5, 1);
  CHECK(std::isnan(r[0]));
  CHECK(std::isnan(r[2]));
}
