// The sending half of the stream hot loop: fill each QP's window with lists of WRs to
// rotating slots of the peer's region, and retire them from the send CQ.
#include <arpa/inet.h>

#include <cstring>

#include <fmt/format.h>

#include "rdmamesh/engine/stream.hpp"
#include "rdmamesh/util/pattern.hpp"

namespace rdmamesh::engine {

void stream::prepare_wrs() {
  for (std::size_t i = 0; i < wr_.size(); ++i) {
    sge_[i] = {0, static_cast<std::uint32_t>(size_), core_.lkey()};
    wr_[i] = {};
    wr_[i].next = i + 1 < wr_.size() ? &wr_[i + 1] : nullptr;
    wr_[i].sg_list = &sge_[i];
    wr_[i].num_sge = 1;
    wr_[i].opcode = opcode_;
    wr_[i].send_flags = send_flags_;
  }
  chain_session_ = no_session;
}

// Once per change of session, not per message: WR i of the chain to the session's slot i (both
// sides), its session in every wr_id (a flushed WR names its QP by it; the seq counts only in
// the signaled WR, written per post).
[[gnu::noinline]] void stream::aim_chain(const tx_session& s) {
  const std::uint64_t id = make_wr_id(s.link.session, 0);
  for (std::size_t i = 0; i < wr_.size(); ++i) {
    sge_[i].addr = reinterpret_cast<std::uintptr_t>(s.local_base + s.local_stride * (i % s.local_slots));
    wr_[i].wr_id = id;
    const std::uint64_t slot = s.link.remote_slots ? i % s.link.remote_slots : 0;  // SEND: none
    wr_[i].wr.rdma.remote_addr = s.link.remote_addr + slot * s.link.remote_stride;
    wr_[i].wr.rdma.rkey = s.link.rkey;
  }
  chain_session_ = s.link.session;
}

// One list of n WRs: with --verify the per-message part of each (where: both sides' slots, by
// cursor; which: wr_id, imm, checked by the receiver), the rest written once by prepare_wrs and
// aim_chain (unsignaled; the list's one signaled WR, if any, is marked for this post alone).
// tools/bench-ipm counts this path's instructions per message: what is left to the host on a
// real NIC.
[[gnu::always_inline]] inline bool stream::post_list(tx_session& s, std::uint64_t n, bool signal_last) {
  const std::uint64_t first = s.posted;
  const std::uint64_t id = make_wr_id(s.link.session, 0);
  if (rotate_) [[unlikely]] {
    const bool fill = opcode_ != IBV_WR_RDMA_READ;  // a READ's source is checked when it lands
    const bool imm = opcode_ == IBV_WR_RDMA_WRITE_WITH_IMM;
    std::uint32_t slot = s.remote_slot;
    std::uint32_t local_slot = s.local_slot;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t seq = first + i;
      std::byte* local = s.local_base + s.local_stride * local_slot;
      if (++local_slot == s.local_slots) local_slot = 0;
      if (fill) {
        fill_pattern(local, size_, {core_.rank(), s.link.peer, seq, s.link.lane});
        if (core_.corrupts(s.link.peer, s.link.lane, seq)) local[size_ / 2] ^= std::byte{0xff};
      }
      sge_[i].addr = reinterpret_cast<std::uintptr_t>(local);
      ibv_send_wr& wr = wr_[i];
      wr.wr_id = id | (seq & seq_mask);
      if (imm) wr.imm_data = htonl(static_cast<std::uint32_t>(seq));  // the receiver checks it
      wr.wr.rdma.remote_addr = s.link.remote_addr + slot * s.link.remote_stride;
      wr.wr.rdma.rkey = s.link.rkey;
      if (++slot == s.link.remote_slots) slot = 0;
    }
    s.remote_slot = slot;
    s.local_slot = local_slot;  // (rotate_ holds for the run: the chain is never aimed after this)
  } else if (chain_session_ != s.link.session) [[unlikely]] {
    aim_chain(s);
  }
  // which WR of the list completes (the others are covered by it): the last of those that end
  // a CQ-moderation group, end the round, or (signal_last) end the list
  std::uint64_t signaled = n;  // none
  std::uint64_t next_signal = s.next_signal;
  if (n == 1) {  // -l 1, the default: no division on the way
    const bool group_end = first + 1 == next_signal;
    if (group_end) next_signal += cq_mod_;
    if (group_end || first + 1 == s.limit || signal_last) signaled = 0;
  } else {
    // the list's last group end; no division: with -Q the list's length (perftest's) there is one
    for (; next_signal - 1 - first < n; next_signal += cq_mod_) signaled = next_signal - 1 - first;
    if (const std::uint64_t end = s.limit - 1 - first; end < n)
      signaled = signaled == n ? end : std::max(signaled, end);
    if (signal_last) signaled = n - 1;
  }
  if (signaled < n) {  // its completion retires the WRs up to its seq
    wr_[signaled].send_flags = IBV_SEND_SIGNALED | send_flags_;
    wr_[signaled].wr_id = id | ((first + signaled) & seq_mask);
  }
  // a short list ends early: cut the chain there for this post, and mend it after
  ibv_send_wr* const cut = n < wr_.size() ? wr_[n - 1].next : nullptr;
  if (cut) wr_[n - 1].next = nullptr;
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(s.link.qp, wr_.data(), &bad);
  if (cut) wr_[n - 1].next = cut;
  if (signaled < n) wr_[signaled].send_flags = send_flags_;
  if (rc != 0) [[unlikely]] {
    post_failed(s, n, rc);
    return false;
  }
  s.posted = first + n;
  posted_ += static_cast<int>(n);
  if (signaled < n) s.signaled_upto = first + signaled + 1;
  s.next_signal = next_signal;
  return true;
}

