// RC QP creation and the INIT/RTR/RTS transitions; each error lists the attributes it tried.
#include "rdmamesh/verbs/qp.hpp"

#include <fmt/format.h>

#include "rdmamesh/verbs/error.hpp"

namespace rdmamesh::verbs {

queue_pair::queue_pair(pd_ptr pd, cq_ptr send_cq, cq_ptr recv_cq, srq_ptr srq, const qp_caps& caps)
    : pd_(std::move(pd)), send_cq_(std::move(send_cq)), recv_cq_(std::move(recv_cq)), srq_(std::move(srq)) {
  ibv_qp_init_attr attr{};
  attr.send_cq = send_cq_->get();
  attr.recv_cq = recv_cq_->get();
  attr.srq = srq_ ? srq_->get() : nullptr;
  attr.qp_type = IBV_QPT_RC;
  attr.sq_sig_all = 0;
  attr.cap.max_send_wr = caps.max_send_wr;
  attr.cap.max_recv_wr = srq_ ? 0 : caps.max_recv_wr;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = caps.max_inline_data;
  qp_.reset(check_ptr(ibv_create_qp(pd_->get(), &attr),
                      fmt::format("ibv_create_qp(type=RC, max_send_wr={}, max_recv_wr={}, max_inline_data={}, srq={})",
                                  caps.max_send_wr, attr.cap.max_recv_wr, caps.max_inline_data, srq_ != nullptr)));
  caps_ = {attr.cap.max_send_wr, attr.cap.max_recv_wr, attr.cap.max_inline_data};
}

void queue_pair::deleter::operator()(ibv_qp* q) const noexcept {
  if (int rc = ibv_destroy_qp(q); rc != 0) fmt::print(stderr, "rdmamesh: warning: ibv_destroy_qp failed ({})\n", rc);
}

void to_init(const queue_pair& qp, int port, int access) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = static_cast<std::uint8_t>(port);
  a.qp_access_flags = static_cast<unsigned>(access);
  check_rc(ibv_modify_qp(qp.get(), &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
           fmt::format("ibv_modify_qp(qp={:#x}, state=INIT, port={}, access={:#x})", qp.qp_num(), port, access));
}

void to_rtr(const queue_pair& qp, const rtr_params& p) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = p.path_mtu;
  a.dest_qp_num = p.remote.qp_num;
  a.rq_psn = p.remote.psn;
  a.max_dest_rd_atomic = p.max_dest_rd_atomic;
  a.min_rnr_timer = p.min_rnr_timer;
  a.ah_attr.dlid = p.remote.lid;
  a.ah_attr.sl = 0;
  a.ah_attr.src_path_bits = 0;
  a.ah_attr.port_num = static_cast<std::uint8_t>(p.port);
  if (p.remote.use_grh) {
    a.ah_attr.is_global = 1;
    std::copy(p.remote.gid.begin(), p.remote.gid.end(), a.ah_attr.grh.dgid.raw);
    a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(p.sgid_index);
    a.ah_attr.grh.hop_limit = 64;
  }
  check_rc(ibv_modify_qp(qp.get(), &a,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
           fmt::format("ibv_modify_qp(qp={:#x}, state=RTR, dest_qp={:#x}, rq_psn={:#x}, path_mtu={}, dlid={}, "
                       "grh={}, sgid_index={}, max_dest_rd_atomic={})",
                       qp.qp_num(), p.remote.qp_num, p.remote.psn, to_string(p.path_mtu), p.remote.lid,
                       p.remote.use_grh, p.sgid_index, p.max_dest_rd_atomic));
}

void to_rts(const queue_pair& qp, const rts_params& p) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = p.sq_psn;
  a.timeout = p.timeout;
  a.retry_cnt = p.retry_cnt;
  a.rnr_retry = p.rnr_retry;
  a.max_rd_atomic = p.max_rd_atomic;
  check_rc(ibv_modify_qp(qp.get(), &a,
                         IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                             IBV_QP_MAX_QP_RD_ATOMIC),
           fmt::format("ibv_modify_qp(qp={:#x}, state=RTS, sq_psn={:#x}, timeout={}, retry_cnt={}, rnr_retry={}, "
                       "max_rd_atomic={})",
                       qp.qp_num(), p.sq_psn, p.timeout, p.retry_cnt, p.rnr_retry, p.max_rd_atomic));
}

void to_reset(const queue_pair& qp) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RESET;
  check_rc(ibv_modify_qp(qp.get(), &a, IBV_QP_STATE), fmt::format("ibv_modify_qp(qp={:#x}, state=RESET)", qp.qp_num()));
}

void to_error(const queue_pair& qp) noexcept {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_ERR;
  ibv_modify_qp(qp.get(), &a, IBV_QP_STATE);
}

std::uint32_t probe_max_inline(const pd_ptr& pd, const cq_ptr& cq, std::uint32_t ceiling) {
  for (std::uint32_t want = ceiling; want > 0; want /= 2) {
    ibv_qp_init_attr attr{};
    attr.send_cq = cq->get();
    attr.recv_cq = cq->get();
    attr.qp_type = IBV_QPT_RC;
    attr.cap.max_send_wr = 1;
    attr.cap.max_recv_wr = 1;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    attr.cap.max_inline_data = want;
    if (ibv_qp* qp = ibv_create_qp(pd->get(), &attr)) {
      const std::uint32_t granted = attr.cap.max_inline_data;
      ibv_destroy_qp(qp);
      return std::max(granted, want);
    }
  }
  return 0;
}

const char* to_string(ibv_mtu mtu) {
  switch (mtu) {
    case IBV_MTU_256: return "256";
    case IBV_MTU_512: return "512";
    case IBV_MTU_1024: return "1024";
    case IBV_MTU_2048: return "2048";
    case IBV_MTU_4096: return "4096";
  }
  return "?";
}

int mtu_bytes(ibv_mtu mtu) {
  return 128 << static_cast<int>(mtu);
}

}  // namespace rdmamesh::verbs
