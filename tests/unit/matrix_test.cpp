// Matrix bookkeeping: tx from the source's record, rx from the destination's, NaN where
// nothing can be measured, flags of both ends combined.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "rdmamesh/stats/matrix.hpp"

using namespace rdmamesh;
using stats::pair_counters;

namespace {

// rank r's view of peer p: sent 10*r+p messages, received 100*r+p, over 2 s
std::vector<pair_counters> synthetic(std::uint32_t n) {
  std::vector<pair_counters> rows(std::size_t{n} * n);
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t p = 0; p < n; ++p) {
      if (r == p) continue;
      auto& c = rows[std::size_t{r} * n + p];
      c.tx_msgs = 10 * r + p;
      c.rx_msgs = 100 * r + p;
      c.tx_total = c.tx_msgs + 1;
      c.rx_total = c.rx_msgs + 1;
      c.tx_seconds = 2.0;
      c.rx_seconds = 2.0;
    }
  }
  return rows;
}

}  // namespace

TEST_CASE("row = source, column = destination; rx comes from the receiver's record") {
  const std::uint32_t n = 4;
  const auto rows = synthetic(n);
  const auto m = stats::assemble(rows, n, 1000, true);
  for (std::uint32_t s = 0; s < n; ++s) {
    for (std::uint32_t d = 0; d < n; ++d) {
      if (s == d) {
        CHECK(std::isnan(m.tx_bw.at(s, d)));
        CHECK(std::isnan(m.rx_bw.at(s, d)));
        CHECK(m.tx_msgs.at(s, d) == 0);
        continue;
      }
      CHECK(m.tx_msgs.at(s, d) == 10 * s + d);
      CHECK(m.tx_bytes.at(s, d) == (10 * s + d) * 1000);
      CHECK(m.tx_bw.at(s, d) == doctest::Approx((10.0 * s + d) * 1000 / 2.0));
      CHECK(m.rx_msgs.at(s, d) == 100 * d + s);  // destination d's count of what came from s
      CHECK(m.rx_bw.at(s, d) == doctest::Approx((100.0 * d + s) * 1000 / 2.0));
      CHECK(m.tx_total.at(s, d) == 10 * s + d + 1);
      CHECK(m.rx_total.at(s, d) == 100 * d + s + 1);
    }
  }
}

TEST_CASE("receive side is NaN when the operation gives the receiver nothing to count") {
  const auto m = stats::assemble(synthetic(3), 3, 64, false);
  for (double v : m.rx_bw.v) CHECK(std::isnan(v));
  CHECK(std::isfinite(m.tx_bw.at(0, 1)));
}

TEST_CASE("a pair with no measured interval is NaN, not infinity") {
  auto rows = synthetic(2);
  rows[1].tx_seconds = 0;  // rank 0 -> 1
  const auto m = stats::assemble(rows, 2, 64, true);
  CHECK(std::isnan(m.tx_bw.at(0, 1)));
}

TEST_CASE("flags: the sender's tx failure and the receiver's rx problems land on the same pair") {
  auto rows = synthetic(3);
  rows[0 * 3 + 2].flags = stats::tx_failed;      // rank 0 saw its sends to 2 fail
  rows[2 * 3 + 0].flags = stats::rx_incomplete;  // rank 2 missed messages from 0
  rows[1 * 3 + 2].flags = stats::rx_failed;      // rank 1's receives from 2 failed: pair 2->1
  const auto m = stats::assemble(rows, 3, 64, true);
  CHECK(m.flags.at(0, 2) == (stats::tx_failed | stats::rx_incomplete));
  CHECK(m.flags.at(2, 1) == stats::rx_failed);
  CHECK(m.flags.at(1, 2) == 0);
  CHECK(m.flags.at(2, 0) == 0);
}

TEST_CASE("rates and rounds come from the sender's record") {
  auto rows = synthetic(3);
  rows[0 * 3 + 2].round = 4;
  const auto m = stats::assemble(rows, 3, 10, true);
  CHECK(m.tx_rate.at(0, 2) == doctest::Approx(2.0 / 2.0));    // 2 messages over 2 s
  CHECK(m.rx_rate.at(0, 2) == doctest::Approx(200.0 / 2.0));  // rank 2 received 200 from 0
  CHECK(m.round.at(0, 2) == 4);
  CHECK(m.round.at(2, 0) == -1);
}

