// Placement on synthetic machines (hwloc): the right cores, near the right NIC, no sharing while
// cores remain, a launcher's binding kept, the closest NIC per rank on multi-NIC nodes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "rdmamesh/fabric/placement.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/fabric/topology.hpp"
#include "rdmamesh/util/error.hpp"

using namespace rdmamesh;
using fabric::bound_by;
using fabric::topo_desc;

namespace {

// The machine: 2 packages x 2 NUMA nodes x 8 cores x 2 PUs = 32 cores, 64 PUs.
constexpr const char* two_sockets = "package:2 numa:2 core:8 pu:2";

std::vector<int> pus_of_package(const topo_desc& t, int package) {
  std::vector<int> out;
  for (const auto& c : t.cores) {
    if (c.package == package) out.insert(out.end(), c.pus.begin(), c.pus.end());
  }
  return out;
}

const fabric::core_desc& core(const topo_desc& t, int index) {
  return *std::find_if(t.cores.begin(), t.cores.end(), [&](const auto& c) { return c.core == index; });
}

// The machine with NICs attached near the given packages, nothing bound yet.
topo_desc machine(std::vector<std::pair<std::string, int>> nics) {
  auto topo = fabric::topology::synthetic(two_sockets);
  topo_desc t = topo->describe({});
  for (const auto& [name, package] : nics) t.nics.push_back({name, pus_of_package(t, package), -1});
  t.bound_pus = t.allowed_pus;
  return t;
}

}  // namespace

TEST_CASE("hwloc's display and OpenCL plugins are left unloaded, unless the user chose hwloc's plugins") {
  const char* before = std::getenv("HWLOC_PLUGINS_BLACKLIST");
  const std::string kept = before != nullptr ? before : "";
  ::unsetenv("HWLOC_PLUGINS_BLACKLIST");
  rdmamesh::fabric::skip_unused_hwloc_plugins();
  const char* set = std::getenv("HWLOC_PLUGINS_BLACKLIST");
  REQUIRE(set != nullptr);
  const std::string skipped = set;
  CHECK(skipped.find("hwloc_gl") != std::string::npos);
  CHECK(skipped.find("hwloc_opencl") != std::string::npos);
  CHECK(skipped.find("hwloc_pci") == std::string::npos);  // the NICs' locality comes from it
  ::setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_pci", 1);    // the user's choice wins
  rdmamesh::fabric::skip_unused_hwloc_plugins();
  CHECK(std::string(std::getenv("HWLOC_PLUGINS_BLACKLIST")) == "hwloc_pci");
  if (before != nullptr)
    ::setenv("HWLOC_PLUGINS_BLACKLIST", kept.c_str(), 1);
  else
    ::unsetenv("HWLOC_PLUGINS_BLACKLIST");
}

TEST_CASE("the synthetic machine is described as 32 cores of 2 PUs over 4 NUMA nodes and 2 packages") {
  const topo_desc t = machine({});
  REQUIRE(t.cores.size() == 32);
  REQUIRE(t.allowed_pus.size() == 64);
  std::set<int> numas, packages;
  for (const auto& c : t.cores) {
    CHECK(c.pus.size() == 2);
    numas.insert(c.numa);
    packages.insert(c.package);
  }
  CHECK(numas == std::set<int>{0, 1, 2, 3});
  CHECK(packages == std::set<int>{0, 1});
}

TEST_CASE("--bind nic with a NIC near package 1: its cores first, then the others, never shared while cores remain") {
  const topo_desc t = machine({{"mlx5_0", 1}});
  std::set<int> used;
  for (int r = 0; r < 32; ++r) {
    const auto p = fabric::place(t, r, 32, bind_kind::nic);
    CAPTURE(r);
    REQUIRE(p.source == bound_by::rdmamesh);
    CHECK(used.insert(p.core).second);                   // a core of its own
    CHECK(core(t, p.core).package == (r < 16 ? 1 : 0));  // near the NIC while near cores last
    CHECK(p.pu == core(t, p.core).pus.front());          // one hardware thread
    CHECK(p.cpus == std::vector<int>{p.pu});
    CHECK(p.numa == core(t, p.core).numa);  // memory follows the core
    CHECK(p.device == "mlx5_0");
    CHECK_FALSE(p.more_ranks_than_cores);
  }
}

