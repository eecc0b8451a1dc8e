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
constexpr std::uint64_t rank_budget = 256ULL << 20;
constexpr std::uint64_t max_peer_budget = 16ULL << 20;
constexpr std::uint64_t send_pool_budget = 32ULL << 20;

}  // namespace

std::uint64_t default_peer_budget(std::uint32_t n_peers) {
  return std::clamp<std::uint64_t>(rank_budget / std::max<std::uint32_t>(n_peers, 1), 64ULL << 10, max_peer_budget);
}

std::uint32_t srq_depth_for(const options& o, std::uint32_t sessions) {
  if (o.rx_depth) return o.rx_depth;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(std::uint64_t{sessions} * o.tx_depth, 512, 16384));
}

layout make_layout(const options& o, std::uint32_t n_ranks) {
  layout l;
  l.n_peers = n_ranks > 0 ? n_ranks - 1 : 0;
  l.qps = o.qps;
  l.msg_size = o.max_size();
  // cache-line slots for small messages, page-aligned ones for large (DMA-friendly)
  l.slot_stride = align_up(l.msg_size, l.msg_size >= 4096 ? 4096 : 64);

  const bool lat = o.mode == mode_kind::lat;
  const std::uint64_t min_slots = (o.verify || lat) ? 2 : 1;  // lat: a ping slot and a pong slot
  // bandwidth without --verify: nothing reads what lands, so every session shares one region
  l.shared_rx = !lat && !o.verify;
  std::uint64_t budget =
      o.peer_buffer ? o.peer_buffer : (l.shared_rx ? max_peer_budget : default_peer_budget(l.n_peers));
  const std::uint64_t need = l.slot_stride * min_slots * l.qps;
  if (budget < need) {
    if (o.peer_buffer) {
      throw usage_error(
          fmt::format("--peer-buffer {} holds fewer than {} slot(s) of {} for each of {} QP(s); raise "
                      "--peer-buffer to at least {}",
                      format_size(budget), min_slots, format_size(l.msg_size), l.qps, format_size(need)));
    }
    budget = need;
  }
  const std::uint64_t fit = budget / l.qps / l.slot_stride;  // slots per session

  l.window = o.tx_depth;
  const std::uint32_t depth = srq_depth_for(o, l.sessions());
  l.srq_depth = receiver_sees_messages(o.op) ? depth : 0;
  // Without --verify the payload is never read: about a page of slots, as perftest's cycle
  // buffer (measured on rxe: two pages cost 2 % of the 64 B message rate), at least two; a
  // sender's WR i of its post list lands in slot i mod rx_slots (engine/stream_tx.cpp).
  // --verify needs a slot per message that may be unchecked (see the header).
  const std::uint64_t wanted =
      o.verify ? std::uint64_t{depth} + 1 : std::clamp<std::uint64_t>(4096 / l.slot_stride, 2, o.tx_depth);
  l.rx_slots = static_cast<std::uint32_t>(std::min<std::uint64_t>(fit, wanted));
  l.rx_slots = std::max<std::uint32_t>(l.rx_slots, static_cast<std::uint32_t>(min_slots));
  if (o.op == op_kind::send) {
    // SEND lands in whichever posted receive comes next: a pool, not per-peer regions
    const std::uint64_t pool = std::max<std::uint64_t>(2, send_pool_budget / l.slot_stride);
    l.pool_slots = static_cast<std::uint32_t>(std::min<std::uint64_t>(pool, depth));
    l.srq_depth = l.pool_slots;
  }

  if (lat) {
    l.tx_slots = 2;  // the ping source and the pong source of a session
  } else if (o.verify) {
    l.tx_slots = static_cast<std::uint32_t>(std::min<std::uint64_t>(std::max<std::uint64_t>(fit, 1), o.tx_depth));
    l.window = std::min(l.window, l.tx_slots);
    if (o.op == op_kind::write_imm) l.srq_depth = std::min(l.srq_depth, l.rx_slots - 1);
  } else {
    l.tx_slots = 0;      // payload content is irrelevant: every session sends from one slot
    l.shared_rx = true;  // and lands in one region: the same footprint at 8 ranks and at 64 k
  }
  return l;
}

std::uint32_t cq_mod_for(const options& o, std::uint64_t size, std::uint32_t window) {
  std::uint32_t m = o.cq_mod;
  if (m == 0) m = o.post_list > 1 ? o.post_list : (size > 8192 ? 1 : 100);
  return std::clamp<std::uint32_t>(m, 1, std::max<std::uint32_t>(window, 1));
}

std::uint32_t inline_for(const options& o, std::uint32_t device_max) {
  if (o.op == op_kind::read) return 0;
  if (o.inline_size < 0 && o.mode == mode_kind::bw) return 0;
  const std::uint32_t want =
      o.inline_size >= 0 ? static_cast<std::uint32_t>(o.inline_size) : (o.op == op_kind::send ? 236 : 220);
  return std::min(want, device_max);
}

}  // namespace rdmamesh::plan
