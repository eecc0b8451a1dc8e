// The NICs' settings compared before any traffic, and the PCIe links read from sysfs trees the
// tests build (no such hardware here): a Gen5 NIC in a Gen4 slot, a trained-down x8, a switch.
#include <doctest/doctest.h>

#include "text.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "rdmamesh/fabric/pcie.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/fabric/select.hpp"
#include "rdmamesh/io/verdict.hpp"
#include "rdmamesh/stats/config.hpp"
#include "rdmamesh/stats/verdict.hpp"

using namespace rdmamesh;
namespace fs = std::filesystem;

namespace {

// a temporary sysfs-like tree, removed with the test
struct tree {
  fs::path root = fs::temp_directory_path() / fmt::format("rdmamesh-pcie-{}-{}", ::getpid(), counter());
  tree() { fs::create_directories(root); }
  ~tree() { fs::remove_all(root); }
  tree(const tree&) = delete;
  tree& operator=(const tree&) = delete;
  static int counter() {
    static int n = 0;
    return ++n;
  }
  // one PCI device folder with its link attributes, as the kernel writes them
  fs::path device(const fs::path& at, const std::string& speed, int width, const std::string& max_speed,
                  int max_width) const {
    fs::create_directories(at);
    std::ofstream(at / "current_link_speed") << speed << " PCIe\n";
    std::ofstream(at / "current_link_width") << width << "\n";
    std::ofstream(at / "max_link_speed") << max_speed << " PCIe\n";
    std::ofstream(at / "max_link_width") << max_width << "\n";
    return at;
  }
};

fabric::rank_info nic(const char* host, int node, int mtu, const char* pcie, const char* fw = "28.41.1000",
                      const char* down = "") {
  fabric::port_choice port;
  port.device = "mlx5_0";
  port.mtu = mtu == 4096 ? IBV_MTU_4096 : IBV_MTU_1024;
  port.fw_ver = fw;
  port.pcie = pcie;
  port.pcie_down = down;
  port.line_rate_bps = 200e9;
  const mpi::node_info at{0, 1, node, 8};
  return fabric::make_rank_info(host, &port, nullptr, at, false);
}

}  // namespace

TEST_CASE("PCIe speeds as sysfs prints them") {
  CHECK(fabric::parse_gts("16.0 GT/s PCIe") == doctest::Approx(16));
  CHECK(fabric::parse_gts("2.5 GT/s PCIe") == doctest::Approx(2.5));
  CHECK(fabric::parse_gts("8 GT/s") == doctest::Approx(8));
  CHECK(fabric::parse_gts("Unknown") == 0);
  CHECK(fabric::parse_gts("") == 0);
}

TEST_CASE("a PCIe link is judged against the lower of its two ends: a Gen5 NIC in a Gen4 slot is no fault") {
  tree t;
  const fs::path rp = t.device(t.root / "pci0000:00" / "0000:00:01.0", "16.0 GT/s", 16, "16.0 GT/s", 16);
  const fs::path nic_dir = t.device(rp / "0000:01:00.0", "16.0 GT/s", 16, "32.0 GT/s", 16);
  const auto path = fabric::read_pcie_path(nic_dir);
  REQUIRE(path.size() == 2);  // the NIC and its root port; the host bridge has no link
  CHECK(path[0].device == "0000:01:00.0");
  CHECK(path[1].device == "0000:00:01.0");
  CHECK(fabric::link_text(path[0]) == "16 GT/s x16");
  CHECK(fabric::trained_down(path).empty());
}

TEST_CASE("a link trained down to x8 where both ends can x16 is named with both figures") {
  tree t;
  const fs::path rp = t.device(t.root / "pci0000:00" / "0000:00:01.0", "16.0 GT/s", 8, "16.0 GT/s", 16);
  const fs::path nic_dir = t.device(rp / "0000:01:00.0", "16.0 GT/s", 8, "16.0 GT/s", 16);
  const auto path = fabric::read_pcie_path(nic_dir);
  CHECK(fabric::trained_down(path) == "0000:01:00.0: 16 GT/s x8, where both ends can 16 GT/s x16");
}

