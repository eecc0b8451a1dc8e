// Per-pair bookkeeping: the gathered per-rank counters become N x N matrices
// (row = source rank, column = destination rank) and summaries over the pairs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "rdmamesh/plan/schedule.hpp"
#include "rdmamesh/stats/counters.hpp"
#include "rdmamesh/stats/latency.hpp"

namespace rdmamesh::stats {

// The ordered pairs a sparse run's matrices hold, sorted by (source, destination). A pattern of
// a few partners per rank measures a few pairs per row: at thousands of ranks its matrices must
// cost those pairs, not N^2. The matrices of one run share one layout, so slot i is the same pair
// in each of them.
class pair_layout {
 public:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  // `pairs` in any order; repeats kept once.
  pair_layout(std::uint32_t n, std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs);
  std::uint32_t n() const { return n_; }
  std::size_t size() const { return dst_.size(); }
  std::size_t slot(std::uint32_t a, std::uint32_t b) const;  // `none` where the pair is not held
  std::uint32_t src(std::size_t i) const { return src_[i]; }
  std::uint32_t dst(std::size_t i) const { return dst_[i]; }

 private:
  std::uint32_t n_;
  std::vector<std::size_t> row_start_;  // n + 1: row a's slots are [row_start_[a], row_start_[a + 1])
  std::vector<std::uint32_t> src_, dst_;
};

// A per-pair matrix: dense (n x n, row-major) or, with a layout, only the layout's pairs, every
// other pair reading `fill`. Code that walks a run's pairs walks its slots (src, dst of slot i),
// which is every pair of a dense matrix and only the held ones of a sparse one.
template <class T>
struct square {
  std::uint32_t n = 0;
  std::vector<T> v;                           // one per slot
  std::shared_ptr<const pair_layout> layout;  // null: dense
  T fill{};
  square() = default;
  square(std::uint32_t n_, T fill_) : n(n_), v(std::size_t{n_} * n_, fill_), fill(fill_) {}
  square(std::shared_ptr<const pair_layout> l, T fill_)
      : n(l->n()), v(l->size(), fill_), layout(std::move(l)), fill(fill_) {}
  std::size_t slots() const { return v.size(); }
  std::uint32_t src(std::size_t i) const { return layout ? layout->src(i) : static_cast<std::uint32_t>(i / n); }
  std::uint32_t dst(std::size_t i) const { return layout ? layout->dst(i) : static_cast<std::uint32_t>(i % n); }
  // Writing a pair a sparse layout does not hold is a caller's error, not a silent drop.
  T& at(std::uint32_t row, std::uint32_t col) {
    if (!layout) return v[std::size_t{row} * n + col];
    const auto s = layout->slot(row, col);
    if (s == pair_layout::none) throw std::out_of_range("square::at: a pair the sparse layout does not hold");
    return v[s];
  }
  const T& at(std::uint32_t row, std::uint32_t col) const {
    if (!layout) return v[std::size_t{row} * n + col];
    const auto s = layout->slot(row, col);
    return s == pair_layout::none ? fill : v[s];
  }
};

// A round's counters (by peer rank) folded into the pattern's: the sending side of the pairs
// this rank sent to in the round, the receiving side of those it received from.
void merge_round(std::vector<pair_counters>& acc, std::span<const pair_counters> round, const plan::round_role& role,
                 int round_index);

struct run_matrices {
  square<double> tx_bw;    // bytes/s the source completed toward the destination; NaN on the diagonal
  square<double> rx_bw;    // bytes/s the destination received from the source; NaN where not measurable
  square<double> tx_rate;  // messages/s, same conventions
  square<double> rx_rate;
  // seconds each figure divides by: the measuring rank's interval (duration mode) or the pair's
  // own (iterations); 0 where that rank had no CPU for its whole window, so its figures are NaN
  square<double> tx_s, rx_s;
  square<std::uint64_t> tx_msgs, rx_msgs, tx_bytes, rx_bytes;
  square<std::uint64_t> tx_total, rx_total;  // whole round, warm-up and drain included
  square<std::uint64_t> verify_errors;       // counted at the destination
  square<std::uint8_t> flags;                // pair_flags of both ends, OR-ed
  square<std::int32_t> round;                // schedule round of the pair; -1 if none
};

// The matrices the judge reads, N x N, before anything is measured: rates and seconds NaN,
// counts 0, no flags, no pair in a round.
run_matrices unmeasured_run(std::uint32_t n);

// The judging code walks one matrix's slots and reads the others' at the same slot: they must
// share one layout (all dense of one n, or one sparse layout). Throws where they do not.
void require_shared_slots(const run_matrices& m);

// `rows` holds n records per rank in rank order: rows[r * n + p] is rank r's view of peer p.
// `rx_measurable`: whether the receiver saw each message (false for one-sided WRITE and READ).
run_matrices assemble(std::span<const pair_counters> rows, std::uint32_t n, std::uint64_t msg_size, bool rx_measurable);

// Each rank's shortest measured window over the pairs it measured (its tx_s row, its rx_s
// column): NaN for a rank that measured no pair. Duration rounds share one interval, so a
// window short of it means the rank had no CPU when the interval opened.
std::vector<double> rank_windows(const run_matrices& m);

struct summary {
  std::size_t pairs = 0;  // finite off-diagonal entries
  double min = 0, median = 0, max = 0;
  double aggregate = 0;  // sum over the pairs
};

// Over the finite off-diagonal entries; all zero when there are none. `aggregate` sums the
// pairs of each round (those that ran at the same time) and averages over the rounds, so a
// pattern of many small rounds is not credited with bandwidth it never carried at once.
summary summarize(const square<double>& m, const square<std::int32_t>& round);
summary summarize(const square<double>& m);  // every pair in one round

// Each rank's send bandwidth: its pairs summed per round, averaged over the rounds it sent in
// (NaN if it never sent). Each node's the same over its ranks' pairs.
std::vector<double> rank_throughput(const square<double>& bw, const square<std::int32_t>& round);
std::vector<double> node_throughput(const square<double>& bw, const square<std::int32_t>& round,
                                    std::span<const std::int32_t> node_of, std::uint32_t nodes);

// Each node's sends split by where they go: to ranks on other nodes (what its ports carry out,
// the figure to hold against the port's rate) and to ranks on the same node (loopback inside
// the device, which never reaches the port). Same per-round convention; NaN where none.
struct node_split {
  std::vector<double> port, loopback;
};
node_split node_throughput_split(const square<double>& bw, const square<std::int32_t>& round,
                                 std::span<const std::int32_t> node_of, std::uint32_t nodes);

// Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one takes all.
double jain(std::span<const double> x);

// Incast: each destination column's senders' shares of what it received, and Jain per column
// (NaN for a column with no measured sender).
square<double> shares(const square<double>& bw);
std::vector<double> column_fairness(const square<double>& bw);

// Elementwise a / b where both are finite and b > 0, else NaN (e.g. mesh over pairwise).
square<double> ratio(const square<double>& a, const square<double>& b);

// Latency summaries gathered like the counters: rows[r * n + p] is rank r pinging peer p.
struct latency_matrices {
  square<std::uint64_t> count;
  square<double> min, p50, p90, p99, p999, max, mean, stddev;  // microseconds; NaN without samples
};
latency_matrices assemble_latency(std::span<const latency_summary> rows, std::uint32_t n);

}  // namespace rdmamesh::stats