TEST_CASE("more ranks than cores: cores are reused in the same order and the rank is told") {
  const topo_desc t = machine({{"mlx5_0", 0}});
  const auto first = fabric::place(t, 0, 40, bind_kind::nic);
  const auto wrapped = fabric::place(t, 32, 40, bind_kind::nic);
  CHECK(wrapped.core == first.core);
  CHECK(wrapped.more_ranks_than_cores);
}

TEST_CASE("--bind core: cores in topology order, regardless of the NIC") {
  const topo_desc t = machine({{"mlx5_0", 1}});
  for (int r = 0; r < 4; ++r) CHECK(fabric::place(t, r, 4, bind_kind::core).core == r);
}

TEST_CASE("--bind none: nothing bound, every allowed CPU kept") {
  const topo_desc t = machine({{"mlx5_0", 1}});
  const auto p = fabric::place(t, 3, 4, bind_kind::none);
  CHECK(p.source == bound_by::none);
  CHECK(p.core == -1);
  CHECK(p.cpus.size() == 64);
}

TEST_CASE("a launcher's binding is kept and reported, whatever --bind says") {
  topo_desc t = machine({{"mlx5_0", 1}});
  t.bound_pus = core(t, 5).pus;  // e.g. srun --cpu-bind=cores put the rank on core 5
  for (bind_kind b : {bind_kind::nic, bind_kind::core, bind_kind::none}) {
    const auto p = fabric::place(t, 0, 4, b);
    CHECK(p.source == bound_by::launcher);
    CHECK(p.core == 5);
    CHECK(p.cpus == core(t, 5).pus);
    CHECK(p.numa == core(t, 5).numa);
  }
  t.bound_pus = pus_of_package(t, 0);  // mpirun --bind-to socket: several cores, one package
  const auto socket = fabric::place(t, 0, 4, bind_kind::nic);
  CHECK(socket.source == bound_by::launcher);
  CHECK(socket.core == -1);
  CHECK(socket.cpus.size() == 32);
}

TEST_CASE("an allocation (cgroup) narrower than the machine is not a launcher binding") {
  topo_desc t = machine({{"mlx5_0", 1}});
  t.allowed_pus = pus_of_package(t, 1);
  t.bound_pus = t.allowed_pus;
  const auto p = fabric::place(t, 0, 2, bind_kind::core);
  CHECK(p.source == bound_by::rdmamesh);
  CHECK(core(t, p.core).package == 1);  // only cores the process may use
}

TEST_CASE("two NICs near different packages: ranks alternate NICs and each takes cores near its own") {
  const topo_desc t = machine({{"mlx5_0", 0}, {"mlx5_1", 1}});
  std::set<int> used;
  for (int r = 0; r < 32; ++r) {
    const auto p = fabric::place(t, r, 32, bind_kind::nic);
    CAPTURE(r);
    CHECK(p.how == fabric::nic_how::nearest);
    CHECK(p.rail == r % 2);
    CHECK(p.nics == 2);
    CHECK(used.insert(p.core).second);
    const int package = core(t, p.core).package;
    CHECK(package == r % 2);                                  // rank 0 near mlx5_0, rank 1 near mlx5_1, ...
    CHECK(p.device == (package == 0 ? "mlx5_0" : "mlx5_1"));  // -d auto: the NIC closest to the core
  }
}

TEST_CASE("two NICs near the same package: -d auto spreads the ranks over them") {
  const topo_desc t = machine({{"mlx5_0", 1}, {"mlx5_1", 1}});
  std::set<std::string> devices;
  for (int r = 0; r < 4; ++r) {
    const auto p = fabric::place(t, r, 4, bind_kind::nic);
    devices.insert(p.device);
    CHECK(p.how == fabric::nic_how::spread);
    CHECK(p.rail == r % 2);  // local rank i takes rail i mod 2: every NIC gets ranks
  }
  CHECK(devices == std::set<std::string>{"mlx5_0", "mlx5_1"});
}

