// Filling a rank_info; strings are truncated to their field, never overrun.
#include "rdmamesh/fabric/rank_info.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <fstream>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rdmamesh/util/error.hpp"
#include "rdmamesh/verbs/qp.hpp"

namespace rdmamesh::fabric {
namespace {

template <std::size_t N>
void put(std::array<char, N>& dst, std::string_view s) {
  const std::size_t n = std::min(s.size(), N - 1);
  std::copy_n(s.data(), n, dst.data());
  dst[n] = '\0';
}

}  // namespace

std::string address_of(const rank_info& r) {
  const auto gid = text(r.gid);
  return !gid.empty() ? std::string(gid) : fmt::format("{}/{}/{}", text(r.host), text(r.device), r.port);
}

rank_info make_rank_info(std::string_view host, const port_choice* port, const placement* where,
                         const mpi::node_info& node, bool mem_on_numa) {
  rank_info r;
  put(r.host, host);
  put(r.kernel, this_kernel());
  r.node = node.node;
  r.local_rank = node.local_rank;
  r.pid = static_cast<std::int32_t>(getpid());
  if (port != nullptr) {
    put(r.device, port->device);
    r.port = port->port;
    r.gid_index = port->gid_index;
    if (port->gid_index >= 0) put(r.gid, verbs::format_gid(port->gid.raw));
    r.mtu = verbs::mtu_bytes(port->mtu);
    r.ethernet = port->ethernet ? 1 : 0;
    put(r.fw_ver, port->fw_ver);
    put(r.board_id, port->board_id);
    put(r.pcie, port->pcie);
    put(r.pcie_down, port->pcie_down);
    r.node_guid = port->node_guid;
    r.line_rate_bps = port->line_rate_bps;
  }
  if (where != nullptr) {
    r.core = where->core;
    r.pu = where->pu;
    r.numa = where->numa;
    r.rail = where->rail;
    r.nics = where->nics;
    r.nic_how = static_cast<std::uint8_t>(where->how);
    r.bound = static_cast<std::uint8_t>(where->source);
    put(r.cpus, cpu_list(where->cpus));
    for (int pu : where->cpus) {
      if (pu >= 0 && pu < cpu_mask_bits) r.cpu_mask[static_cast<std::size_t>(pu) / 64] |= 1ULL << (pu % 64);
    }
  }
  r.mem_on_numa = mem_on_numa ? 1 : 0;
  return r;
}

std::string this_host() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

std::string this_kernel() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  in >> id;
  return id;
}

void check_nics(const std::vector<rank_info>& ranks, const options& o) {
  if (o.ib_dev.empty() || ranks.empty()) return;  // auto: the nearest NIC; a node may leave some idle
  struct node_nics {
    std::string host;
    int nics = 0;
    int ranks = 0;
    std::set<int> used;
  };
  std::map<std::int32_t, node_nics> by;
  for (const auto& r : ranks) {
    auto& n = by[r.node];
    n.host = text(r.host);
    n.nics = r.nics;
    ++n.ranks;
    n.used.insert(r.rail);
  }
  const auto most = std::ranges::max_element(by, {}, [](const auto& e) { return e.second.nics; });
  for (const auto& [node, n] : by) {
    if (n.nics < most->second.nics) {
      throw usage_error(
          fmt::format("-d {}: {} has {} NIC(s), {} has {}: rail k must exist on every node; name the "
                      "NICs every node has with -d A,B",
                      o.ib_dev, n.host, n.nics, most->second.host, most->second.nics));
    }
    if (static_cast<int>(n.used.size()) < n.nics) {
      std::vector<int> idle;
      for (int k = 0; k < n.nics; ++k)
        if (!n.used.contains(k)) idle.push_back(k);
      throw usage_error(fmt::format(
          "-d {}: {} runs {} rank(s) for its {} NICs, so rail(s) {} get none; run at least {} ranks per node "
          "(mpirun --map-by ppr:{}:node, srun --ntasks-per-node={}), fix --nic-map, or name fewer NICs with -d",
          o.ib_dev, n.host, n.ranks, n.nics, fmt::join(idle, ","), n.nics, n.nics, n.nics));
    }
  }
}

