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

// 1.4826 x the median absolute deviation from `centre`: a normal's sd, unmoved by a few far
// values; 0 for an empty set
inline double mad_scale(std::vector<double> v, double centre = 0) {
  for (auto& x : v) x = std::fabs(x - centre);
  const double m = median_of(std::move(v));
  return std::isfinite(m) ? 1.4826 * m : 0;
}

}  // namespace rdmamesh::stats