TEST_CASE("behind a PCIe switch: its internal hop is no link, its uplink is") {
  tree t;
  const fs::path rp = t.device(t.root / "pci0000:00" / "0000:00:01.0", "32.0 GT/s", 16, "32.0 GT/s", 16);
  const fs::path usp = t.device(rp / "0000:01:00.0", "32.0 GT/s", 16, "32.0 GT/s", 16);
  const fs::path dsp = t.device(usp / "0000:02:00.0", "16.0 GT/s", 16, "32.0 GT/s", 16);
  const fs::path nic_dir = t.device(dsp / "0000:03:00.0", "16.0 GT/s", 16, "16.0 GT/s", 16);
  // a Gen4 NIC under a Gen5 switch: the switch's downstream port runs Gen4, rightly
  CHECK(fabric::read_pcie_path(nic_dir).size() == 4);
  CHECK(fabric::trained_down(fabric::read_pcie_path(nic_dir)).empty());

  tree u;  // the same, with the switch's uplink to the root port trained down to x8
  const fs::path rp2 = u.device(u.root / "pci0000:00" / "0000:00:01.0", "32.0 GT/s", 8, "32.0 GT/s", 16);
  const fs::path usp2 = u.device(rp2 / "0000:01:00.0", "32.0 GT/s", 8, "32.0 GT/s", 16);
  const fs::path dsp2 = u.device(usp2 / "0000:02:00.0", "16.0 GT/s", 16, "32.0 GT/s", 16);
  const fs::path nic2 = u.device(dsp2 / "0000:03:00.0", "16.0 GT/s", 16, "16.0 GT/s", 16);
  CHECK(fabric::trained_down(fabric::read_pcie_path(nic2)) ==
        "0000:01:00.0: 32 GT/s x8, where both ends can 32 GT/s x16");
}

TEST_CASE("a device without PCIe (SoftRoCE) has no path and no finding") {
  tree t;
  fs::create_directories(t.root / "virtual" / "rxe0");
  CHECK(fabric::read_pcie_path(t.root / "virtual" / "rxe0").empty());
  CHECK(fabric::read_pcie_path(t.root / "nowhere").empty());
}

TEST_CASE("the odd NIC's setting is named with the majority's, a trained-down link always, no majority nothing") {
  std::vector<fabric::rank_info> ranks;
  for (int n = 0; n < 8; ++n) {
    const std::string host = fmt::format("node{}", n + 1);
    ranks.push_back(nic(host.c_str(), n, n == 2 ? 1024 : 4096, n == 6 ? "16 GT/s x8" : "16 GT/s x16",
                        n < 4 ? "28.41.1000" : "28.39.1002",
                        n == 5 ? "0000:3b:00.0: 16 GT/s x8, where both ends can 16 GT/s x16" : ""));
  }
  ranks.push_back(ranks[0]);  // a second rank on node1's NIC: one NIC, counted once
  const auto found = stats::compare_nics(ranks);
  std::vector<std::string> what;
  for (const auto& f : found) what.push_back(f.host + ": " + f.what);
  REQUIRE(found.size() == 3);  // firmware is 4 against 4: no majority, nothing odd
  CHECK(what[0] == "node3: MTU 1024, where 7 of 8 NICs have 4096");
  CHECK(what[1] == "node6: PCIe link 0000:3b:00.0: 16 GT/s x8, where both ends can 16 GT/s x16");
  CHECK(what[2] == "node7: PCIe 16 GT/s x8, where 7 of 8 NICs have 16 GT/s x16");
  CHECK(found[0].rank == 2);
  CHECK(found[0].node == 2);
  CHECK(found[0].device == "mlx5_0");
}

TEST_CASE("a config finding is a counted cause: the job degraded, its node drained with a config reason") {
  std::vector<fabric::rank_info> ranks;
  for (int n = 0; n < 3; ++n) {
    const std::string host = fmt::format("node{}", n + 1);
    ranks.push_back(nic(host.c_str(), n, n == 2 ? 1024 : 4096, ""));
  }
  stats::job_verdict v = stats::fold(std::span<const stats::judged_run>{});  // --preflight: no run
  CHECK(v.status == stats::health::healthy);
  stats::add_config(v, stats::compare_nics(ranks));
  CHECK(v.status == stats::health::degraded);
  const io::verdict_context ctx;
  const auto lines = io::verdict_lines(v, ranks, ctx);
  CHECK(has(lines.at(0), "# verdict: degraded (1 cause(s) in the NICs' settings; no bandwidth run)"));
  CHECK(lines.at(1) == "#   config: NIC mlx5_0 of node3: MTU 1024, where 2 of 3 NICs have 4096");
  const auto d = io::drains(v, ranks, 0);
  REQUIRE(d.size() == 1);
  CHECK(d[0].node == "node3");
  CHECK(d[0].reason == "rdmamesh: config: NIC mlx5_0 of node3: MTU 1024, where 2 of 3 NICs have 4096");
  const std::string json = io::verdict_json(v, ranks, ctx);
  CHECK(has(json, "\"kind\": \"config\""));
  CHECK(has(json, "\"status\": \"degraded\""));
  stats::job_verdict clean = stats::fold(std::span<const stats::judged_run>{});
  stats::add_config(clean, {});
  CHECK(clean.status == stats::health::healthy);
}