std::vector<std::size_t> ranks_of_node(std::int32_t node, std::span<const rank_info> ranks) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].node == node) out.push_back(i);
  }
  return out;
}

std::vector<std::size_t> ranks_of_nic(std::int32_t node, std::int32_t rail, std::span<const rank_info> ranks) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].node == node && ranks[i].rail == rail) out.push_back(i);
  }
  return out;
}

std::vector<std::uint32_t> port_ids(std::span<const rank_info> ranks) {
  std::map<std::tuple<std::int32_t, std::string_view, std::int32_t>, std::uint32_t> seen;
  std::vector<std::uint32_t> out;
  out.reserve(ranks.size());
  for (const auto& r : ranks) {
    const auto id = static_cast<std::uint32_t>(seen.size());
    out.push_back(seen.try_emplace({r.node, text(r.device), r.port}, id).first->second);
  }
  return out;
}

namespace {

// Whether two ranks' pins overlap. Unpinned ranks (--bind none) share the node by the user's
// choice: only pins can collide.
bool pins_overlap(const rank_info& a, const rank_info& b) {
  const auto none = static_cast<std::uint8_t>(bound_by::none);
  if (a.bound == none || b.bound == none) return false;
  for (std::size_t i = 0; i < a.cpu_mask.size(); ++i) {
    if ((a.cpu_mask[i] & b.cpu_mask[i]) != 0) return true;
  }
  return false;
}

// The CPUs a rank runs on belong to its kernel; where its boot id is unknown, to its node.
std::string kernel_of(const rank_info& r) {
  return r.kernel[0] != '\0' ? std::string(text(r.kernel)) : fmt::format("node {}", r.node);
}

}  // namespace

bool share_cpu(const rank_info& a, const rank_info& b) {
  return a.node == b.node && pins_overlap(a, b);
}

std::vector<std::int32_t> cpu_groups(std::span<const rank_info> ranks) {
  std::map<std::string, std::vector<std::size_t>> by_kernel;
  for (std::size_t r = 0; r < ranks.size(); ++r) by_kernel[kernel_of(ranks[r])].push_back(r);
  std::vector<std::size_t> root(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) root[r] = r;
  const auto find = [&](std::size_t r) {
    while (root[r] != r) r = root[r] = root[root[r]];
    return r;
  };
  std::vector<std::uint8_t> shares(ranks.size(), 0);
  for (const auto& [kernel, rs] : by_kernel) {
    for (std::size_t i = 0; i < rs.size(); ++i) {
      for (std::size_t j = i + 1; j < rs.size(); ++j) {
        if (!pins_overlap(ranks[rs[i]], ranks[rs[j]])) continue;
        root[find(rs[j])] = find(rs[i]);
        shares[rs[i]] = shares[rs[j]] = 1;
      }
    }
  }
  std::vector<std::int32_t> out(ranks.size(), -1);
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (shares[r] != 0) out[r] = static_cast<std::int32_t>(find(r));
  return out;
}

std::vector<std::string> sharing_warnings(const std::vector<rank_info>& ranks) {
  // node -> CPU list -> the sharing ranks pinned there
  std::map<std::int32_t, std::map<std::string, std::vector<std::size_t>>> sharing;
  for (std::size_t a = 0; a < ranks.size(); ++a) {
    for (std::size_t b = 0; b < ranks.size(); ++b) {
      if (a != b && share_cpu(ranks[a], ranks[b])) {
        sharing[ranks[a].node][std::string(text(ranks[a].cpus))].push_back(a);
        break;
      }
    }
  }
  std::vector<std::string> out;
  for (const auto& [node, by_cpus] : sharing) {
    std::vector<std::string> groups;
    std::string host;
    for (const auto& [cpus, rs] : by_cpus) {
      groups.push_back(fmt::format("ranks {} on CPUs {}", fmt::join(rs, ","), cpus));
      host = text(ranks[rs.front()].host);
    }
    out.push_back(
        fmt::format("on {}, ranks are pinned to shared CPUs ({}): they compete for the cores and their "
                    "figures are not per-core ones; run at most one rank per core there",
                    host, fmt::join(groups, "; ")));
  }
  return out;
}

}  // namespace rdmamesh::fabric