[[gnu::cold, gnu::noinline]] void stream::post_failed(tx_session& s, std::uint64_t n, int rc) {
  fail_tx(s, fmt::format("ibv_post_send(qp={:#x}, wrs={}, len={}, outstanding={}) failed: {}", s.link.qp->qp_num, n,
                         size_, s.posted - s.completed, std::strerror(rc)));
}

bool stream::post_batch(tx_session& s, std::uint64_t n, bool signal_last) {
  return post_list(s, n, signal_last);
}

void stream::post_sends(tx_session& s) {
  const std::uint64_t room_end = s.completed + core_.layout().window;
  const std::uint64_t list = wr_.size();
  for (std::uint32_t k = 0; k < lists_per_pass_; ++k) {  // then back to the CQs (begin_round says why)
    const std::uint64_t n = std::min(list, s.limit - s.posted);
    // whole lists only (as perftest), except the last WRs of an iterations round
    if (n == 0 || s.posted + n > room_end) return;
    if (!post_list(s, n, false)) return;
  }
}

void stream::poll_send_cq() {
  constexpr int batch = 32;
  ibv_wc wcs[batch];
  const int n = ibv_poll_cq(core_.send_cq(), batch, wcs);
  if (n < 0) throw std::runtime_error(fmt::format("ibv_poll_cq(send cq) failed: {}", n));
  polled_ += n;
  const bool check_reads = core_.opts().verify && opcode_ == IBV_WR_RDMA_READ;
  for (int i = 0; i < n; ++i) {
    const ibv_wc& wc = wcs[i];
    if (is_probe(wc.wr_id)) {
      if (wc.status != IBV_WC_SUCCESS)
        fail_tx(tx_[wc.wr_id & ~probe_bit], core_.completion_error(wc, "liveness probe"));
      continue;
    }
    tx_session& s = tx_[wc.wr_id >> seq_bits];
    if (wc.status != IBV_WC_SUCCESS) {
      fail_tx(s, core_.completion_error(wc, "send"));
      continue;
    }
    const std::uint64_t now_completed = s.completed + retired_by(wc.wr_id, s.completed);
    if (check_reads) check_read(s, s.completed, now_completed);
    s.completed = now_completed;
    if (s.completed == s.limit) s.done = clock::now();
    if (s.paced) pace();
  }
}

void stream::pace() {
  const clock::time_point now = clock::now();
  if (now < resume_at_) return;  // WRs in flight completing during a pause
  resume_at_ = now + std::chrono::duration_cast<clock::duration>((now - active_since_) * pause_);
  active_since_ = resume_at_;
}

void stream::check_read(const tx_session& s, std::uint64_t from, std::uint64_t to) {
  const plan::layout& l = core_.layout();
  for (std::uint64_t seq = from; seq < to; ++seq) {
    const std::uint64_t slot = seq % s.link.remote_slots;
    const std::byte* at = core_.buf() + l.tx_offset(s.link.session, seq);
    if (auto bad = check_pattern(at, size_, {s.link.peer, core_.rank(), slot, s.link.lane})) {
      rx_session& r = rx_[s.link.session];  // READ data flows peer -> us: count it at our end
      ++r.verify_errors;
      core_.mismatch(fmt::format(
          "verify: READ rank {} -> rank {} lane {} message {} (slot {}): byte {} of {} is "
          "{:#04x}, expected {:#04x}",
          s.link.peer, core_.rank(), s.link.lane, seq, slot, bad->offset, size_, bad->actual, bad->expected));
    }
  }
}

}  // namespace rdmamesh::engine
