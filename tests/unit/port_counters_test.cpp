// A port's counters read from a sysfs tree built here (mlx5's names and rxe's), their deltas over
// a run, and the line that names what moved: the hardware path tested without the hardware.
#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "rdmamesh/fabric/port_counters.hpp"
#include "rdmamesh/io/report.hpp"

using namespace rdmamesh;
namespace fs = std::filesystem;

namespace {

struct sysfs_tree {
  fs::path dir;
  sysfs_tree() : dir(fs::temp_directory_path() / ("rdmamesh-ports-" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
  }
  ~sysfs_tree() { fs::remove_all(dir); }
  void put(const std::string& rel, const std::string& text) {
    const fs::path p = dir / "mlx5_0" / "ports" / "1" / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
};

}  // namespace

TEST_CASE("a port's counters: both directories, settings and unreadable values left out, deltas per name") {
  sysfs_tree t;
  t.put("counters/symbol_error", "3\n");
  t.put("counters/port_xmit_data", "1000\n");
  t.put("counters/port_rcv_errors", "N/A\n");  // a driver that cannot say: skipped, not fatal
  t.put("hw_counters/out_of_sequence", "7\n");
  t.put("hw_counters/np_cnp_sent", "0\n");
  t.put("hw_counters/lifespan", "10\n");  // how long the driver caches them: a setting
  const auto before = fabric::read_port_counters(t.dir / "mlx5_0", 1);
  CHECK(before ==
        fabric::counter_set{{"np_cnp_sent", 0}, {"out_of_sequence", 7}, {"port_xmit_data", 1000}, {"symbol_error", 3}});
  CHECK(fabric::read_port_counters(t.dir / "mlx5_0", 2).empty());  // no such port
  CHECK(fabric::read_port_counters(t.dir / "nothing", 1).empty());

  t.put("counters/symbol_error", "5\n");
  t.put("counters/port_xmit_data", "900\n");  // reset during the run: 0, not a wrap to 2^64
  t.put("hw_counters/out_of_sequence", "1319\n");
  t.put("hw_counters/np_cnp_sent", "40\n");
  t.put("hw_counters/rp_cnp_handled", "2\n");  // appeared after the first read: no delta
  const auto d = fabric::counter_delta(before, fabric::read_port_counters(t.dir / "mlx5_0", 1));
  CHECK(d == fabric::counter_set{
                 {"np_cnp_sent", 40}, {"out_of_sequence", 1312}, {"port_xmit_data", 0}, {"symbol_error", 2}});
  CHECK(fabric::moved_line(d) == "out_of_sequence +1312, np_cnp_sent +40, symbol_error +2");
}

TEST_CASE("how long the kernel caches a port's hw_counters: its lifespan in ms, none without the file") {
  sysfs_tree t;
  t.put("hw_counters/sent_pkts", "1\n");
  CHECK(fabric::counters_lifespan(t.dir / "mlx5_0", 1) == std::chrono::milliseconds(0));
  t.put("hw_counters/lifespan", "10\n");
  CHECK(fabric::counters_lifespan(t.dir / "mlx5_0", 1) == std::chrono::milliseconds(10));
  CHECK(fabric::counters_lifespan(t.dir / "mlx5_0", 2) == std::chrono::milliseconds(0));
}

TEST_CASE("counters sort into what they say about a port; traffic and unknown names say nothing") {
  CHECK(fabric::kind_of("symbol_error") == fabric::counter_kind::link);
  CHECK(fabric::kind_of("link_downed") == fabric::counter_kind::link);
  CHECK(fabric::kind_of("completer_retry_err") == fabric::counter_kind::transport);    // rxe
  CHECK(fabric::kind_of("local_ack_timeout_err") == fabric::counter_kind::transport);  // mlx5
  CHECK(fabric::kind_of("rp_cnp_handled") == fabric::counter_kind::congestion);
  CHECK(fabric::kind_of("rcvd_pkts") == fabric::counter_kind::other);
  CHECK(fabric::kind_of("a_counter_from_next_year") == fabric::counter_kind::other);
  CHECK(fabric::moved_line({{"rcvd_pkts", 5000}, {"sent_pkts", 4000}}).empty());
}

TEST_CASE("a port's reading travels to rank 0 as text and comes back whole; its line names the port") {
  const fabric::port_reading p{2, "rxe_node2", 1, {{"completer_retry_err", 14}, {"rcvd_pkts", 9}, {"rcvd_seq_err", 3}}};
  const auto back = fabric::port_reading::from_text(2, p.to_text());
  REQUIRE(back);
  CHECK(back->device == "rxe_node2");
  CHECK(back->port == 1);
  CHECK(back->delta == p.delta);
  CHECK_FALSE(fabric::port_reading::from_text(1, ""));  // a rank that reads no port

  io::run_record r;
  r.ports = {p, fabric::port_reading{0, "rxe_node1", 1, {{"rcvd_pkts", 9}}}};
  std::vector<fabric::rank_info> ranks(4);
  for (std::size_t k = 0; k < ranks.size(); ++k) fmt::format_to(ranks[k].host.data(), "node{}", k / 2 + 1);
  CHECK(io::port_lines(r, ranks) ==
        std::vector<std::string>{
            "# port: rxe_node2 port 1 of node2: completer_retry_err +14, rcvd_seq_err +3 during the run"});
}
