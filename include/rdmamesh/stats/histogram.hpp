// Latency histogram in the HdrHistogram style: fixed memory, log-linear buckets with 1/128
// relative width (values below 256 exact), plus exact count, min, max, mean and variance
// (Welford), so percentiles are within 0.8 % and nothing is trimmed.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace rdmamesh::stats {

class histogram {
 public:
  static constexpr int sub_bits = 8;  // 2^8 exact values, then 2^7 buckets per power of two
  static constexpr std::size_t buckets = (1u << sub_bits) + (64 - sub_bits) * (1u << (sub_bits - 1));

  void record(std::uint64_t value);
  void merge(const histogram& other);
  // Adds bucket counts only (e.g. summed across ranks); exact moments are merged separately.
  void add_counts(std::span<const std::uint64_t> counts);

  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double mean() const { return mean_; }
  double stddev() const;  // population standard deviation, in floating point
  double m2() const { return m2_; }
  // The value at or below which `p` percent of the samples lie (the bucket's highest
  // equivalent value, capped at max). 0 when empty.
  std::uint64_t percentile(double p) const;
  std::span<const std::uint64_t> counts() const { return counts_; }

  static std::size_t index_of(std::uint64_t value);
  static std::uint64_t lowest_of(std::size_t index);
  static std::uint64_t highest_of(std::size_t index);

  // Exact moments of several histograms combined (Chan et al.'s parallel variance).
  void merge_moments(std::uint64_t count, std::uint64_t min, std::uint64_t max, double mean, double m2);

 private:
  std::array<std::uint64_t, buckets> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
  double mean_ = 0;
  double m2_ = 0;
};

}  // namespace rdmamesh::stats
