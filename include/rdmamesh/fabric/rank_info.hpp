// Who and where one rank is (host, device, port, GID): a fixed-size record gathered to rank 0
// for the `#` header and the /ranks group of the results file.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "rdmamesh/fabric/select.hpp"

namespace rdmamesh::fabric {

struct rank_info {
  std::array<char, 64> host{};
  std::array<char, 32> device{};
  std::array<char, 48> gid{};  // text form; empty without GRH
  std::int32_t port = 0;
  std::int32_t gid_index = -1;
  std::int32_t mtu = 0;  // bytes
  std::uint8_t ethernet = 0;
  std::array<std::uint8_t, 3> reserved{};
};

static_assert(std::is_trivially_copyable_v<rank_info>);

rank_info make_rank_info(std::string_view host, const port_choice* port);

// The text of a fixed char field, up to its first NUL.
template <std::size_t N>
std::string_view text(const std::array<char, N>& a) {
  std::size_t n = 0;
  while (n < N && a[n] != '\0') ++n;
  return {a.data(), n};
}

std::string this_host();

}  // namespace rdmamesh::fabric
