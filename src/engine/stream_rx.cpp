// The receiving half of the stream hot loop: completions from the shared receive queue,
// counted per session, checked under --verify, and re-posted in one chained call per batch.
#include <arpa/inet.h>

#include <fmt/format.h>

#include "rdmamesh/engine/stream.hpp"
#include "rdmamesh/util/pattern.hpp"

namespace rdmamesh::engine {

void stream::poll_recv_cq() {
  constexpr int batch = 32;
  ibv_wc wcs[batch];
  const int n = ibv_poll_cq(core_.recv_cq(), batch, wcs);
  if (n < 0) throw std::runtime_error(fmt::format("ibv_poll_cq(recv cq) failed: {}", n));
  polled_ += n;
  reposts_.clear();
  for (int i = 0; i < n; ++i) {
    const ibv_wc& wc = wcs[i];
    reposts_.push_back(wc.wr_id);  // an SRQ receive is consumed even when its QP failed
    const int s = core_.session_of_qp(wc.qp_num);
    if (s < 0) {
      core_.event(
          fmt::format("rank {}: a receive completion named QP {:#x}, which is none of ours", core_.rank(), wc.qp_num));
      continue;
    }
    rx_session& r = rx_[static_cast<std::size_t>(s)];
    if (wc.status != IBV_WC_SUCCESS) {
      fail_rx(r, core_.completion_error(wc, "receive"));
      continue;
    }
    on_recv(r, wc);
  }
  if (!reposts_.empty()) core_.repost(reposts_);
}

void stream::check_payload(rx_session& r, const std::byte* at, std::uint64_t seq) {
  if (auto bad = check_pattern(at, size_, {r.peer, core_.rank(), seq, r.lane})) {
    ++r.verify_errors;
    core_.mismatch(
        fmt::format("verify: rank {} -> rank {} lane {} message {}: byte {} of {} is {:#04x}, expected {:#04x}", r.peer,
                    core_.rank(), r.lane, seq, bad->offset, size_, bad->actual, bad->expected));
  }
}

void stream::on_recv(rx_session& r, const ibv_wc& wc) {
  const std::uint64_t seq = r.received;
  const options& o = core_.opts();
  if (o.verify) {
    const plan::layout& l = core_.layout();
    const std::uint32_t session = static_cast<std::uint32_t>(&r - rx_.data());
    const std::byte* at = nullptr;
    if (o.op == op_kind::write_imm) {
      const std::uint32_t carried = ntohl(wc.imm_data);
      if ((wc.wc_flags & IBV_WC_WITH_IMM) == 0 || carried != static_cast<std::uint32_t>(seq)) {
        ++r.verify_errors;
        core_.mismatch(
            fmt::format("verify: rank {} -> rank {} lane {} message {}: carried sequence number {} (a "
                        "message was lost, duplicated or reordered)",
                        r.peer, core_.rank(), r.lane, seq, carried));
      } else {
        at = core_.buf() + l.rx_offset(session) + l.rx_slot_offset(seq);
      }
    } else {  // SEND: the data sits in the pool slot of the receive that took it
      if (wc.byte_len != size_) {
        ++r.verify_errors;
        core_.mismatch(fmt::format("verify: rank {} -> rank {} lane {} message {}: {} bytes arrived, expected {}",
                                   r.peer, core_.rank(), r.lane, seq, wc.byte_len, size_));
      } else {
        at = core_.buf() + l.pool_slot_offset(static_cast<std::uint32_t>(wc.wr_id));
      }
    }
    if (at != nullptr) check_payload(r, at, seq);
  }
  ++r.received;
  if (r.received == r.limit) r.done = clock::now();
}

}  // namespace rdmamesh::engine