TEST_CASE("-d names the device whatever its distance") {
  // -d mlx5_1: the node's only candidate (fabric::nic_candidates), far from the rank's core
  const topo_desc t = machine({{"mlx5_1", 1}});
  const auto p = fabric::place(t, 0, 2, bind_kind::core);
  CHECK(p.device == "mlx5_1");
  CHECK(p.how == fabric::nic_how::only);
  CHECK(p.rail == 0);
}

TEST_CASE("--nic-map: a rail number or a device name per local rank, cyclically; one the node lacks is an error") {
  const topo_desc t = machine({{"mlx5_0", 0}, {"mlx5_1", 1}});
  const std::vector<std::string> map{"1", "mlx5_0"};
  for (int r = 0; r < 4; ++r) {
    const auto p = fabric::place(t, r, 4, bind_kind::nic, map);
    CAPTURE(r);
    CHECK(p.how == fabric::nic_how::map);
    CHECK(p.device == (r % 2 == 0 ? "mlx5_1" : "mlx5_0"));
    CHECK(p.rail == (r % 2 == 0 ? 1 : 0));
  }
  CHECK_THROWS_WITH_AS(fabric::place(t, 0, 2, bind_kind::nic, {"2"}),
                       doctest::Contains("this node's NICs are mlx5_0, mlx5_1; give a rail 0..1"), usage_error);
  CHECK_THROWS_AS(fabric::place(t, 1, 2, bind_kind::nic, {"0", "mlx5_7"}), usage_error);
}

TEST_CASE("ranks pinned to common CPUs of one node share; other nodes and unpinned ranks do not") {
  const topo_desc t = machine({{"mlx5_0", 1}});
  const auto p0 = fabric::place(t, 0, 40, bind_kind::nic);
  const auto p32 = fabric::place(t, 32, 40, bind_kind::nic);  // wraps onto rank 0's core
  const auto p1 = fabric::place(t, 1, 40, bind_kind::nic);
  const auto free = fabric::place(t, 0, 40, bind_kind::none);
  const mpi::node_info n0{0, 40, 0, 2}, n32{32, 40, 0, 2}, n1{1, 40, 0, 2}, other{0, 40, 1, 2};
  const auto a = fabric::make_rank_info("h", nullptr, &p0, n0, true);
  const auto b = fabric::make_rank_info("h", nullptr, &p32, n32, true);
  const auto c = fabric::make_rank_info("h", nullptr, &p1, n1, true);
  auto d = fabric::make_rank_info("g", nullptr, &p0, other, true);
  const std::string other_boot = "another machine's kernel";
  d.kernel = {};
  std::ranges::copy(other_boot, d.kernel.begin());
  const auto e = fabric::make_rank_info("h", nullptr, &free, n1, false);
  CHECK(fabric::share_cpu(a, b));
  CHECK_FALSE(fabric::share_cpu(a, c));
  CHECK_FALSE(fabric::share_cpu(a, d));  // same core number, another node
  CHECK_FALSE(fabric::share_cpu(a, e));  // --bind none: sharing is the user's choice
  const auto warnings = fabric::sharing_warnings({a, b, c, d});
  REQUIRE(warnings.size() == 1);  // once per host
  CHECK(warnings[0].find("ranks 0,1 on CPUs " + fabric::cpu_list(p0.cpus)) != std::string::npos);
  // the retest's pair classes: a and b one group, everyone else none
  const std::vector<fabric::rank_info> job{a, c, d, b, e};
  const auto groups = fabric::cpu_groups(job);
  CHECK(groups[0] >= 0);
  CHECK(groups[3] == groups[0]);
  CHECK(groups[1] == -1);
  CHECK(groups[2] == -1);
  CHECK(groups[4] == -1);
  // another node on a's kernel (a container, an emulated node) pinned to a's core shares a's CPU:
  // alone, a pair between them runs on one core's time; with its kernel unknown, its node decides
  const std::string boot = "one machine's kernel";
  auto on_it = a;
  on_it.kernel = {};
  std::ranges::copy(boot, on_it.kernel.begin());
  auto f = fabric::make_rank_info("g2", nullptr, &p0, other, true);
  f.kernel = on_it.kernel;
  auto g = f;
  g.kernel = {};
  const auto more = fabric::cpu_groups(std::vector<fabric::rank_info>{on_it, c, d, f, g});
  CHECK(more[0] >= 0);
  CHECK(more[3] == more[0]);
  CHECK(more[2] == -1);
  CHECK(more[4] == -1);
  CHECK_FALSE(fabric::share_cpu(a, f));  // the warning stays per node: it tells one host's user
}

