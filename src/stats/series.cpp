// Rates between consecutive marks, spread over the grid slots the marks enclose.
#include "rdmamesh/stats/series.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rdmamesh::stats {

std::uint32_t series_slots(double duration_s, double interval_s) {
  if (!(interval_s > 0) || !(duration_s > 0)) return 0;
  return static_cast<std::uint32_t>(std::ceil(duration_s / interval_s - 1e-9));
}

std::vector<double> slot_rates(std::span<const double> at_s, std::span<const std::uint32_t> slot_of,
                               std::span<const std::uint64_t> count, std::uint32_t slots, std::uint64_t msg_size) {
  std::vector<double> out(slots, std::numeric_limits<double>::quiet_NaN());
  const std::size_t marks = std::min({at_s.size(), slot_of.size(), count.size()});
  for (std::size_t m = 0; m + 1 < marks; ++m) {
    const double dt = at_s[m + 1] - at_s[m];
    if (!(dt > 0)) continue;
    const double rate = static_cast<double>(count[m + 1] - count[m]) * static_cast<double>(msg_size) / dt;
    for (std::uint32_t k = slot_of[m]; k < std::min(slot_of[m + 1], slots); ++k) out[k] = rate;
  }
  return out;
}

}  // namespace rdmamesh::stats
