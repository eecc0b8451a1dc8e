// Matrix assembly: tx entries come from the source's record, rx entries from the destination's.
#include "rdmamesh/stats/matrix.hpp"
#include "rdmamesh/stats/median.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace rdmamesh::stats {

pair_layout::pair_layout(std::uint32_t n, std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs) : n_(n) {
  std::ranges::sort(pairs);
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  row_start_.assign(std::size_t{n} + 1, 0);
  for (const auto& [a, b] : pairs) {
    if (a >= n || b >= n) throw std::invalid_argument("pair_layout: a pair's rank is not below n");
    ++row_start_[a + 1];
    src_.push_back(a);
    dst_.push_back(b);
  }
  for (std::uint32_t a = 0; a < n; ++a) row_start_[a + 1] += row_start_[a];
}

std::size_t pair_layout::slot(std::uint32_t a, std::uint32_t b) const {
  if (a >= n_) return none;
  const auto first = dst_.begin() + static_cast<std::ptrdiff_t>(row_start_[a]);
  const auto last = dst_.begin() + static_cast<std::ptrdiff_t>(row_start_[a + 1]);
  const auto it = std::lower_bound(first, last, b);
  return it != last && *it == b ? static_cast<std::size_t>(it - dst_.begin()) : none;
}

void merge_round(std::vector<pair_counters>& acc, std::span<const pair_counters> round, const plan::round_role& role,
                 int round_index) {
  for (std::uint32_t p : role.send_to) {
    pair_counters& a = acc[p];
    const pair_counters& r = round[p];
    a.tx_msgs = r.tx_msgs;
    a.tx_total = r.tx_total;
    a.tx_seconds = r.tx_seconds;
    a.flags |= r.flags & tx_failed;
    a.round = round_index;
  }
  for (std::uint32_t p : role.recv_from) {
    pair_counters& a = acc[p];
    const pair_counters& r = round[p];
    a.rx_msgs = r.rx_msgs;
    a.rx_total = r.rx_total;
    a.rx_seconds = r.rx_seconds;
    a.verify_errors += r.verify_errors;
    a.flags |= r.flags & (rx_failed | rx_incomplete);
  }
}

run_matrices unmeasured_run(std::uint32_t n) {
  run_matrices m;
  m.tx_bw = square<double>(n, nan);
  m.tx_msgs = square<std::uint64_t>(n, 0);
  m.tx_s = square<double>(n, nan);
  m.flags = square<std::uint8_t>(n, 0);
  m.round = square<std::int32_t>(n, -1);
  return m;
}

void require_shared_slots(const run_matrices& m) {
  const auto same = [&](const auto& x) {
    return x.n == m.tx_bw.n && x.layout == m.tx_bw.layout && x.slots() == m.tx_bw.slots();
  };
  if (!same(m.tx_s) || !same(m.round) || !same(m.flags) || !same(m.tx_msgs))
    throw std::invalid_argument("run_matrices: tx_bw, tx_s, tx_msgs, flags and round must share one layout");
}

