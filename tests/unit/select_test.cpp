// Device, port and GID selection over described (not real) devices: every default and every
// error message a user can hit.
#include <doctest/doctest.h>

#include "text.hpp"

#include <arpa/inet.h>

#include "rdmamesh/fabric/select.hpp"
#include "rdmamesh/util/error.hpp"

using namespace rdmamesh;
using fabric::device_desc;
using fabric::port_desc;
using verbs::gid_entry;
using verbs::gid_kind;

namespace {

gid_entry gid(int index, const char* text, gid_kind kind) {
  gid_entry g;
  g.index = index;
  g.kind = kind;
  REQUIRE(inet_pton(AF_INET6, text, g.raw.data()) == 1);
  return g;
}

port_desc roce_port(int n, ibv_port_state state) {
  port_desc p;
  p.port = n;
  p.state = state;
  p.ethernet = true;
  p.active_mtu = IBV_MTU_1024;
  // like rxe0 in the VM: index 0 link-local, index 1 the IPv4-mapped address
  p.gids = {gid(0, "fe80::5054:ff:fe12:3456", gid_kind::roce_v2), gid(1, "::ffff:10.0.2.15", gid_kind::roce_v2)};
  return p;
}

port_desc ib_port(int n, ibv_port_state state, std::uint16_t lid) {
  port_desc p;
  p.port = n;
  p.state = state;
  p.ethernet = false;
  p.active_mtu = IBV_MTU_4096;
  p.lid = lid;
  p.gids = {gid(0, "fe80::1", gid_kind::ib)};
  return p;
}

std::string error_of(const std::vector<device_desc>& devs, const options& o) {
  try {
    (void)fabric::choose_port(devs, o);
  } catch (const usage_error& e) {
    return e.what();
  }
  FAIL("no error");
  return {};
}

}  // namespace

TEST_CASE("no device: the message says so and names both ways to get one") {
  const std::string msg = error_of({}, options{});
  CHECK(has(msg, "no RDMA device found"));
  CHECK(has(msg, "rdma link add rxe0 type rxe netdev"));
  CHECK(has(msg, "tools/softroce-vm"));
}

TEST_CASE("default on RoCE: first ACTIVE port, RoCE v2 IPv4-mapped GID, port MTU") {
  const std::vector<device_desc> devs{{"rxe0", {roce_port(1, IBV_PORT_ACTIVE)}}};
  const auto c = fabric::choose_port(devs, options{});
  CHECK(c.device == "rxe0");
  CHECK(c.port == 1);
  CHECK(c.ethernet);
  CHECK(c.gid_index == 1);
  CHECK(c.mtu == IBV_MTU_1024);
}

TEST_CASE("auto GID prefers IPv4-mapped RoCE v2 over RoCE v1 and link-local entries") {
  port_desc p = roce_port(1, IBV_PORT_ACTIVE);
  p.gids = {gid(0, "fe80::1", gid_kind::roce_v1), gid(1, "fe80::1", gid_kind::roce_v2),
            gid(2, "::ffff:192.168.1.5", gid_kind::roce_v1), gid(3, "::ffff:192.168.1.5", gid_kind::roce_v2)};
  CHECK(fabric::choose_port({{"mlx5_0", {p}}}, options{}).gid_index == 3);
  p.gids.pop_back();  // no IPv4-mapped v2: any v2 will do
  CHECK(fabric::choose_port({{"mlx5_0", {p}}}, options{}).gid_index == 1);
  p.gids = {gid(0, "fe80::1", gid_kind::roce_v1)};
  CHECK(has(error_of({{"mlx5_0", {p}}}, options{}), "no RoCE v2 GID"));
}

TEST_CASE("default skips devices and ports that are not ACTIVE") {
  const std::vector<device_desc> devs{{"mlx5_0", {ib_port(1, IBV_PORT_DOWN, 0)}},
                                      {"mlx5_1", {ib_port(1, IBV_PORT_INIT, 0), ib_port(2, IBV_PORT_ACTIVE, 7)}}};
  const auto c = fabric::choose_port(devs, options{});
  CHECK(c.device == "mlx5_1");
  CHECK(c.port == 2);
  CHECK_FALSE(c.ethernet);
  CHECK(c.gid_index == -1);  // InfiniBand: addressed by LID, no GRH
  CHECK(c.lid == 7);
}

TEST_CASE("nothing ACTIVE anywhere names each port's state") {
  const std::vector<device_desc> devs{{"mlx5_0", {ib_port(1, IBV_PORT_DOWN, 0)}}};
  const std::string msg = error_of(devs, options{});
  CHECK(has(msg, "no ACTIVE port"));
  CHECK(has(msg, "mlx5_0"));
  CHECK(has(msg, "1 down"));
}

