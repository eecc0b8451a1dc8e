// RC queue pair and its state changes (RESET -> INIT -> RTR -> RTS, or -> ERROR), as free
// functions over plain parameter structs, so the connect step reads like the spec.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "rdmamesh/verbs/cq.hpp"
#include "rdmamesh/verbs/pd.hpp"
#include "rdmamesh/verbs/srq.hpp"

namespace rdmamesh::verbs {

struct qp_caps {
  std::uint32_t max_send_wr = 0;
  std::uint32_t max_recv_wr = 0;
  std::uint32_t max_inline_data = 0;
};

class queue_pair {
 public:
  // An RC QP in RESET. `send_cq` and `recv_cq` may be the same queue; with an `srq` the QP
  // takes its receives from it and max_recv_wr is ignored.
  queue_pair(pd_ptr pd, cq_ptr send_cq, cq_ptr recv_cq, srq_ptr srq, const qp_caps& caps);
  ibv_qp* get() const { return qp_.get(); }
  std::uint32_t qp_num() const { return qp_->qp_num; }
  const qp_caps& caps() const { return caps_; }  // as granted by the device

 private:
  struct deleter {
    void operator()(ibv_qp* q) const noexcept;
  };
  pd_ptr pd_;
  cq_ptr send_cq_;
  cq_ptr recv_cq_;
  srq_ptr srq_;
  std::unique_ptr<ibv_qp, deleter> qp_;  // last: destroyed before the CQs and PD it uses
  qp_caps caps_;
};

struct remote_endpoint {
  std::uint32_t qp_num = 0;
  std::uint32_t psn = 0;
  std::uint16_t lid = 0;
  std::array<std::uint8_t, 16> gid{};
  bool use_grh = false;  // RoCE, or IB across subnets
};

struct rtr_params {
  int port = 1;
  int sgid_index = 0;
  ibv_mtu path_mtu = IBV_MTU_1024;
  std::uint8_t max_dest_rd_atomic = 1;  // READs the peer may have in flight against us
  std::uint8_t min_rnr_timer = 12;      // 0.64 ms before a peer retries a receive-not-ready
  remote_endpoint remote;
};

struct rts_params {
  std::uint32_t sq_psn = 0;
  std::uint8_t max_rd_atomic = 1;  // READs we may have in flight
  std::uint8_t timeout = 14;       // 4.096 us * 2^14 = 67 ms per transport retry
  // 6, not 7: SoftRoCE treats a retry_cnt of 7 like rnr_retry's 7 and retries forever, so a
  // dead peer would never surface as retry-exceeded (IB hardware: 6 or 7 retries, all the same)
  std::uint8_t retry_cnt = 6;
  std::uint8_t rnr_retry = 7;  // 7 = retry forever: a slow receiver is backpressure, not failure
};

void to_init(const queue_pair& qp, int port, int access);
void to_rtr(const queue_pair& qp, const rtr_params& p);
void to_rts(const queue_pair& qp, const rts_params& p);
void to_error(const queue_pair& qp) noexcept;  // flushes outstanding WRs; best effort
// Any state -> RESET: the QP forgets its peer and its queues (--connect round re-targets it).
void to_reset(const queue_pair& qp);

// The largest max_inline_data the device grants an RC QP (it has no attribute for it): the
// result of creating throwaway QPs, halving from `ceiling` until one is accepted.
std::uint32_t probe_max_inline(const pd_ptr& pd, const cq_ptr& cq, std::uint32_t ceiling = 1024);

const char* to_string(ibv_mtu mtu);
int mtu_bytes(ibv_mtu mtu);

}  // namespace rdmamesh::verbs
