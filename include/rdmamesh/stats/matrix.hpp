// Per-pair bookkeeping: the gathered per-rank counters become N x N matrices
// (row = source rank, column = destination rank) and a summary over the pairs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "rdmamesh/stats/counters.hpp"

namespace rdmamesh::stats {

template <class T>
struct square {
  std::uint32_t n = 0;
  std::vector<T> v;  // row-major, n * n
  square() = default;
  square(std::uint32_t n_, T fill) : n(n_), v(std::size_t{n_} * n_, fill) {}
  T& at(std::uint32_t row, std::uint32_t col) { return v[std::size_t{row} * n + col]; }
  const T& at(std::uint32_t row, std::uint32_t col) const { return v[std::size_t{row} * n + col]; }
};

struct run_matrices {
  square<double> tx_bw;  // bytes/s the source completed toward the destination; NaN on the diagonal
  square<double> rx_bw;  // bytes/s the destination received from the source; NaN where not measurable
  square<std::uint64_t> tx_msgs, rx_msgs, tx_bytes, rx_bytes;
  square<std::uint64_t> tx_total, rx_total;  // whole run, warm-up and drain included
  square<std::uint64_t> verify_errors;       // counted at the destination
  square<std::uint8_t> flags;                // pair_flags of both ends, OR-ed
};

// `rows` holds n records per rank in rank order: rows[r * n + p] is rank r's view of peer p.
// `rx_measurable`: whether the receiver saw each message (false for one-sided WRITE).
run_matrices assemble(std::span<const pair_counters> rows, std::uint32_t n, std::uint64_t msg_size, bool rx_measurable);

struct summary {
  std::size_t pairs = 0;  // finite off-diagonal entries
  double min = 0, median = 0, max = 0;
  double aggregate = 0;  // sum over the pairs
};

// Over the finite off-diagonal entries; all zero when there are none.
summary summarize(const square<double>& m);

}  // namespace rdmamesh::stats
