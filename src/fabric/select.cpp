// Device/port/GID selection: first ACTIVE port by default; on RoCE a RoCE v2 IPv4-mapped GID.
#include "rdmamesh/fabric/select.hpp"

#include <endian.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rdmamesh/fabric/pcie.hpp"
#include "rdmamesh/util/error.hpp"

namespace rdmamesh::fabric {
namespace {

std::string port_list(const device_desc& d) {
  std::vector<std::string> parts;
  for (const auto& p : d.ports) parts.push_back(fmt::format("{} {}", p.port, ibv_port_state_str(p.state)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string gid_list(const port_desc& p) {
  std::vector<std::string> parts;
  for (const auto& g : p.gids) {
    parts.push_back(fmt::format("{} {} {}", g.index, verbs::to_string(g.kind), verbs::format_gid(g.raw)));
  }
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, "; "));
}

int auto_gid(const port_desc& p) {
  auto pick = [&](auto pred) -> int {
    auto it = std::find_if(p.gids.begin(), p.gids.end(), pred);
    return it == p.gids.end() ? -1 : it->index;
  };
  // RoCE v2 routes over IP; the IPv4-mapped entry is the one bound to the interface address
  int idx = pick(
      [](const verbs::gid_entry& g) { return g.kind == verbs::gid_kind::roce_v2 && verbs::is_ipv4_mapped(g.raw); });
  if (idx < 0) idx = pick([](const verbs::gid_entry& g) { return g.kind == verbs::gid_kind::roce_v2; });
  return idx;
}

}  // namespace

std::string no_device_message() {
  return "no RDMA device found: load SoftRoCE with `rdma link add rxe0 type rxe netdev IFACE` "
         "(needs the rdma_rxe kernel module), or run inside the project's VM: "
         "tools/softroce-vm -- mpirun -np 4 build/rdmamesh";
}

std::vector<device_desc> discover(const std::vector<std::string>& only) {
  std::vector<device_desc> out;
  for (const auto& name : verbs::device_names()) {
    device_desc d;
    d.name = name;
    if (!only.empty() &&
        std::ranges::find(only, name) == only.end()) {  // listed by name only, for "pick one of ..." messages
      out.push_back(std::move(d));
      continue;
    }
    verbs::context ctx(name);
    d.fw_ver = ctx.device_attr().fw_ver;
    d.node_guid = be64toh(ctx.device_attr().node_guid);
    d.board_id = ctx.board_id();
    const auto path = read_pcie_path(std::filesystem::path("/sys/class/infiniband") / name / "device");
    if (!path.empty()) d.pcie = link_text(path.front());
    d.pcie_down = trained_down(path);
    for (int port = 1; port <= ctx.device_attr().phys_port_cnt; ++port) {
      const ibv_port_attr pa = ctx.port_attr(port);
      port_desc p;
      p.port = port;
      p.state = pa.state;
      p.ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
      p.active_mtu = pa.active_mtu;
      p.lid = pa.lid;
      p.active_speed = pa.active_speed;
      p.active_width = pa.active_width;
      p.gids = ctx.gids(port, pa.gid_tbl_len);
      d.ports.push_back(std::move(p));
    }
    out.push_back(std::move(d));
  }
  return out;
}

double line_rate_bps(std::uint8_t active_speed, std::uint8_t active_width) {
  double lane = 0;  // Gb/s per lane, as ibstat's Rate counts it
  switch (active_speed) {
    case 1: lane = 2.5; break;    // SDR
    case 2: lane = 5; break;      // DDR
    case 4: lane = 10; break;     // QDR
    case 8: lane = 10; break;     // FDR10
    case 16: lane = 14; break;    // FDR
    case 32: lane = 25; break;    // EDR
    case 64: lane = 50; break;    // HDR
    case 128: lane = 100; break;  // NDR
    default: return 0;
  }
  int lanes = 0;
  switch (active_width) {
    case 1: lanes = 1; break;
    case 2: lanes = 4; break;
    case 4: lanes = 8; break;
    case 8: lanes = 12; break;
    case 16: lanes = 2; break;
    default: return 0;
  }
  return lane * lanes * 1e9;
}

namespace {

// -d: the device by name; null when -d was not given.
const device_desc* named_device(const std::vector<device_desc>& devices, const options& o) {
  if (o.ib_dev.empty()) return nullptr;
  auto it = std::find_if(devices.begin(), devices.end(), [&](const device_desc& d) { return d.name == o.ib_dev; });
  if (it != devices.end()) return &*it;
  if (devices.empty()) throw usage_error(fmt::format("RDMA device '{}' not found; {}", o.ib_dev, no_device_message()));
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name);
  throw usage_error(
      fmt::format("RDMA device '{}' not found; pick one of {} with -d/--ib-dev", o.ib_dev, fmt::join(names, ", ")));
}

struct device_port {
  const device_desc* dev = nullptr;
  const port_desc* port = nullptr;
};

// -i: that port, of -d's device or of the first device that has it ACTIVE.
device_port numbered_port(const std::vector<device_desc>& devices, const device_desc* dev, const options& o) {
  if (dev == nullptr) {
    for (const auto& d : devices) {
      for (const auto& p : d.ports) {
        if (p.port == o.ib_port && p.state == IBV_PORT_ACTIVE) return {&d, &p};
      }
    }
    throw usage_error(fmt::format("no device has port {} ACTIVE; pick a device and port with -d and -i", o.ib_port));
  }
  auto it = std::find_if(dev->ports.begin(), dev->ports.end(), [&](const port_desc& p) { return p.port == o.ib_port; });
  if (it == dev->ports.end()) {
    throw usage_error(fmt::format("{} has no port {} (ports: {}); pick one with -i/--ib-port", dev->name, o.ib_port,
                                  port_list(*dev)));
  }
  if (it->state != IBV_PORT_ACTIVE) {
    throw usage_error(
        fmt::format("port {} of {} is {}, not active (ports: {}); bring the link up or pick another "
                    "port with -i/--ib-port",
                    o.ib_port, dev->name, ibv_port_state_str(it->state), port_list(*dev)));
  }
  return {dev, &*it};
}

// No -i: the first ACTIVE port of -d's device, or of any device.
device_port first_active_port(const std::vector<device_desc>& devices, const device_desc* dev, const options& o) {
  std::vector<std::string> seen;
  for (const auto& d : devices) {
    if (dev != nullptr && &d != dev) continue;
    for (const auto& p : d.ports) {
      if (p.state == IBV_PORT_ACTIVE) return {&d, &p};
    }
    seen.push_back(fmt::format("{} ports: {}", d.name, port_list(d)));
  }
  throw usage_error(fmt::format("no ACTIVE port on {} ({}); check the link (`rdma link`, `ibv_devinfo`)",
                                o.ib_dev.empty() ? "any RDMA device" : o.ib_dev, fmt::join(seen, "; ")));
}

// -x, or on RoCE the RoCE v2 entry (IPv4-mapped first); InfiniBand goes by LID without one.
void choose_gid(const port_desc& port, const options& o, port_choice& c) {
  if (o.gid_index >= 0) {
    auto it = std::find_if(port.gids.begin(), port.gids.end(),
                           [&](const verbs::gid_entry& g) { return g.index == o.gid_index; });
    if (it == port.gids.end()) {
      throw usage_error(fmt::format("GID index {} is not a valid entry of {} port {} (valid: {}); pick one with -x",
                                    o.gid_index, c.device, c.port, gid_list(port)));
    }
    if (port.ethernet && it->kind != verbs::gid_kind::roce_v2) {
      throw usage_error(
          fmt::format("GID index {} of {} port {} is {}, not RoCE v2 (valid: {}); pick a RoCE v2 GID with -x",
                      o.gid_index, c.device, c.port, verbs::to_string(it->kind), gid_list(port)));
    }
    c.gid_index = it->index;
    c.gid = *it;
  } else if (port.ethernet) {
    const int idx = auto_gid(port);
    if (idx < 0) {
      throw usage_error(
          fmt::format("{} port {} has no RoCE v2 GID (GIDs: {}); give the interface an IP address or "
                      "pick a GID with -x",
                      c.device, c.port, gid_list(port)));
    }
    c.gid_index = idx;
    c.gid =
        *std::find_if(port.gids.begin(), port.gids.end(), [&](const verbs::gid_entry& g) { return g.index == idx; });
  }
}

// Natural order: the digits of a name compare as numbers (mlx5_2 before mlx5_10).
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      const auto na = std::stoull(a.substr(i, std::min<std::size_t>(ie - i, 18)));
      const auto nb = std::stoull(b.substr(j, std::min<std::size_t>(je - j, 18)));
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

bool usable(const device_desc& d, int port) {
  return std::ranges::any_of(
      d.ports, [&](const port_desc& p) { return (port == 0 || p.port == port) && p.state == IBV_PORT_ACTIVE; });
}

}  // namespace

std::vector<std::string> nic_candidates(const std::vector<device_desc>& devices, const options& o,
                                        const std::string& host) {
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name);
  std::ranges::sort(names, natural_less);
  const auto find = [&](const std::string& name) { return std::ranges::find(devices, name, &device_desc::name); };
  const std::string where = host.empty() ? std::string() : fmt::format(" on {}", host);
  std::vector<std::string> out;
  if (o.ib_dev.empty()) {  // auto: what can carry traffic
    for (const auto& n : names) {
      if (usable(*find(n), o.ib_port)) out.push_back(n);
    }
    return out;
  }
  if (devices.empty())
    throw usage_error(fmt::format("-d {}: no RDMA device{}; {}", o.ib_dev, where, no_device_message()));
  out = o.ib_dev == "all" ? names : o.ib_devs;
  if (o.ib_dev != "all" && out.size() == 1) return out;  // one name: choose_port says what is wrong with it
  for (const auto& n : out) {
    const auto it = find(n);
    if (it == devices.end()) {
      throw usage_error(
          fmt::format("RDMA device '{}' not found{}; pick from {} with -d/--ib-dev", n, where, fmt::join(names, ", ")));
    }
    if (std::ranges::count(out, n) > 1) {
      throw usage_error(fmt::format("-d {}: {} is listed twice; name each NIC once (rail k = the k-th)", o.ib_dev, n));
    }
    if (!it->ports.empty() && !usable(*it, o.ib_port)) {
      throw usage_error(fmt::format(
          "{}{} has no ACTIVE port{} (ports: {}); bring the link up (`rdma link`, `ibv_devinfo`) or leave it out of "
          "-d ({})",
          n, where, o.ib_port ? fmt::format(" {}", o.ib_port) : std::string(), port_list(*it),
          o.ib_dev == "all" ? "list the NICs to test instead of all" : "name the others"));
    }
  }
  return out;
}

port_choice choose_port(const std::vector<device_desc>& devices, const options& o) {
  if (devices.empty() && o.ib_dev.empty()) throw usage_error(no_device_message());
  const device_desc* named = named_device(devices, o);
  const auto [dev, port] = o.ib_port > 0 ? numbered_port(devices, named, o) : first_active_port(devices, named, o);
  port_choice c;
  c.device = dev->name;
  c.port = port->port;
  c.ethernet = port->ethernet;
  c.mtu = port->active_mtu;
  c.lid = port->lid;
  c.fw_ver = dev->fw_ver;
  c.node_guid = dev->node_guid;
  c.board_id = dev->board_id;
  c.pcie = dev->pcie;
  c.pcie_down = dev->pcie_down;
  c.line_rate_bps = line_rate_bps(port->active_speed, port->active_width);
  choose_gid(*port, o, c);
  return c;
}

}  // namespace rdmamesh::fabric
