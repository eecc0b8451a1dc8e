// Sanity checks on what a peer sent before any QP is modified with it.
#include "rdmamesh/fabric/conn_info.hpp"

#include <fmt/format.h>

namespace rdmamesh::fabric {

std::string validate(const conn_info& remote, int from, bool we_are_ethernet) {
  if (remote.magic != conn_info_magic) {
    return fmt::format(
        "rank {} sent connection info of another format (magic {:#x}, expected {:#x}); run the same "
        "rdmamesh build on every rank",
        from, remote.magic, conn_info_magic);
  }
  if ((remote.ethernet != 0) != we_are_ethernet) {
    return fmt::format("rank {} is on {} but this rank is on {}; ranks must share one link layer", from,
                       remote.ethernet ? "RoCE" : "InfiniBand", we_are_ethernet ? "RoCE" : "InfiniBand");
  }
  if (remote.slots == 0 || remote.slot_stride == 0 || remote.length < remote.slot_stride * remote.slots) {
    return fmt::format("rank {} advertised a receive region of {} bytes for {} slots of {} bytes", from, remote.length,
                       remote.slots, remote.slot_stride);
  }
  return {};
}

}  // namespace rdmamesh::fabric
