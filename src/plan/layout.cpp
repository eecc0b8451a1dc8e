// Buffer layout arithmetic; see the header for the rules that keep --verify sound.
#include "rdmamesh/plan/layout.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "rdmamesh/util/error.hpp"
#include "rdmamesh/util/units.hpp"

namespace rdmamesh::plan {
namespace {

constexpr std::uint64_t align_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace

layout make_layout(const options& o, std::uint32_t n_ranks) {
  layout l;
  l.n_peers = n_ranks > 0 ? n_ranks - 1 : 0;
  l.msg_size = o.size;
  // cache-line slots for small messages, page-aligned ones for large (DMA-friendly)
  l.slot_stride = align_up(o.size, o.size >= 4096 ? 4096 : 64);

  const std::uint64_t budget =
      o.peer_buffer ? o.peer_buffer : std::max<std::uint64_t>(default_peer_buffer, 2 * l.slot_stride);
  const std::uint64_t fit = budget / l.slot_stride;
  if (fit == 0) {
    throw usage_error(fmt::format("--size {} does not fit in --peer-buffer {}; raise --peer-buffer",
                                  format_size(o.size), format_size(budget)));
  }

  l.window = o.tx_depth;
  l.rx_depth = o.rx_depth;
  l.rx_slots = static_cast<std::uint32_t>(std::min<std::uint64_t>(fit, std::uint64_t{l.rx_depth} + 1));
  l.tx_slots = 1;

  if (o.verify) {
    if (l.rx_slots < 2) {
      throw usage_error(
          fmt::format("--verify needs two {} slots per peer but --peer-buffer {} holds one; "
                      "raise --peer-buffer to at least {}",
                      format_size(o.size), format_size(budget), format_size(2 * l.slot_stride)));
    }
    if (receiver_sees_messages(o.op)) l.rx_depth = std::min(l.rx_depth, l.rx_slots - 1);
    l.tx_slots = static_cast<std::uint32_t>(std::min<std::uint64_t>(fit, o.tx_depth));
    l.window = std::min(l.window, l.tx_slots);
  }
  return l;
}

}  // namespace rdmamesh::plan
