// Filling a rank_info; strings are truncated to their field, never overrun.
#include "rdmamesh/fabric/rank_info.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>

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

rank_info make_rank_info(std::string_view host, const port_choice* port) {
  rank_info r;
  put(r.host, host);
  if (port != nullptr) {
    put(r.device, port->device);
    r.port = port->port;
    r.gid_index = port->gid_index;
    if (port->gid_index >= 0) put(r.gid, verbs::format_gid(port->gid.raw));
    r.mtu = verbs::mtu_bytes(port->mtu);
    r.ethernet = port->ethernet ? 1 : 0;
  }
  return r;
}

std::string this_host() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

}  // namespace rdmamesh::fabric
