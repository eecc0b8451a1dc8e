// The rank test the verdict names a side by when no run named it: its figure is the exact chance,
// so a healthy side is named at the stated level and no more often.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "rdmamesh/stats/median.hpp"
#include "rdmamesh/stats/rank_test.hpp"

using namespace rdmamesh::stats;

TEST_CASE("x below every y: the chance is one ordering of m among m + c, m! c! / (m + c)!") {
  const std::vector<double> y{78, 86, 92, 97, 103, 108, 115, 126};
  CHECK(lower_rank_p(std::vector<double>{40, 45, 50, 55}, y) == doctest::Approx(1.0 / 495));
  CHECK(lower_rank_p(std::vector<double>{46, 49}, y) == doctest::Approx(2.0 / 90));
  CHECK(lower_rank_p(std::vector<double>{46}, y) == doctest::Approx(1.0 / 9));
  // x above every y: nothing is lower, the chance is whole
  CHECK(lower_rank_p(std::vector<double>{200, 300}, y) == doctest::Approx(1.0));
  // nothing to rank
  CHECK(lower_rank_p(std::vector<double>{}, y) == 1);
  CHECK(lower_rank_p(std::vector<double>{40}, std::vector<double>{}) == 1);
}

TEST_CASE("a tie counts nothing: x equal to every y reads no lower than chance") {
  const std::vector<double> y{100, 100, 100, 100};
  CHECK(lower_rank_p(std::vector<double>{100, 100}, y) == doctest::Approx(1.0));
}

TEST_CASE("drawn alike, x and y are named at the level asked for, not more often") {
  // the stated level holds whatever the noise's shape: a heavy-tailed draw (Cauchy) like pairs
  // alone on a crowded host
  std::mt19937_64 g(7);
  std::cauchy_distribution<double> noise(100, 20);
  for (const auto [m, c] : {std::pair{3, 8}, std::pair{4, 11}, std::pair{6, 12}}) {
    int named = 0;
    constexpr int draws = 4000;
    for (int i = 0; i < draws; ++i) {
      std::vector<double> x(static_cast<std::size_t>(m)), y(static_cast<std::size_t>(c));
      for (auto& v : x) v = noise(g);
      for (auto& v : y) v = noise(g);
      named += lower_rank_p(x, y) <= 0.05;
    }
    // at most 5 %, give or take four binomial standard deviations of 4 000 draws
    CHECK(named <= 0.05 * draws + 4 * std::sqrt(0.05 * 0.95 * draws));
    CHECK(named >= 0.01 * draws);  // and not a test that never names anything
  }
}

TEST_CASE("large sides use the normal limit, which agrees with the exact count at the seam") {
  std::vector<double> x, y;
  for (int i = 0; i < 64; ++i) {
    x.push_back(i - 8.25);  // a little lower
    y.push_back(i);
  }
  const double exact = lower_rank_p(x, y);  // 64 x 64 = 4 096 pairs: counted exactly
  x.push_back(23.5);                        // one more near x's median: past the seam, the limit
  const double limit = lower_rank_p(x, y);
  CHECK(exact > 0.001);
  CHECK(exact < 0.05);
  CHECK(limit == doctest::Approx(exact).epsilon(0.3));
  // no shift reads about half
  std::vector<double> a, b;
  for (int i = 0; i < 160; ++i) (i % 2 ? a : b).push_back(i);
  CHECK(lower_rank_p(a, b) == doctest::Approx(0.5).epsilon(0.1));
}

TEST_CASE(
    "the median of two sorted arrays is the median of both together, less values taken out, ties and empty sides "
    "included") {
  std::mt19937_64 g(7);
  std::uniform_int_distribution<int> value(0, 20);  // few values: many ties
  for (std::size_t nx : {0, 1, 2, 5, 16}) {
    for (std::size_t ny : {0, 1, 3, 8, 1000}) {
      if (nx + ny == 0) {
        CHECK(std::isnan(median_of_sorted({}, {})));
        continue;
      }
      std::vector<double> x(nx), y(ny);
      for (auto& v : x) v = value(g);
      for (auto& v : y) v = value(g) + 0.5;
      std::ranges::sort(x);
      std::ranges::sort(y);
      std::vector<double> both(x);
      both.insert(both.end(), y.begin(), y.end());
      CHECK(median_of_sorted(x, y) == median_of(both));
      CHECK(median_of_sorted(y, x) == median_of(both));
      for (std::size_t k = 0; k < both.size(); k += 7) {
        std::vector<double> all(both);
        std::ranges::sort(all);
        CHECK(kth_of_sorted(x, y, k) == all[k]);
      }
      // every third value of y taken out (of many ties, one each)
      std::vector<double> gone, left(x);
      for (std::size_t i = 0; i < y.size(); ++i) (i % 3 == 1 ? gone : left).push_back(y[i]);
      if (left.empty()) continue;
      CHECK(median_of_sorted(y, x, gone) == median_of(left));
      std::ranges::sort(left);
      for (std::size_t k = 0; k < left.size(); k += 5) CHECK(kth_of_sorted(y, x, k, gone) == left[k]);
    }
  }
}
