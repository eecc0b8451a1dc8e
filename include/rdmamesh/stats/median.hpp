#pragma once
// The median and the NaN that stands for "not measured", shared by the statistics files.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace rdmamesh::stats {

inline constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// NaN for an empty set; the mean of the two middle values for an even count. Reorders `v`.
inline double median_in(std::span<double> v) {
  if (v.empty()) return nan;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + hi) / 2;
}

inline double median_in(std::vector<double>& v) {
  return median_in(std::span<double>(v));
}
inline double median_of(std::vector<double> v) {
  return median_in(v);
}

// The k-th smallest (from 0) of two ascending arrays together, k below their total size.
inline double kth_of_sorted(std::span<const double> x, std::span<const double> y, std::size_t k) {
  std::size_t lo = k + 1 > y.size() ? k + 1 - y.size() : 0, hi = std::min(k + 1, x.size());
  while (lo < hi) {  // how many of x lie among the k + 1 smallest
    const std::size_t i = (lo + hi) / 2, j = k + 1 - i;
    if (j > 0 && i < x.size() && y[j - 1] > x[i]) {
      lo = i + 1;
    } else {
      hi = i;
    }
  }
  const std::size_t j = k + 1 - lo;
  const double none = -std::numeric_limits<double>::infinity();
  return std::max(lo > 0 ? x[lo - 1] : none, j > 0 ? y[j - 1] : none);
}

// median_in of two ascending arrays together, without merging them: a few values against
// thousands shared by many such medians.
inline double median_of_sorted(std::span<const double> x, std::span<const double> y) {
  const std::size_t size = x.size() + y.size();
  if (size == 0) return nan;
  if (size % 2 == 1) return kth_of_sorted(x, y, size / 2);
  return (kth_of_sorted(x, y, size / 2 - 1) + kth_of_sorted(x, y, size / 2)) / 2;
}

// 1.4826 x the median absolute deviation from `centre`: a normal's sd, unmoved by a few far
// values; 0 for an empty set
inline double mad_scale(std::vector<double> v, double centre = 0) {
  for (auto& x : v) x = std::fabs(x - centre);
  const double m = median_of(std::move(v));
  return std::isfinite(m) ? 1.4826 * m : 0;
}

}  // namespace rdmamesh::stats
