// Who and where one rank is (host, placement, device, port, GID): a fixed-size record gathered
// to every rank for the `#` header, the /ranks group of the results file, and the check for
// ranks that share a CPU.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "rdmamesh/fabric/placement.hpp"
#include "rdmamesh/fabric/select.hpp"
#include "rdmamesh/mpi/world.hpp"

namespace rdmamesh::fabric {

inline constexpr int cpu_mask_bits = 1024;

struct rank_info {
  std::array<char, 64> host{};
  // the running kernel's boot id: the ranks of several nodes on one kernel (containers, an
  // emulated cluster) share its CPUs ("": unknown, the node stands for it)
  std::array<char, 40> kernel{};
  std::array<char, 32> device{};
  std::array<char, 48> gid{};                                // text form; empty without GRH
  std::array<char, 64> cpus{};                               // "0-3,8": the PUs the rank may run on
  std::array<std::uint64_t, cpu_mask_bits / 64> cpu_mask{};  // the same, for overlap tests
  std::array<char, 48> fw_ver{};
  std::array<char, 32> board_id{};
  std::array<char, 24> pcie{};        // the NIC's PCIe link, "16 GT/s x16"
  std::array<char, 112> pcie_down{};  // a link trained below both its ends ("": none)
  std::uint64_t node_guid = 0;
  double line_rate_bps = 0;  // nominal; 0: unknown
  std::int32_t port = 0;
  std::int32_t gid_index = -1;
  std::int32_t mtu = 0;  // bytes
  std::int32_t node = 0;
  std::int32_t local_rank = 0;
  std::int32_t pid = 0;
  std::int32_t core = -1;
  std::int32_t pu = -1;
  std::int32_t numa = -1;
  std::int32_t rail = -1;  // the NIC's index among its node's candidates (-d's order; name order)
  std::int32_t nics = 0;   // the node's candidate NICs
  std::uint8_t ethernet = 0;
  std::uint8_t bound = 0;        // fabric::bound_by
  std::uint8_t mem_on_numa = 0;  // the buffer is bound to `numa`
  std::uint8_t nic_how = 0;      // fabric::nic_how
};

static_assert(std::is_trivially_copyable_v<rank_info>);

rank_info make_rank_info(std::string_view host, const port_choice* port, const placement* where,
                         const mpi::node_info& node, bool mem_on_numa);

// The text of a fixed char field, up to its first NUL.
template <std::size_t N>
std::string_view text(const std::array<char, N>& a) {
  std::size_t n = 0;
  while (n < N && a[n] != '\0') ++n;
  return {a.data(), n};
}

std::string this_host();
// The running kernel's boot id ("" where it cannot be read).
std::string this_kernel();

// Where a QP to this rank sends: its GID on RoCE, else (the LID path) its host, device and port.
std::string address_of(const rank_info& r);

// With -d all or a list: every node has as many NICs as the most any node has (rail k must exist
// everywhere) and each of them drives at least one rank; throws usage_error naming the node and
// the fix. Pure: every rank reaches the same answer from the gathered records.
void check_nics(const std::vector<rank_info>& ranks, const options& o);

// The job's ranks on a node, and on one NIC of it (the NIC of a rail), in rank order.
std::vector<std::size_t> ranks_of_node(std::int32_t node, std::span<const rank_info> ranks);
std::vector<std::size_t> ranks_of_nic(std::int32_t node, std::int32_t rail, std::span<const rank_info> ranks);

// Each rank's NIC port as an id from 0, shared by the ranks on one port of one node.
std::vector<std::uint32_t> port_ids(std::span<const rank_info> ranks);

// Whether two pinned ranks of one host may run on a common PU.
bool share_cpu(const rank_info& a, const rank_info& b);
// By rank, a group id shared by the pinned ranks of one kernel whose CPUs overlap (each with one
// or more of the others, transitively); -1 for a rank that shares no CPU. One kernel, not one
// node: nodes that are containers or network namespaces of one machine run on its CPUs, and a
// pair alone whose two ends share one runs at half the speed of one that does not. Pure, as
// check_nics.
std::vector<std::int32_t> cpu_groups(std::span<const rank_info> ranks);
// Per host with CPU sharing, one line naming the ranks and what they share.
std::vector<std::string> sharing_warnings(const std::vector<rank_info>& ranks);

}  // namespace rdmamesh::fabric
