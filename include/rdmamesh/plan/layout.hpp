// How one rank's registered buffer is carved up, and the per-size data-path settings.
// Pure arithmetic, so the rules that keep --verify sound are unit-tested.
//
// A session is one QP: peer index p, lane l (of -q), session index p * qps + l.
//   rx region  per session: slots the peer's WRITEs land in (and READs read from); one region
//              shared by every session when nothing reads what lands (bandwidth without
//              --verify), so registered memory does not grow with N
//   tx region  one slot shared by every session, or per session when payloads must differ
//              (--verify: each in-flight WR its own; --mode lat: ping and pong sources)
//   pool       SEND only: the receive buffers posted in the shared receive queue (SRQ)
#pragma once

#include <cstdint>

#include "rdmamesh/cli/options.hpp"

namespace rdmamesh::plan {

// Peers of rank `me` are the other ranks; peer indices are 0..n-2, skipping `me`.
constexpr std::uint32_t peer_index(std::uint32_t me, std::uint32_t peer) {
  return peer < me ? peer : peer - 1;
}
constexpr std::uint32_t peer_rank(std::uint32_t me, std::uint32_t index) {
  return index < me ? index : index + 1;
}

struct layout {
  std::uint32_t n_peers = 0;
  std::uint32_t qps = 1;          // lanes (QPs) per peer
  std::uint64_t msg_size = 0;     // the largest message of the run
  std::uint64_t slot_stride = 0;  // bytes between slot starts (aligned)
  std::uint32_t rx_slots = 0;     // slots in each session's receive region
  std::uint32_t tx_slots = 0;     // slots in each session's transmit region (0: one shared slot)
  std::uint32_t pool_slots = 0;   // SEND receive buffers
  std::uint32_t srq_depth = 0;    // receives kept posted in the SRQ (0: the op needs none)
  std::uint32_t window = 0;       // outstanding WRs per QP
  bool shared_rx = false;         // one receive region for every session (content never read)

  std::uint32_t sessions() const { return n_peers * qps; }
  std::uint32_t rx_regions() const { return shared_rx ? 1 : sessions(); }
  std::uint64_t rx_region_bytes() const { return slot_stride * rx_slots; }
  std::uint64_t rx_bytes() const { return rx_region_bytes() * rx_regions(); }
  std::uint64_t tx_bytes() const { return slot_stride * (tx_slots ? std::uint64_t{tx_slots} * sessions() : 1); }
  std::uint64_t pool_offset() const { return rx_bytes() + tx_bytes(); }
  std::uint64_t total_bytes() const { return pool_offset() + slot_stride * pool_slots; }

  std::uint64_t rx_offset(std::uint32_t session) const { return shared_rx ? 0 : rx_region_bytes() * session; }
  // Message `seq` of a session lands in this slot of the receiver's region for the session.
  std::uint64_t rx_slot_offset(std::uint64_t seq) const { return slot_stride * (seq % rx_slots); }
  std::uint64_t tx_offset(std::uint32_t session, std::uint64_t seq) const {
    const std::uint64_t base = rx_bytes();
    return tx_slots ? base + slot_stride * (std::uint64_t{tx_slots} * session + seq % tx_slots) : base;
  }
  std::uint64_t pool_slot_offset(std::uint32_t slot) const { return pool_offset() + slot_stride * slot; }
};

// Receive memory per peer when --peer-buffer is not given: 16 MiB, less as N grows so a rank
// stays near 256 MiB, never less than what the run needs (one slot per lane, two with --verify).
std::uint64_t default_peer_budget(std::uint32_t n_peers);

// Receives the shared receive queue keeps posted: -r, or by default 512 (perftest's) or, when
// more, one window per QP that may send to this rank (a shared queue must cover every sender),
// up to 16384. WRITE_WITH_IMM receives carry no buffer, so depth is cheap.
std::uint32_t srq_depth_for(const options& o, std::uint32_t sessions);

// Slots and depths for the run's largest size. Without --verify about a page of slots
// (perftest's footprint), WR i of a post list in slot i. With --verify a slot is never rewritten while
// it may still be checked: a sender runs at most srq_depth messages ahead of the receiver's
// polling (each consumes a posted receive) plus one being placed, so rx_slots > srq_depth; a
// sender refills a tx slot only after its WR completed, so window <= tx_slots.
layout make_layout(const options& o, std::uint32_t n_ranks);

// Per message size, as perftest: every 100th WR signaled, every one above 8 KiB (coarse
// completions would blur the measured interval), the post list when one is used; never more
// than the window, so the send queue cannot fill with unsignaled WRs.
std::uint32_t cq_mod_for(const options& o, std::uint64_t size, std::uint32_t window);

// Inline threshold, as perftest unless -I says otherwise: 220 B for writes and 236 B for SEND
// in latency mode, none in bandwidth mode (measured on rxe: inline costs 9 % of the 64 B
// message rate) and none for READ; capped by what the device grants.
std::uint32_t inline_for(const options& o, std::uint32_t device_max);

}  // namespace rdmamesh::plan
