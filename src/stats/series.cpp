// Rates per grid slot from the cumulative counts read at the marks.
#include "rdmamesh/stats/series.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rdmamesh::stats {

std::uint32_t series_slots(double duration_s, double interval_s) {
  if (!(interval_s > 0) || !(duration_s > 0)) return 0;
  return static_cast<std::uint32_t>(std::ceil(duration_s / interval_s - 1e-9));
}

std::vector<double> slot_rates(std::span<const double> at_s, std::span<const std::uint64_t> count, std::uint32_t slots,
                               double interval_s, std::uint64_t msg_size) {
  std::vector<double> out(slots, std::numeric_limits<double>::quiet_NaN());
  const std::size_t marks = std::min(at_s.size(), count.size());
  if (marks < 2 || !(interval_s > 0)) return out;
  const double end = at_s[marks - 1];
  // messages completed by time t, the rate constant between two marks: the marks are all we
  // know, and a slot that two late marks straddle gets its share of their interval, not its rate
  std::size_t m = 0;
  auto completed = [&](double t) {
    while (m + 2 < marks && at_s[m + 1] <= t) ++m;
    const double t0 = at_s[m], t1 = at_s[m + 1];
    const auto c0 = static_cast<double>(count[m]), c1 = static_cast<double>(count[m + 1]);
    if (!(t1 > t0) || t >= t1) return c1;
    return t <= t0 ? c0 : c0 + (c1 - c0) * (t - t0) / (t1 - t0);
  };
  const double eps = 1e-9 * interval_s;
  for (std::uint32_t k = 0; k < slots; ++k) {
    const double from = k * interval_s;
    if (from >= end - eps) break;  // the interval ended before this slot
    // the last slot the interval reaches takes it to its end (a late final mark included)
    const double to = (k + 1 == slots || (k + 1) * interval_s >= end - eps) ? end : (k + 1) * interval_s;
    const double c0 = completed(from), c1 = completed(to);
    out[k] = (c1 - c0) * static_cast<double>(msg_size) / (to - from);
  }
  return out;
}

}  // namespace rdmamesh::stats