run_matrices assemble(std::span<const pair_counters> rows, std::uint32_t n, std::uint64_t msg_size,
                      bool rx_measurable) {
  if (rows.size() != std::size_t{n} * n) throw std::invalid_argument("assemble: rows must hold n records per rank");
  run_matrices m{square<double>(n, nan),      square<double>(n, nan),      square<double>(n, nan),
                 square<double>(n, nan),      square<double>(n, nan),      square<double>(n, nan),
                 square<std::uint64_t>(n, 0), square<std::uint64_t>(n, 0), square<std::uint64_t>(n, 0),
                 square<std::uint64_t>(n, 0), square<std::uint64_t>(n, 0), square<std::uint64_t>(n, 0),
                 square<std::uint64_t>(n, 0), square<std::uint8_t>(n, 0),  square<std::int32_t>(n, -1)};
  auto per_second = [](double x, double seconds) { return seconds > 0 ? x / seconds : nan; };
  for (std::uint32_t src = 0; src < n; ++src) {
    for (std::uint32_t dst = 0; dst < n; ++dst) {
      if (src == dst) continue;
      const pair_counters& at_src = rows[std::size_t{src} * n + dst];
      const pair_counters& at_dst = rows[std::size_t{dst} * n + src];
      m.tx_msgs.at(src, dst) = at_src.tx_msgs;
      m.tx_bytes.at(src, dst) = at_src.tx_msgs * msg_size;
      m.tx_total.at(src, dst) = at_src.tx_total;
      m.tx_bw.at(src, dst) = per_second(static_cast<double>(at_src.tx_msgs * msg_size), at_src.tx_seconds);
      m.tx_rate.at(src, dst) = per_second(static_cast<double>(at_src.tx_msgs), at_src.tx_seconds);
      if (at_src.round >= 0) m.tx_s.at(src, dst) = at_src.tx_seconds;  // NaN: the pair did not run
      m.round.at(src, dst) = at_src.round;
      m.rx_total.at(src, dst) = at_dst.rx_total;
      m.verify_errors.at(src, dst) = at_dst.verify_errors;
      if (rx_measurable) {
        m.rx_msgs.at(src, dst) = at_dst.rx_msgs;
        m.rx_bytes.at(src, dst) = at_dst.rx_msgs * msg_size;
        m.rx_bw.at(src, dst) = per_second(static_cast<double>(at_dst.rx_msgs * msg_size), at_dst.rx_seconds);
        m.rx_rate.at(src, dst) = per_second(static_cast<double>(at_dst.rx_msgs), at_dst.rx_seconds);
        if (at_src.round >= 0) m.rx_s.at(src, dst) = at_dst.rx_seconds;
      }
      // the sender's tx flag and the receiver's rx flags describe the same directed pair
      m.flags.at(src, dst) =
          static_cast<std::uint8_t>((at_src.flags & tx_failed) | (at_dst.flags & (rx_failed | rx_incomplete)));
    }
  }
  return m;
}

std::vector<double> rank_windows(const run_matrices& m) {
  std::vector<double> out(m.tx_s.n, nan);
  auto take = [&](std::uint32_t rank, double s) {
    if (std::isfinite(s) && !(out[rank] <= s)) out[rank] = s;
  };
  for (std::uint32_t a = 0; a < m.tx_s.n; ++a) {
    for (std::uint32_t b = 0; b < m.tx_s.n; ++b) {
      if (a == b || m.round.at(a, b) < 0) continue;
      take(a, m.tx_s.at(a, b));
      take(b, m.rx_s.at(a, b));
    }
  }
  return out;
}

