#include "rdmamesh/stats/rank_test.hpp"

#include <cmath>
#include <cstddef>
#include <numbers>
#include <utility>
#include <vector>

namespace rdmamesh::stats {

double lower_rank_p(std::span<const double> x, std::span<const double> y) {
  const std::size_t m = x.size(), c = y.size();
  if (m == 0 || c == 0) return 1;
  std::size_t u = 0;
  for (double a : x)
    for (double b : y) u += a < b;
  const std::size_t top = m * c;
  if (top > 4096) {  // the exact count's cost grows as m^2 c^2: its normal limit, continuity-corrected
    const double mean = static_cast<double>(top) / 2;
    const double sd = std::sqrt(static_cast<double>(top) * static_cast<double>(m + c + 1) / 12);
    return 0.5 * std::erfc((static_cast<double>(u) - 0.5 - mean) / (sd * std::numbers::sqrt2));
  }
  // p[j][k]: the chance that i x's and j y's in random order give U = k; the largest of them is
  // a y (beats all i x's, adds i) with chance j / (i + j), else an x (adds nothing)
  std::vector<std::vector<double>> prev(c + 1, std::vector<double>(top + 1, 0.0)), cur = prev;
  for (std::size_t j = 0; j <= c; ++j) prev[j][0] = 1;  // no x: U is 0
  for (std::size_t i = 1; i <= m; ++i) {
    cur[0].assign(top + 1, 0.0);
    cur[0][0] = 1;  // no y: U is 0
    for (std::size_t j = 1; j <= c; ++j) {
      const double by_y = static_cast<double>(j) / static_cast<double>(i + j);
      for (std::size_t k = 0; k <= top; ++k) {
        const double last_y = k >= i ? cur[j - 1][k - i] : 0.0;
        cur[j][k] = by_y * last_y + (1 - by_y) * prev[j][k];
      }
    }
    std::swap(prev, cur);
  }
  double p = 0;
  for (std::size_t k = u; k <= top; ++k) p += prev[c][k];
  return std::fmin(p, 1.0);
}

}  // namespace rdmamesh::stats
