// The sending half of the hot loop: fill each QP's window with WRITE(_WITH_IMM)s to
// rotating slots of the peer's region, and retire them from the send CQ.
#include <arpa/inet.h>

#include <cstring>

#include <fmt/format.h>

#include "rdmamesh/engine/engine.hpp"
#include "rdmamesh/util/pattern.hpp"

namespace rdmamesh::engine {
namespace {

// wr_id = session index << 40 | low 40 bits of the WR's sequence number. A completion retires
// its WR and, RC being in order, every earlier one.
constexpr int seq_bits = 40;
constexpr std::uint64_t seq_mask = (std::uint64_t{1} << seq_bits) - 1;

}  // namespace

void engine::post_sends(client_session& s) {
  const bool imm = opts_.op == op_kind::write_imm;
  while (s.posted - s.completed < layout_.window && s.posted < s.limit) {
    const std::uint64_t seq = s.posted;
    std::byte* local = buf_ + layout_.tx_offset(s.index, seq);
    if (opts_.verify) fill_pattern(local, layout_.msg_size, {rank_, s.link.rank, seq});

    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(local);
    sge.length = static_cast<std::uint32_t>(layout_.msg_size);
    sge.lkey = lkey_;
    ibv_send_wr wr{};
    wr.wr_id = (std::uint64_t{s.index} << seq_bits) | (seq & seq_mask);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(static_cast<std::uint32_t>(seq));
    wr.wr.rdma.remote_addr = s.link.remote_addr + (seq % s.link.remote_slots) * s.link.remote_stride;
    wr.wr.rdma.rkey = s.link.rkey;
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(s.link.qp, &wr, &bad); rc != 0) {
      fail_client(s, fmt::format("ibv_post_send(qp={:#x}, opcode={}, len={}, outstanding={}) failed: {}",
                                 s.link.qp->qp_num, imm ? "RDMA_WRITE_WITH_IMM" : "RDMA_WRITE", sge.length,
                                 s.posted - s.completed, std::strerror(rc)));
      return;
    }
    ++s.posted;
  }
}

void engine::poll_send_cq() {
  constexpr int batch = 32;
  ibv_wc wcs[batch];
  const int n = ibv_poll_cq(send_cq_, batch, wcs);
  if (n < 0) throw std::runtime_error(fmt::format("ibv_poll_cq(send cq) failed: {}", n));
  for (int i = 0; i < n; ++i) {
    const ibv_wc& wc = wcs[i];
    client_session& s = clients_[wc.wr_id >> seq_bits];
    if (wc.status != IBV_WC_SUCCESS) {
      fail_client(s, fmt::format("send completion failed: {} (status {}, vendor_err {:#x}, qp {:#x})",
                                 ibv_wc_status_str(wc.status), static_cast<int>(wc.status), wc.vendor_err, wc.qp_num));
      continue;
    }
    const std::uint64_t covered = ((wc.wr_id & seq_mask) - (s.completed & seq_mask)) & seq_mask;
    s.completed += covered + 1;
    if (s.completed == s.limit) s.done = clock::now();
  }
}

}  // namespace rdmamesh::engine
