// The console report: header facts, an aligned matrix, and summaries a user reads first.
#include <doctest/doctest.h>

#include <cmath>

#include "rdmamesh/io/report.hpp"

using namespace rdmamesh;

namespace {

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("header names ranks, hosts, device and the run's options") {
  fabric::port_choice port;
  port.device = "rxe0";
  port.port = 1;
  port.ethernet = true;
  port.mtu = IBV_MTU_1024;
  port.gid_index = 1;
  std::vector<fabric::rank_info> ranks{fabric::make_rank_info("a", &port), fabric::make_rank_info("a", &port),
                                       fabric::make_rank_info("b", &port)};
  options o;
  o.duration_s = 2;
  const std::string h = io::format_header(o, ranks);
  CHECK(has(h, "# ranks 3  hosts 2: a (2 ranks), b (1 ranks)"));
  CHECK(has(h, "# device rxe0 port 1 (RoCE) gid_index 1"));
  CHECK(has(h, "mtu 1024"));
  CHECK(has(h, "op write_imm"));
  CHECK(has(h, "size 64K"));
  CHECK(has(h, "tx_depth 128"));
  CHECK(has(h, "duration 2 s"));
  for (char c : h) CHECK(c != '\t');
  // every line is a `#` line
  std::size_t pos = 0;
  while (pos < h.size()) {
    CHECK(h[pos] == '#');
    pos = h.find('\n', pos) + 1;
  }
}

TEST_CASE("matrix prints Gb/s with '-' on the diagonal") {
  stats::square<double> m(2, std::nan(""));
  m.at(0, 1) = 125e6;  // 1 Gb/s
  m.at(1, 0) = 250e6;
  const std::string s = io::format_matrix(m, "send bandwidth");
  CHECK(has(s, "# send bandwidth [Gb/s], row = source rank, column = destination rank"));
  CHECK(has(s, "1.000"));
  CHECK(has(s, "2.000"));
  CHECK(has(s, "       0         -     1.000\n"));
  CHECK(has(s, "       1     2.000         -\n"));
}

TEST_CASE("big meshes are summarized, not printed") {
  stats::square<double> m(io::max_printed_matrix + 1, 1.0);
  CHECK(has(io::format_matrix(m, "send bandwidth"), "not printed"));
}

TEST_CASE("results name pair counts, failed pairs and verify outcome") {
  std::vector<stats::pair_counters> rows(9);
  for (std::uint32_t r = 0; r < 3; ++r) {
    for (std::uint32_t p = 0; p < 3; ++p) {
      if (r != p)
        rows[r * 3 + p] = {
            .tx_msgs = 10, .rx_msgs = 10, .tx_total = 12, .rx_total = 12, .tx_seconds = 1, .rx_seconds = 1};
    }
  }
  rows[2 * 3 + 1].flags = stats::rx_failed;  // rank 2's receives from 1 failed
  rows[0 * 3 + 1].verify_errors = 3;         // rank 0 got 3 bad messages from 1
  options o;
  o.verify = true;
  const auto m = stats::assemble(rows, 3, 100, true);
  const std::string s = io::format_results(o, m, {"rank 1 -> rank 2: boom"});
  CHECK(has(s, "over 6 pairs"));
  CHECK(has(s, "60 sent, 60 received"));
  CHECK(has(s, "# failed pairs: 1->2"));
  CHECK(has(s, "# verify: FAILED, 3 mismatching messages"));
  CHECK(has(s, "# event: rank 1 -> rank 2: boom"));
  o.op = op_kind::write;
  CHECK(has(io::format_results(o, stats::assemble(rows, 3, 100, false), {}), "not measurable with --op write"));
}
