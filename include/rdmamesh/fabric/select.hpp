// Which device, port and GID a rank uses. discover() asks libibverbs; choose_port() is a pure
// function of what was discovered and the flags, so every rule and error text is unit-tested.
#pragma once

#include <string>
#include <vector>

#include <infiniband/verbs.h>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/verbs/device.hpp"

namespace rdmamesh::fabric {

struct port_desc {
  int port = 1;
  ibv_port_state state = IBV_PORT_DOWN;
  bool ethernet = false;  // RoCE; otherwise InfiniBand
  ibv_mtu active_mtu = IBV_MTU_1024;
  std::uint16_t lid = 0;
  std::uint8_t active_speed = 0;  // ibv_port_attr codes
  std::uint8_t active_width = 0;
  std::vector<verbs::gid_entry> gids;  // valid entries only
};

struct device_desc {
  std::string name;
  std::vector<port_desc> ports;
  std::string fw_ver;
  std::uint64_t node_guid = 0;  // host byte order
  std::string board_id;
  std::string pcie;       // the NIC's own PCIe link, "16 GT/s x16" ("": none, e.g. SoftRoCE)
  std::string pcie_down;  // a link on its way to the root port trained below both ends (pcie.hpp)
};

struct port_choice {
  std::string device;
  int port = 1;
  bool ethernet = false;
  ibv_mtu mtu = IBV_MTU_1024;
  std::uint16_t lid = 0;
  int gid_index = -1;  // -1: no GRH (InfiniBand by LID)
  verbs::gid_entry gid;
  // what a user compares across nodes to find the odd one out
  std::string fw_ver;
  std::uint64_t node_guid = 0;
  std::string board_id;
  std::string pcie, pcie_down;  // device_desc's
  double line_rate_bps = 0;     // nominal, from the active speed and width; 0: unknown
};

// The port's nominal rate as ibstat prints it (EDR 4x = 100 Gb/s), from ibv_port_attr's
// active_speed and active_width codes; 0 for codes it does not know.
double line_rate_bps(std::uint8_t active_speed, std::uint8_t active_width);

// The one-line message for a machine without RDMA devices, naming the ways to get one.
std::string no_device_message();

// Devices libibverbs sees, with their ports and GIDs; when `only` is set, other devices are
// listed by name alone (their ports are not queried).
std::vector<device_desc> discover(const std::vector<std::string>& only = {});

// The NICs a node's ranks choose among, in rail order (rail k is the k-th): -d's list as given;
// `all` every device and auto every device with an ACTIVE port, both in name order (mlx5_2 before
// mlx5_10). Throws usage_error naming the fix for a device of a list (or of `all`) that is
// missing (on `host`) or has no ACTIVE port; a single name is choose_port's to judge.
std::vector<std::string> nic_candidates(const std::vector<device_desc>& devices, const options& o,
                                        const std::string& host);

// Throws usage_error with a message that names the fix when nothing fits.
port_choice choose_port(const std::vector<device_desc>& devices, const options& o);

}  // namespace rdmamesh::fabric
