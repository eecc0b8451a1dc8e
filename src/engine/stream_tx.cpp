// The sending half of the stream hot loop: fill each QP's window with lists of WRs to
// rotating slots of the peer's region, and retire them from the send CQ.
#include <arpa/inet.h>

#include <cstring>

#include <fmt/format.h>

#include "rdmamesh/engine/stream.hpp"
#include "rdmamesh/util/pattern.hpp"

namespace rdmamesh::engine {

void stream::post_sends(tx_session& s) {
  const std::uint64_t room_end = s.completed + core_.layout().window;
  const std::uint64_t list = wr_.size();
  // A few lists per pass, then back to the CQs: a mesh rank also receives, and its peers'
  // messages need re-posted receives (on software RDMA a post can carry milliseconds of work).
  constexpr int lists_per_pass = 8;
  for (int k = 0; k < lists_per_pass; ++k) {
    const std::uint64_t n = std::min(list, s.limit - s.posted);
    // whole lists only (as perftest), except the last WRs of an iterations round
    if (n == 0 || s.posted + n > room_end) return;
    if (!post_batch(s, n, false)) return;
  }
}

bool stream::post_batch(tx_session& s, std::uint64_t n, bool signal_last) {
  const plan::layout& l = core_.layout();
  const bool verify = core_.opts().verify;
  const bool read = opcode_ == IBV_WR_RDMA_READ;
  const auto len = static_cast<std::uint32_t>(size_);
  std::uint64_t signaled_upto = s.signaled_upto;
  std::uint64_t next_signal = s.next_signal;
  std::uint32_t slot = s.remote_slot;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t seq = s.posted + i;
    std::byte* local = core_.buf() + l.tx_offset(s.link.session, seq);
    if (verify && !read) {
      fill_pattern(local, size_, {core_.rank(), s.link.peer, seq, s.link.lane});
      if (core_.corrupts(s.link.peer, s.link.lane, seq)) local[size_ / 2] ^= std::byte{0xff};
    }
    const bool group_end = seq + 1 == next_signal;
    if (group_end) next_signal += cq_mod_;
    const bool signaled = group_end || seq + 1 == s.limit || (signal_last && i + 1 == n);
    if (signaled) signaled_upto = seq + 1;

    ibv_sge& sge = sge_[i];
    sge.addr = reinterpret_cast<std::uintptr_t>(local);
    sge.length = len;
    sge.lkey = core_.lkey();
    ibv_send_wr& wr = wr_[i];
    wr.wr_id = make_wr_id(s.link.session, seq);
    wr.next = i + 1 < n ? &wr_[i + 1] : nullptr;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode_;
    wr.send_flags = (signaled ? IBV_SEND_SIGNALED : 0) | send_flags_;
    wr.imm_data = htonl(static_cast<std::uint32_t>(seq));
    wr.wr.rdma.remote_addr = s.link.remote_addr + slot * s.link.remote_stride;
    wr.wr.rdma.rkey = s.link.rkey;
    if (++slot == s.link.remote_slots) slot = 0;
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(s.link.qp, wr_.data(), &bad); rc != 0) {
    fail_tx(s, fmt::format("ibv_post_send(qp={:#x}, wrs={}, len={}, outstanding={}) failed: {}", s.link.qp->qp_num, n,
                           len, s.posted - s.completed, std::strerror(rc)));
    return false;
  }
  s.posted += n;
  posted_ += static_cast<int>(n);
  s.signaled_upto = signaled_upto;
  s.next_signal = next_signal;
  s.remote_slot = slot;
  return true;
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
