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

// The k-th smallest (from 0) of two ascending arrays together, less `gone` (ascending, values
// of x, each taking one of them out), k below what is left: a few values against thousands shared
// by many such order statistics, each of which would otherwise merge or copy them.
inline double kth_of_sorted(std::span<const double> x, std::span<const double> y, std::size_t k,
                            std::span<const double> gone = {}) {
  const auto at_most = [&](double v) {  // how many of what is left lie at or below v
    const auto ub = [v](std::span<const double> s) {
      return static_cast<std::size_t>(std::upper_bound(s.begin(), s.end(), v) - s.begin());
    };
    return ub(x) - ub(gone) + ub(y);
  };
  // in each array, the first value with k + 1 at or below it: the k-th is the smaller (a value
  // taken out never is the first, as what lies at or below it does not grow there)
  const auto first = [&](std::span<const double> s) {
    const auto it = std::partition_point(s.begin(), s.end(), [&](double v) { return at_most(v) < k + 1; });
    return it == s.end() ? std::numeric_limits<double>::infinity() : *it;
  };
  return std::min(first(x), first(y));
}

// median_in of two ascending arrays together, less `gone` (as kth_of_sorted), without merging them.
inline double median_of_sorted(std::span<const double> x, std::span<const double> y,
                               std::span<const double> gone = {}) {
  const std::size_t size = x.size() + y.size() - gone.size();
  if (size == 0) return nan;
  if (size % 2 == 1) return kth_of_sorted(x, y, size / 2, gone);
  return (kth_of_sorted(x, y, size / 2 - 1, gone) + kth_of_sorted(x, y, size / 2, gone)) / 2;
}

// 1.4826 x the median absolute deviation from `centre`: a normal's sd, unmoved by a few far
// values; 0 for an empty set
inline double mad_scale(std::vector<double> v, double centre = 0) {
  for (auto& x : v) x = std::fabs(x - centre);
  const double m = median_of(std::move(v));
  return std::isfinite(m) ? 1.4826 * m : 0;
}

}  // namespace rdmamesh::stats
