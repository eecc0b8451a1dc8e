// The receiving half of the hot loop: one RECV per incoming WRITE_WITH_IMM, counted per
// peer, checked under --verify, and re-posted at once.
#include <arpa/inet.h>

#include <cstring>

#include <fmt/format.h>

#include "rdmamesh/engine/engine.hpp"
#include "rdmamesh/util/pattern.hpp"

namespace rdmamesh::engine {

void engine::post_recv(server_session& sv) {
  // WRITE_WITH_IMM consumes a RECV but places its data by address: no scatter list needed
  ibv_recv_wr wr{};
  wr.wr_id = sv.index;
  wr.sg_list = nullptr;
  wr.num_sge = 0;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(sv.qp, &wr, &bad); rc != 0) {
    fail_server(sv, fmt::format("ibv_post_recv(qp={:#x}) failed: {}", sv.qp->qp_num, std::strerror(rc)));
  }
}

void engine::poll_recv_cq() {
  constexpr int batch = 32;
  ibv_wc wcs[batch];
  const int n = ibv_poll_cq(recv_cq_, batch, wcs);
  if (n < 0) throw std::runtime_error(fmt::format("ibv_poll_cq(recv cq) failed: {}", n));
  for (int i = 0; i < n; ++i) {
    const ibv_wc& wc = wcs[i];
    server_session& sv = servers_[wc.wr_id];
    if (wc.status != IBV_WC_SUCCESS) {
      fail_server(sv, fmt::format("receive completion failed: {} (status {}, vendor_err {:#x}, qp {:#x})",
                                  ibv_wc_status_str(wc.status), static_cast<int>(wc.status), wc.vendor_err, wc.qp_num));
      continue;
    }
    on_recv(sv, wc);
  }
}

void engine::on_recv(server_session& sv, const ibv_wc& wc) {
  const std::uint64_t seq = sv.received;
  if (opts_.verify) {
    const std::uint32_t carried = ntohl(wc.imm_data);
    if ((wc.wc_flags & IBV_WC_WITH_IMM) == 0 || carried != static_cast<std::uint32_t>(seq)) {
      note_mismatch(sv, fmt::format("verify: rank {} -> rank {} message {}: carried sequence number {} (a message was "
                                    "lost, duplicated or reordered)",
                                    sv.peer, rank_, seq, carried));
    } else {
      const std::byte* at = buf_ + layout_.rx_offset(sv.index) + layout_.rx_slot_offset(seq);
      if (auto bad = check_pattern(at, layout_.msg_size, {sv.peer, rank_, seq})) {
        note_mismatch(sv, byte_mismatch(sv.peer, seq, bad->offset, bad->expected, bad->actual));
      }
    }
  }
  ++sv.received;
  if (!opts_.duration_mode() && sv.received == opts_.iters) sv.done = clock::now();
  post_recv(sv);
}

}  // namespace rdmamesh::engine