TEST_CASE("merge_round takes the sending side of send_to peers and the receiving side of recv_from peers") {
  std::vector<pair_counters> acc(4);
  std::vector<pair_counters> round(4);
  for (std::uint32_t p = 0; p < 4; ++p) {
    round[p].tx_msgs = 10 + p;
    round[p].rx_msgs = 20 + p;
    round[p].tx_seconds = round[p].rx_seconds = 1;
    round[p].verify_errors = p;
  }
  round[3].flags = stats::tx_failed | stats::rx_failed;
  plan::round_role role;
  role.send_to = {1, 3};
  role.recv_from = {2};
  stats::merge_round(acc, round, role, 7);
  CHECK(acc[1].tx_msgs == 11);
  CHECK(acc[1].round == 7);
  CHECK(acc[1].rx_msgs == 0);  // not received from in this round
  CHECK(acc[2].rx_msgs == 22);
  CHECK(acc[2].tx_msgs == 0);
  CHECK(acc[2].verify_errors == 2);
  CHECK(acc[3].flags == stats::tx_failed);  // its receive side did not run this round
  CHECK(acc[0].tx_msgs == 0);
}

TEST_CASE("aggregate sums the pairs of a round and averages over rounds") {
  stats::square<double> bw(3, std::nan(""));
  stats::square<std::int32_t> round(3, -1);
  // round 0: 0->1 and 1->2 at once; round 1: 2->0 alone
  bw.at(0, 1) = 10;
  round.at(0, 1) = 0;
  bw.at(1, 2) = 20;
  round.at(1, 2) = 0;
  bw.at(2, 0) = 40;
  round.at(2, 0) = 1;
  const auto s = stats::summarize(bw, round);
  CHECK(s.pairs == 3);
  CHECK(s.aggregate == doctest::Approx((30.0 + 40.0) / 2));
  CHECK(stats::summarize(bw).aggregate == doctest::Approx(70.0));  // one round: the plain sum
}

TEST_CASE("a node's sends split into what leaves through its port and what loops back inside it") {
  // ranks 0,1 on node 0, rank 2 on node 1; one round
  stats::square<double> bw(3, std::nan(""));
  stats::square<std::int32_t> round(3, 0);
  bw.at(0, 1) = 5;   // inside node 0
  bw.at(0, 2) = 10;  // node 0 -> node 1
  bw.at(1, 2) = 20;  // node 0 -> node 1
  bw.at(2, 0) = 40;  // node 1 -> node 0
  const std::vector<std::int32_t> node_of{0, 0, 1};
  const auto split = stats::node_throughput_split(bw, round, node_of, 2);
  CHECK(split.port[0] == doctest::Approx(30.0));
  CHECK(split.loopback[0] == doctest::Approx(5.0));
  CHECK(split.port[1] == doctest::Approx(40.0));
  CHECK(std::isnan(split.loopback[1]));  // one rank: no pair inside node 1
  // the two parts add up to the node's total
  CHECK(stats::node_throughput(bw, round, node_of, 2)[0] == doctest::Approx(35.0));
}

TEST_CASE("Jain's index: 1 for equal shares, 1/n when one sender takes everything") {
  const std::vector<double> equal{5, 5, 5, 5};
  const std::vector<double> hog{8, 0, 0, 0};
  const std::vector<double> mixed{1, 2, 3};
  CHECK(stats::jain(equal) == doctest::Approx(1.0));
  CHECK(stats::jain(hog) == doctest::Approx(0.25));
  CHECK(stats::jain(mixed) == doctest::Approx(36.0 / (3 * 14)));
}

TEST_CASE("incast shares per target column sum to one; fairness per column") {
  stats::square<double> bw(3, std::nan(""));
  bw.at(0, 2) = 30;
  bw.at(1, 2) = 10;
  const auto sh = stats::shares(bw);
  CHECK(sh.at(0, 2) == doctest::Approx(0.75));
  CHECK(sh.at(1, 2) == doctest::Approx(0.25));
  const auto fair = stats::column_fairness(bw);
  CHECK(fair[2] == doctest::Approx(1600.0 / (2 * 1000)));
  CHECK(std::isnan(fair[0]));
}

TEST_CASE("contention ratio is NaN wherever either figure is missing") {
  stats::square<double> mesh(2, std::nan("")), pairs(2, std::nan(""));
  mesh.at(0, 1) = 5;
  pairs.at(0, 1) = 10;
  mesh.at(1, 0) = 5;
  const auto r = stats::ratio(mesh, pairs);
  CHECK(r.at(0, 1) == doctest::Approx(0.5));
  CHECK(std::isnan(r.at(1, 0)));
}