TEST_CASE("-d names a device; unknown names list the available ones") {
  const std::vector<device_desc> devs{{"mlx5_0", {ib_port(1, IBV_PORT_ACTIVE, 1)}},
                                      {"rxe0", {roce_port(1, IBV_PORT_ACTIVE)}}};
  options o;
  o.ib_dev = "rxe0";
  CHECK(fabric::choose_port(devs, o).device == "rxe0");
  o.ib_dev = "mlx5_9";
  const std::string msg = error_of(devs, o);
  CHECK(has(msg, "'mlx5_9' not found"));
  CHECK(has(msg, "mlx5_0, rxe0"));
  CHECK(has(msg, "-d/--ib-dev"));
}

TEST_CASE("-i: a missing or non-ACTIVE port is named with the ports that exist") {
  const std::vector<device_desc> devs{{"mlx5_0", {ib_port(1, IBV_PORT_ACTIVE, 1), ib_port(2, IBV_PORT_DOWN, 0)}}};
  options o;
  o.ib_dev = "mlx5_0";
  o.ib_port = 2;
  std::string msg = error_of(devs, o);
  CHECK(has(msg, "port 2 of mlx5_0 is down, not active"));
  CHECK(has(msg, "-i/--ib-port"));
  o.ib_port = 3;
  msg = error_of(devs, o);
  CHECK(has(msg, "has no port 3"));
  o.ib_port = 1;
  CHECK(fabric::choose_port(devs, o).port == 1);
}

TEST_CASE("-x: out of range or not RoCE v2 is rejected with the valid entries listed") {
  port_desc p = roce_port(1, IBV_PORT_ACTIVE);
  p.gids.push_back(gid(2, "::ffff:10.0.2.15", gid_kind::roce_v1));
  const std::vector<device_desc> devs{{"rxe0", {p}}};
  options o;
  o.gid_index = 7;
  std::string msg = error_of(devs, o);
  CHECK(has(msg, "GID index 7"));
  CHECK(has(msg, "::ffff:10.0.2.15"));
  o.gid_index = 2;
  msg = error_of(devs, o);
  CHECK(has(msg, "RoCE v1"));
  CHECK(has(msg, "not RoCE v2"));
  o.gid_index = 0;
  CHECK(fabric::choose_port(devs, o).gid_index == 0);
}

TEST_CASE("line rate from the port's active speed and width, as ibstat's Rate") {
  CHECK(fabric::line_rate_bps(1, 1) == doctest::Approx(2.5e9));    // SDR 1x
  CHECK(fabric::line_rate_bps(4, 2) == doctest::Approx(40e9));     // QDR 4x
  CHECK(fabric::line_rate_bps(32, 2) == doctest::Approx(100e9));   // EDR 4x
  CHECK(fabric::line_rate_bps(64, 2) == doctest::Approx(200e9));   // HDR 4x
  CHECK(fabric::line_rate_bps(64, 16) == doctest::Approx(100e9));  // HDR 2x (HDR100)
  CHECK(fabric::line_rate_bps(128, 2) == doctest::Approx(400e9));  // NDR 4x
  CHECK(fabric::line_rate_bps(3, 2) == 0);                         // unknown speed code
  CHECK(fabric::line_rate_bps(32, 3) == 0);                        // unknown width code
}

TEST_CASE("-d all, a list, auto: the node's NICs in rail order; a missing, repeated or down one is named") {
  const std::vector<device_desc> devs{{"mlx5_10", {roce_port(1, IBV_PORT_ACTIVE)}},
                                      {"mlx5_2", {roce_port(1, IBV_PORT_ACTIVE)}},
                                      {"mlx5_3", {roce_port(1, IBV_PORT_DOWN)}}};
  options o;
  // auto: what carries traffic, in natural name order (mlx5_2 before mlx5_10)
  CHECK(fabric::nic_candidates(devs, o, "n1") == std::vector<std::string>{"mlx5_2", "mlx5_10"});
  o.ib_dev = "mlx5_10,mlx5_2";  // a list: rails in the order given (the CLI splits it)
  o.ib_devs = {"mlx5_10", "mlx5_2"};
  CHECK(fabric::nic_candidates(devs, o, "n1") == std::vector<std::string>{"mlx5_10", "mlx5_2"});
  o.ib_dev = "all";  // every device: a down one is an error, not silently left out
  o.ib_devs.clear();
  CHECK_THROWS_WITH_AS(fabric::nic_candidates(devs, o, "n1"),
                       doctest::Contains("mlx5_3 on n1 has no ACTIVE port (ports: 1 down)"), usage_error);
  o.ib_dev = "mlx5_2,mlx5_9";
  o.ib_devs = {"mlx5_2", "mlx5_9"};
  CHECK_THROWS_WITH_AS(fabric::nic_candidates(devs, o, "n1"),
                       doctest::Contains("RDMA device 'mlx5_9' not found on n1; pick from mlx5_2, mlx5_3, mlx5_10"),
                       usage_error);
  o.ib_dev = "mlx5_2,mlx5_2";
  o.ib_devs = {"mlx5_2", "mlx5_2"};
  CHECK_THROWS_WITH_AS(fabric::nic_candidates(devs, o, "n1"), doctest::Contains("listed twice"), usage_error);
}