TEST_CASE("this machine: placement picks a core the process may run on") {
  fabric::topology here;
  const topo_desc t = here.describe({});
  REQUIRE_FALSE(t.cores.empty());
  const auto p = fabric::place(t, 0, 1, bind_kind::core);
  if (p.source == bound_by::rdmamesh) {
    CHECK(std::find(t.allowed_pus.begin(), t.allowed_pus.end(), p.pu) != t.allowed_pus.end());
  }
  CHECK(fabric::cpu_list({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
}

TEST_CASE("a rank's address for --connect round: its GID on RoCE, else host, device and port") {
  fabric::rank_info roce;
  const std::string gid = "::ffff:10.10.0.2", host = "node2", dev = "mlx5_1";
  std::copy(gid.begin(), gid.end(), roce.gid.begin());
  std::copy(host.begin(), host.end(), roce.host.begin());
  CHECK(fabric::address_of(roce) == gid);
  fabric::rank_info ib;
  std::copy(host.begin(), host.end(), ib.host.begin());
  std::copy(dev.begin(), dev.end(), ib.device.begin());
  ib.port = 1;
  CHECK(fabric::address_of(ib) == "node2/mlx5_1/1");
  ib.port = 2;  // another port of the same NIC is another address
  CHECK(fabric::address_of(ib) != "node2/mlx5_1/1");
}

TEST_CASE("-d all or a list: every node has every rail and every NIC drives a rank, or the job says why") {
  // 2 nodes, 2 NICs each, records as every rank gathers them
  auto rank = [](int node, int rail, int nics, const char* host) {
    fabric::rank_info r;
    r.node = node;
    r.rail = rail;
    r.nics = nics;
    std::copy_n(host, std::strlen(host), r.host.data());
    return r;
  };
  options o;
  o.ib_dev = "all";
  CHECK_NOTHROW(
      fabric::check_nics({rank(0, 0, 2, "n1"), rank(0, 1, 2, "n1"), rank(1, 0, 2, "n2"), rank(1, 1, 2, "n2")}, o));
  // one rank on n2: its rail 1 idles
  CHECK_THROWS_WITH_AS(fabric::check_nics({rank(0, 0, 2, "n1"), rank(0, 1, 2, "n1"), rank(1, 0, 2, "n2")}, o),
                       doctest::Contains("n2 runs 1 rank(s) for its 2 NICs, so rail(s) 1 get none"), usage_error);
  // n2 has one NIC: rail 1 does not exist there
  CHECK_THROWS_WITH_AS(fabric::check_nics({rank(0, 0, 2, "n1"), rank(0, 1, 2, "n1"), rank(1, 0, 1, "n2")}, o),
                       doctest::Contains("n2 has 1 NIC(s), n1 has 2"), usage_error);
  // auto leaves NICs idle by design (the nearest NIC per rank)
  o.ib_dev.clear();
  CHECK_NOTHROW(fabric::check_nics({rank(0, 0, 2, "n1"), rank(1, 0, 1, "n2")}, o));
}

TEST_CASE("--nic-map with --bind nic: each rank sits near the NIC the map gives it") {
  const topo_desc t = machine({{"mlx5_0", 0}, {"mlx5_1", 1}});
  const std::vector<std::string> map{"1", "1", "0", "0"};  // ranks 0, 1 on mlx5_1 (package 1)
  std::set<int> used;
  for (int r = 0; r < 4; ++r) {
    const auto p = fabric::place(t, r, 4, bind_kind::nic, map);
    CAPTURE(r);
    CHECK(used.insert(p.core).second);
    CHECK(core(t, p.core).package == (r < 2 ? 1 : 0));
    CHECK(p.device == (r < 2 ? "mlx5_1" : "mlx5_0"));
  }
}
