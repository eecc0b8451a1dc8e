// The latency histogram: bounded relative error, exact moments, merges that equal one big
// histogram, and percentiles that never trim the tail.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "rdmamesh/stats/histogram.hpp"
#include "rdmamesh/stats/latency.hpp"

using rdmamesh::stats::histogram;

TEST_CASE("buckets: exact below 256, then within 1/128 of the value, contiguous") {
  for (std::uint64_t v = 0; v < 256; ++v) CHECK(histogram::index_of(v) == v);
  for (std::uint64_t v : {256ULL, 257ULL, 1000ULL, 12345ULL, 1ULL << 20, (1ULL << 40) + 7, ~0ULL}) {
    const std::size_t i = histogram::index_of(v);
    CHECK(histogram::lowest_of(i) <= v);
    CHECK(v <= histogram::highest_of(i));
    const double width = static_cast<double>(histogram::highest_of(i) - histogram::lowest_of(i) + 1);
    CHECK(width / static_cast<double>(histogram::lowest_of(i)) <= 1.0 / 128 + 1e-12);
  }
  for (std::size_t i = 0; i + 1 < histogram::buckets; ++i) {
    REQUIRE(histogram::highest_of(i) + 1 == histogram::lowest_of(i + 1));
  }
}

TEST_CASE("percentiles are within the bucket error of the exact order statistics, max is exact") {
  std::mt19937_64 gen(7);
  std::lognormal_distribution<double> dist(9.0, 1.2);  // ~ 8 us median in ns, a long tail
  std::vector<std::uint64_t> xs;
  histogram h;
  for (int i = 0; i < 100000; ++i) {
    const auto v = static_cast<std::uint64_t>(dist(gen));
    xs.push_back(v);
    h.record(v);
  }
  std::sort(xs.begin(), xs.end());
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    const auto exact = xs[static_cast<std::size_t>(std::ceil(p / 100 * xs.size())) - 1];
    const auto got = h.percentile(p);
    CAPTURE(p);
    CHECK(got >= exact);
    CHECK(static_cast<double>(got) <= static_cast<double>(exact) * (1 + 1.0 / 128) + 1);
  }
  CHECK(h.percentile(100) == xs.back());  // no tail trimming: the largest sample is reported
  CHECK(h.max() == xs.back());
  CHECK(h.min() == xs.front());
  double mean = 0;
  for (auto v : xs) mean += static_cast<double>(v);
  mean /= static_cast<double>(xs.size());
  double var = 0;
  for (auto v : xs) var += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
  CHECK(h.mean() == doctest::Approx(mean).epsilon(1e-9));
  CHECK(h.stddev() == doctest::Approx(std::sqrt(var / static_cast<double>(xs.size()))).epsilon(1e-9));
}

TEST_CASE("stddev is a floating-point value, not truncated") {
  histogram h;
  h.record(10);
  h.record(11);
  CHECK(h.stddev() == doctest::Approx(0.5));
  CHECK(h.mean() == doctest::Approx(10.5));
}

TEST_CASE("merging parts equals recording everything in one histogram") {
  histogram a, b, all;
  for (std::uint64_t v = 1; v < 5000; v += 3) {
    (v % 2 ? a : b).record(v * 17);
    all.record(v * 17);
  }
  histogram merged = a;
  merged.merge(b);
  CHECK(merged.count() == all.count());
  CHECK(merged.min() == all.min());
  CHECK(merged.max() == all.max());
  CHECK(merged.mean() == doctest::Approx(all.mean()));
  CHECK(merged.stddev() == doctest::Approx(all.stddev()));
  for (double p : {1.0, 50.0, 99.0}) CHECK(merged.percentile(p) == all.percentile(p));
  // counts and moments merged separately, as the ranks do it
  histogram split;
  split.add_counts(a.counts());
  split.add_counts(b.counts());
  split.merge_moments(a.count(), a.min(), a.max(), a.mean(), a.m2());
  split.merge_moments(b.count(), b.min(), b.max(), b.mean(), b.m2());
  CHECK(split.percentile(50) == all.percentile(50));
  CHECK(split.stddev() == doctest::Approx(all.stddev()));
}

TEST_CASE("summary of an empty histogram is all zero; of one sample is that sample") {
  CHECK(rdmamesh::stats::summarize(histogram{}).count == 0);
  histogram h;
  h.record(1234);
  const auto s = rdmamesh::stats::summarize(h);
  CHECK(s.count == 1);
  CHECK(s.min == 1234);
  CHECK(s.max == 1234);
  CHECK(s.p50 == 1234);
  CHECK(s.p999 == 1234);
  CHECK(s.stddev == 0);
}
