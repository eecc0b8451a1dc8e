// Where setup time goes: per-phase medians and maxima, the slowest rank, resource peaks.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "rdmamesh/io/report.hpp"
#include "rdmamesh/stats/setup.hpp"

using namespace rdmamesh;

TEST_CASE("setup summary: median and max per phase, the slowest rank by work, not by waiting") {
  std::vector<stats::setup_times> t(3);
  t[0] = {0.1, 0.01, 0.2, 0.05, 0.3, 0.02, 0.01, 0.9};  // waits longest at the barrier
  t[1] = {0.1, 0.01, 0.8, 0.05, 0.3, 0.02, 0.01, 0.0};  // registration is slow here
  t[2] = {0.2, 0.01, 0.2, 0.05, 0.3, 0.02, 0.01, 0.5};
  const auto s = stats::summarize_setup(t);
  CHECK(s.phases[0].median == doctest::Approx(0.1));
  CHECK(s.phases[0].max == doctest::Approx(0.2));
  CHECK(s.phases[0].slowest == 2);
  CHECK(s.phases[2].median == doctest::Approx(0.2));
  CHECK(s.phases[2].max == doctest::Approx(0.8));
  CHECK(s.phases[2].slowest == 1);
  CHECK(s.phases[7].slowest == 0);
  CHECK(s.total.slowest == 1);  // rank 0's barrier wait is rank 1's fault
  CHECK(s.total.max == doctest::Approx(1.29));
}

TEST_CASE("setup summary: an even count takes the mean of the middle two") {
  std::vector<stats::setup_times> t(4);
  for (std::size_t r = 0; r < 4; ++r) t[r][4] = static_cast<double>(r + 1);
  CHECK(stats::summarize_setup(t).phases[4].median == doctest::Approx(2.5));
}

TEST_CASE("resource peaks: the largest rank, and the node whose ranks share a NIC summed") {
  const std::vector<stats::setup_resources> held{{3, 300, 1000}, {3, 300, 1000}, {5, 100, 4000}};
  const std::vector<std::int32_t> node_of{0, 0, 1};
  const auto p = stats::peak_resources(held, node_of);
  CHECK(p.rank.qps == 5);
  CHECK(p.rank.cq_entries == 300);
  CHECK(p.rank.registered_bytes == 4000);
  CHECK(p.node.qps == 6);
  CHECK(p.node.cq_entries == 600);
  CHECK(p.node.registered_bytes == 4000);
}

TEST_CASE("the setup header line names every phase, the slowest rank and its host") {
  std::vector<stats::setup_times> t(2);
  t[0] = {0.1, 0, 0, 0, 0, 0, 0, 0.4};
  t[1] = {0.5, 0, 0, 0, 0, 0, 0, 0};
  fabric::port_choice port;
  port.device = "rxe0";
  const mpi::node_info a{0, 1, 0, 2}, b{0, 1, 1, 2};
  std::vector<fabric::rank_info> ranks{fabric::make_rank_info("n1", &port, nullptr, a, false),
                                       fabric::make_rank_info("n2", &port, nullptr, b, false)};
  const std::vector<stats::setup_resources> held{{1, 129, 1 << 20}, {1, 129, 1 << 20}};
  const std::string h =
      io::format_setup(stats::summarize_setup(t), stats::peak_resources(held, std::vector<std::int32_t>{0, 1}), ranks);
  for (const char* phase : stats::setup_phase_names) CHECK(h.find(std::string(phase) + " ") != std::string::npos);
  CHECK(h.find("placement 0.3/0.5") != std::string::npos);
  CHECK(h.find("slowest rank 1 (n2), 0.5 s of work") != std::string::npos);
  CHECK(h.find("# resources: per rank up to 1 QPs, 129 CQ entries, 1M bytes registered") != std::string::npos);
  CHECK(std::count(h.begin(), h.end(), '\n') == 2);
  CHECK(h.find("; a receive region per peer\n") != std::string::npos);
  const std::string shared = io::format_setup(
      stats::summarize_setup(t), stats::peak_resources(held, std::vector<std::int32_t>{0, 1}), ranks, true);
  CHECK(shared.find("one receive region shared by every peer") != std::string::npos);
}