TEST_CASE("latency matrices: microseconds from nanosecond summaries, NaN without samples") {
  std::vector<stats::latency_summary> rows(4);
  rows[0 * 2 + 1] = {.count = 10,
                     .min = 1000,
                     .p50 = 2000,
                     .p90 = 3000,
                     .p99 = 4000,
                     .p999 = 5000,
                     .max = 6000,
                     .mean = 2500,
                     .stddev = 100};
  const auto m = stats::assemble_latency(rows, 2);
  CHECK(m.count.at(0, 1) == 10);
  CHECK(m.p50.at(0, 1) == doctest::Approx(2.0));
  CHECK(m.stddev.at(0, 1) == doctest::Approx(0.1));
  CHECK(std::isnan(m.p50.at(1, 0)));
  CHECK(std::isnan(m.p50.at(0, 0)));
}

TEST_CASE("summary: min, median, max and aggregate over finite off-diagonal entries") {
  stats::square<double> m(3, std::nan(""));
  const double vals[] = {1, 2, 3, 4, 5};
  m.at(0, 1) = vals[0];
  m.at(0, 2) = vals[4];
  m.at(1, 0) = vals[2];
  m.at(1, 2) = vals[1];
  m.at(2, 0) = vals[3];  // (2,1) stays NaN
  const auto s = stats::summarize(m);
  CHECK(s.pairs == 5);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(s.median == 3);
  CHECK(s.aggregate == 15);
  m.at(2, 1) = 6;
  CHECK(stats::summarize(m).median == doctest::Approx(3.5));
  CHECK(stats::summarize(stats::square<double>(2, std::nan(""))).pairs == 0);
}

TEST_CASE("tx_s and rx_s: the seconds each figure divides by; a rank's window is its shortest") {
  const std::uint32_t n = 3;
  auto rows = synthetic(n);
  for (auto& c : rows) c.round = 0;
  rows[std::size_t{1} * n + 0].rx_seconds = 0.5;  // rank 1 received from 0 over 0.5 s
  rows[std::size_t{2} * n + 0].tx_seconds = 0;    // rank 2 had no CPU for its window
  rows[std::size_t{2} * n + 1].tx_seconds = 0;
  rows[std::size_t{2} * n + 0].rx_seconds = 0;
  rows[std::size_t{2} * n + 1].rx_seconds = 0;
  rows[std::size_t{0} * n + 1].round = -1;  // 0 -> 1 did not run
  const auto m = stats::assemble(rows, n, 1000, true);
  CHECK(m.tx_s.at(1, 2) == 2.0);
  CHECK(std::isnan(m.tx_s.at(0, 1)));
  CHECK(std::isnan(m.rx_s.at(0, 1)));
  CHECK(std::isnan(m.tx_s.at(0, 0)));
  CHECK(m.tx_s.at(2, 0) == 0);
  CHECK(std::isnan(m.tx_bw.at(2, 0)));  // 0 s measured: no figure
  CHECK(m.rx_s.at(0, 2) == 0);          // what rank 2 received, over its 0 s
  const auto w = stats::rank_windows(m);
  CHECK(w[0] == 2.0);
  CHECK(w[1] == 2.0);  // its 0.5 s receive window belongs to 0 -> 1, which did not run
  CHECK(w[2] == 0);
  rows[std::size_t{0} * n + 1].round = 0;
  CHECK(stats::rank_windows(stats::assemble(rows, n, 1000, true))[1] == 0.5);
}

TEST_CASE("a sparse matrix holds its layout's pairs only: others read its fill, writing one is refused") {
  const auto layout = std::make_shared<const stats::pair_layout>(
      4, std::vector<std::pair<std::uint32_t, std::uint32_t>>{{2, 0}, {0, 3}, {0, 1}, {2, 0}});
  CHECK(layout->size() == 3);  // the repeat kept once
  stats::square<double> m(layout, std::nan(""));
  m.at(0, 3) = 5;
  m.at(2, 0) = 7;
  CHECK(m.at(0, 3) == 5);
  CHECK(std::as_const(m).at(2, 0) == 7);
  CHECK(std::isnan(std::as_const(m).at(0, 1)));  // held, not written
  CHECK(std::isnan(std::as_const(m).at(3, 2)));  // not held: the fill
  CHECK_THROWS_AS(m.at(3, 2) = 1, std::out_of_range);
  // its slots walk the held pairs in (source, destination) order, as a dense matrix's walk them
  std::vector<std::pair<std::uint32_t, std::uint32_t>> walked;
  for (std::size_t i = 0; i < m.slots(); ++i) walked.emplace_back(m.src(i), m.dst(i));
  CHECK(walked == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{0, 1}, {0, 3}, {2, 0}});
  CHECK_THROWS_AS(stats::pair_layout(2, {{0, 2}}), std::invalid_argument);
}