summary summarize(const square<double>& m, const square<std::int32_t>& round) {
  std::vector<double> vals;
  std::map<std::int32_t, double> per_round;
  for (std::uint32_t r = 0; r < m.n; ++r) {
    for (std::uint32_t c = 0; c < m.n; ++c) {
      if (r == c || !std::isfinite(m.at(r, c))) continue;
      vals.push_back(m.at(r, c));
      per_round[round.n == m.n ? round.at(r, c) : 0] += m.at(r, c);
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
  for (const auto& [r, sum] : per_round) s.aggregate += sum;
  s.aggregate /= static_cast<double>(per_round.size());
  return s;
}

summary summarize(const square<double>& m) {
  return summarize(m, square<std::int32_t>(m.n, 0));
}

namespace {

// Bandwidth of the pairs `take(src, dst)` selects, summed per round, averaged over rounds.
template <class Take>
double pairs_throughput(const square<double>& bw, const square<std::int32_t>& round, Take take) {
  std::map<std::int32_t, double> per_round;
  for (std::uint32_t s = 0; s < bw.n; ++s) {
    for (std::uint32_t d = 0; d < bw.n; ++d) {
      if (s != d && std::isfinite(bw.at(s, d)) && take(s, d)) per_round[round.at(s, d)] += bw.at(s, d);
    }
  }
  if (per_round.empty()) return nan;
  double sum = 0;
  for (const auto& [r, v] : per_round) sum += v;
  return sum / static_cast<double>(per_round.size());
}

template <class InGroup>
double group_throughput(const square<double>& bw, const square<std::int32_t>& round, InGroup in_group) {
  return pairs_throughput(bw, round, [&](std::uint32_t s, std::uint32_t) { return in_group(s); });
}

}  // namespace

std::vector<double> rank_throughput(const square<double>& bw, const square<std::int32_t>& round) {
  std::vector<double> out(bw.n, nan);
  for (std::uint32_t r = 0; r < bw.n; ++r)
    out[r] = group_throughput(bw, round, [&](std::uint32_t s) { return s == r; });
  return out;
}

std::vector<double> node_throughput(const square<double>& bw, const square<std::int32_t>& round,
                                    std::span<const std::int32_t> node_of, std::uint32_t nodes) {
  std::vector<double> out(nodes, nan);
  for (std::uint32_t k = 0; k < nodes; ++k) {
    out[k] = group_throughput(bw, round, [&](std::uint32_t s) { return node_of[s] == static_cast<std::int32_t>(k); });
  }
  return out;
}

node_split node_throughput_split(const square<double>& bw, const square<std::int32_t>& round,
                                 std::span<const std::int32_t> node_of, std::uint32_t nodes) {
  node_split out{std::vector<double>(nodes, nan), std::vector<double>(nodes, nan)};
  for (std::uint32_t k = 0; k < nodes; ++k) {
    const auto on_k = [&](std::uint32_t r) { return node_of[r] == static_cast<std::int32_t>(k); };
    out.port[k] = pairs_throughput(bw, round, [&](std::uint32_t s, std::uint32_t d) { return on_k(s) && !on_k(d); });
    out.loopback[k] = pairs_throughput(bw, round, [&](std::uint32_t s, std::uint32_t d) { return on_k(s) && on_k(d); });
  }
  return out;
}

double jain(std::span<const double> x) {
  double sum = 0, sum_sq = 0;
  for (double v : x) {
    sum += v;
    sum_sq += v * v;
  }
  return (x.empty() || sum_sq == 0) ? nan : sum * sum / (static_cast<double>(x.size()) * sum_sq);
}

square<double> shares(const square<double>& bw) {
  square<double> out(bw.n, nan);
  for (std::uint32_t c = 0; c < bw.n; ++c) {
    double total = 0;
    for (std::uint32_t r = 0; r < bw.n; ++r) {
      if (r != c && std::isfinite(bw.at(r, c))) total += bw.at(r, c);
    }
    if (total <= 0) continue;
    for (std::uint32_t r = 0; r < bw.n; ++r) {
      if (r != c && std::isfinite(bw.at(r, c))) out.at(r, c) = bw.at(r, c) / total;
    }
  }
  return out;
}

std::vector<double> column_fairness(const square<double>& bw) {
  std::vector<double> out(bw.n, nan);
  for (std::uint32_t c = 0; c < bw.n; ++c) {
    std::vector<double> col;
    for (std::uint32_t r = 0; r < bw.n; ++r) {
      if (r != c && std::isfinite(bw.at(r, c))) col.push_back(bw.at(r, c));
    }
    if (!col.empty()) out[c] = jain(col);
  }
  return out;
}

square<double> ratio(const square<double>& a, const square<double>& b) {
  square<double> out(a.n, nan);
  for (std::size_t i = 0; i < a.v.size() && i < b.v.size(); ++i) {
    if (std::isfinite(a.v[i]) && std::isfinite(b.v[i]) && b.v[i] > 0) out.v[i] = a.v[i] / b.v[i];
  }
  return out;
}

latency_matrices assemble_latency(std::span<const latency_summary> rows, std::uint32_t n) {
  if (rows.size() != std::size_t{n} * n) throw std::invalid_argument("assemble_latency: n records per rank");
  latency_matrices m{square<std::uint64_t>(n, 0), square<double>(n, nan), square<double>(n, nan),
                     square<double>(n, nan),      square<double>(n, nan), square<double>(n, nan),
                     square<double>(n, nan),      square<double>(n, nan), square<double>(n, nan)};
  for (std::uint32_t src = 0; src < n; ++src) {
    for (std::uint32_t dst = 0; dst < n; ++dst) {
      const latency_summary& s = rows[std::size_t{src} * n + dst];
      if (src == dst || s.count == 0) continue;
      constexpr double us = 1e-3;
      m.count.at(src, dst) = s.count;
      m.min.at(src, dst) = s.min * us;
      m.p50.at(src, dst) = s.p50 * us;
      m.p90.at(src, dst) = s.p90 * us;
      m.p99.at(src, dst) = s.p99 * us;
      m.p999.at(src, dst) = s.p999 * us;
      m.max.at(src, dst) = s.max * us;
      m.mean.at(src, dst) = s.mean * us;
      m.stddev.at(src, dst) = s.stddev * us;
    }
  }
  return m;
}

}  // namespace rdmamesh::stats
