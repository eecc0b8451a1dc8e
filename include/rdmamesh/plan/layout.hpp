// How one rank's registered buffer is carved up: a receive region per peer (where that peer's
// messages land, rotating through slots) and a transmit region per peer (where payloads come
// from). Pure arithmetic, so the rules that keep --verify sound are unit-tested.
#pragma once

#include <cstdint>

#include "rdmamesh/cli/options.hpp"

namespace rdmamesh::plan {

// Peers of rank `me` are the other ranks; peer slots are numbered 0..n-2 skipping `me`.
constexpr std::uint32_t peer_index(std::uint32_t me, std::uint32_t peer) {
  return peer < me ? peer : peer - 1;
}
constexpr std::uint32_t peer_rank(std::uint32_t me, std::uint32_t index) {
  return index < me ? index : index + 1;
}

struct layout {
  std::uint32_t n_peers = 0;
  std::uint64_t msg_size = 0;
  std::uint64_t slot_stride = 0;  // bytes between slot starts (aligned)
  std::uint32_t rx_slots = 0;     // slots in each peer's receive region
  std::uint32_t tx_slots = 0;     // slots in each peer's transmit region
  std::uint32_t rx_depth = 0;     // receives posted per QP (write_imm)
  std::uint32_t window = 0;       // outstanding WRs per QP

  std::uint64_t rx_region_bytes() const { return slot_stride * rx_slots; }
  std::uint64_t tx_region_bytes() const { return slot_stride * tx_slots; }
  std::uint64_t total_bytes() const { return (rx_region_bytes() + tx_region_bytes()) * n_peers; }

  std::uint64_t rx_offset(std::uint32_t peer_idx) const { return rx_region_bytes() * peer_idx; }
  std::uint64_t tx_offset(std::uint32_t peer_idx, std::uint64_t seq) const {
    return rx_region_bytes() * n_peers + tx_region_bytes() * peer_idx + slot_stride * (seq % tx_slots);
  }
  // Message `seq` of a pair lands in this slot of the receiver's region for that pair.
  std::uint64_t rx_slot_offset(std::uint64_t seq) const { return slot_stride * (seq % rx_slots); }
};

// Default receive memory per peer when --peer-buffer is not given (at least two slots).
inline constexpr std::uint64_t default_peer_buffer = 16ULL << 20;

// Slots: as many as fit in the peer buffer, up to what the windows can keep busy. With --verify
// a slot must not be rewritten while the receiver may still check it: for write_imm a sender can
// run at most rx_depth messages ahead of the receiver's polling (each needs a posted RECV) plus
// one being placed, so rx_slots > rx_depth; the sender reuses a tx slot only after its WR
// completed, so window <= tx_slots.
layout make_layout(const options& o, std::uint32_t n_ranks);

}  // namespace rdmamesh::plan
