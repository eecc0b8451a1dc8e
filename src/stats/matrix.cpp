// Matrix assembly: tx entries come from the source's record, rx entries from the destination's.
#include "rdmamesh/stats/matrix.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace rdmamesh::stats {

run_matrices assemble(std::span<const pair_counters> rows, std::uint32_t n, std::uint64_t msg_size,
                      bool rx_measurable) {
  if (rows.size() != std::size_t{n} * n) throw std::invalid_argument("assemble: rows must hold n records per rank");
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  run_matrices m{square<double>(n, nan),      square<double>(n, nan),      square<std::uint64_t>(n, 0),
                 square<std::uint64_t>(n, 0), square<std::uint64_t>(n, 0), square<std::uint64_t>(n, 0),
                 square<std::uint64_t>(n, 0), square<std::uint64_t>(n, 0), square<std::uint64_t>(n, 0),
                 square<std::uint8_t>(n, 0)};
  auto rate = [](std::uint64_t bytes, double seconds) {
    return seconds > 0 ? static_cast<double>(bytes) / seconds : nan;
  };
  for (std::uint32_t src = 0; src < n; ++src) {
    for (std::uint32_t dst = 0; dst < n; ++dst) {
      if (src == dst) continue;
      const pair_counters& at_src = rows[std::size_t{src} * n + dst];
      const pair_counters& at_dst = rows[std::size_t{dst} * n + src];
      m.tx_msgs.at(src, dst) = at_src.tx_msgs;
      m.tx_bytes.at(src, dst) = at_src.tx_msgs * msg_size;
      m.tx_total.at(src, dst) = at_src.tx_total;
      m.tx_bw.at(src, dst) = rate(at_src.tx_msgs * msg_size, at_src.tx_seconds);
      m.rx_total.at(src, dst) = at_dst.rx_total;
      m.verify_errors.at(src, dst) = at_dst.verify_errors;
      if (rx_measurable) {
        m.rx_msgs.at(src, dst) = at_dst.rx_msgs;
        m.rx_bytes.at(src, dst) = at_dst.rx_msgs * msg_size;
        m.rx_bw.at(src, dst) = rate(at_dst.rx_msgs * msg_size, at_dst.rx_seconds);
      }
      // the sender's tx flag and the receiver's rx flags describe the same directed pair
      m.flags.at(src, dst) =
          static_cast<std::uint8_t>((at_src.flags & tx_failed) | (at_dst.flags & (rx_failed | rx_incomplete)));
    }
  }
  return m;
}

summary summarize(const square<double>& m) {
  std::vector<double> vals;
  for (std::uint32_t r = 0; r < m.n; ++r) {
    for (std::uint32_t c = 0; c < m.n; ++c) {
      if (r != c && std::isfinite(m.at(r, c))) vals.push_back(m.at(r, c));
    }
  }
  summary s;
  s.pairs = vals.size();
  if (vals.empty()) return s;
  std::sort(vals.begin(), vals.end());
  s.min = vals.front();
  s.max = vals.back();
  const std::size_t mid = vals.size() / 2;
  s.median = vals.size() % 2 ? vals[mid] : (vals[mid - 1] + vals[mid]) / 2;
  for (double v : vals) s.aggregate += v;
  return s;
}

}  // namespace rdmamesh::stats
