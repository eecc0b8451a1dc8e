// What two ranks swap (over MPI_Alltoall) to connect one RC QP: a plain, fixed-layout struct.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>

namespace rdmamesh::fabric {

// 'RMSH' and a layout version: a rank built from another version of this struct is caught.
inline constexpr std::uint32_t conn_info_magic = 0x524d5301;

struct conn_info {
  std::uint32_t magic = 0;
  std::uint32_t qp_num = 0;
  std::uint32_t psn = 0;     // 24 bits
  std::uint32_t rkey = 0;    // of the sender's one MR
  std::uint64_t addr = 0;    // where the peer's messages land: the sender's receive region for it
  std::uint64_t length = 0;  // bytes of that region
  std::uint64_t slot_stride = 0;
  std::uint32_t slots = 0;  // slots in that region
  std::uint16_t lid = 0;
  std::uint8_t mtu = 0;       // ibv_mtu of the sender's port
  std::uint8_t ethernet = 0;  // 1: RoCE, 0: InfiniBand
  std::array<std::uint8_t, 16> gid{};
  std::uint8_t use_grh = 0;
  std::uint8_t max_rd_atomic = 0;  // READs the sender accepts in flight (its max_qp_rd_atom)
  std::array<std::uint8_t, 6> reserved{};
};

static_assert(std::is_trivially_copyable_v<conn_info>);
static_assert(sizeof(conn_info) == 72, "conn_info is a wire format: keep its layout fixed");

// Empty when `remote` (from rank `from`) can connect to us; otherwise what is wrong with it.
std::string validate(const conn_info& remote, int from, bool we_are_ethernet);

}  // namespace rdmamesh::fabric
