// Log-linear bucketing: value v >= 2^8 with top bit e lands in bucket 256 + (e-8)*128 + the
// next 7 bits of v, so every bucket spans 1/128 of its value.
#include "rdmamesh/stats/histogram.hpp"

#include <bit>
#include <cmath>

namespace rdmamesh::stats {
namespace {

constexpr std::uint64_t exact = 1u << histogram::sub_bits;
constexpr std::uint64_t half = exact / 2;

}  // namespace

std::size_t histogram::index_of(std::uint64_t v) {
  if (v < exact) return static_cast<std::size_t>(v);
  const int e = 63 - std::countl_zero(v);                  // >= sub_bits
  const std::uint64_t mantissa = v >> (e - sub_bits + 1);  // in [half, exact)
  return static_cast<std::size_t>(exact + static_cast<std::uint64_t>(e - sub_bits) * half + (mantissa - half));
}

std::uint64_t histogram::lowest_of(std::size_t index) {
  if (index < exact) return index;
  const std::uint64_t i = index - exact;
  const int e = static_cast<int>(i / half) + sub_bits;
  const std::uint64_t mantissa = half + i % half;
  return mantissa << (e - sub_bits + 1);
}

std::uint64_t histogram::highest_of(std::size_t index) {
  if (index + 1 >= buckets) return UINT64_MAX;
  return lowest_of(index + 1) - 1;
}

void histogram::record(std::uint64_t value) {
  ++counts_[index_of(value)];
  ++count_;
  min_ = value < min_ ? value : min_;
  max_ = value > max_ ? value : max_;
  const double x = static_cast<double>(value);
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (x - mean_);
}

void histogram::merge_moments(std::uint64_t count, std::uint64_t min, std::uint64_t max, double mean, double m2) {
  if (count == 0) return;
  if (count_ == 0) {
    count_ = count;
    min_ = min;
    max_ = max;
    mean_ = mean;
    m2_ = m2;
    return;
  }
  const double n_a = static_cast<double>(count_);
  const double n_b = static_cast<double>(count);
  const double delta = mean - mean_;
  const double n = n_a + n_b;
  mean_ += delta * n_b / n;
  m2_ += m2 + delta * delta * n_a * n_b / n;
  count_ += count;
  min_ = min < min_ ? min : min_;
  max_ = max > max_ ? max : max_;
}

void histogram::merge(const histogram& other) {
  add_counts(other.counts_);
  merge_moments(other.count_, other.min_, other.max_, other.mean_, other.m2_);
}

void histogram::add_counts(std::span<const std::uint64_t> counts) {
  for (std::size_t i = 0; i < counts.size() && i < buckets; ++i) counts_[i] += counts[i];
}

double histogram::stddev() const {
  return count_ ? std::sqrt(m2_ / static_cast<double>(count_)) : 0.0;
}

std::uint64_t histogram::percentile(double p) const {
  std::uint64_t total = 0;
  for (auto c : counts_) total += c;
  if (total == 0) return 0;
  // the smallest value with at least ceil(p% of total) samples at or below it
  const auto rank = static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(total)));
  const std::uint64_t want = rank == 0 ? 1 : rank;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets; ++i) {
    seen += counts_[i];
    if (seen >= want) {
      const std::uint64_t hi = highest_of(i);
      return (count_ && hi > max_) ? max_ : hi;
    }
  }
  return max_;
}

}  // namespace rdmamesh::stats
