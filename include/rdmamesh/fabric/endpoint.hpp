// One rank's side of the mesh: device, PD, one buffer under one MR, a send CQ, a receive CQ,
// one shared receive queue, and -q RC QPs per peer. Built in INIT, then connected with the
// peers' conn_info. The engine gets plain handles (session_link) and never sees these classes.
// With --connect round it holds only the QPs of the current round's partners: between rounds
// each QP is re-targeted (RESET, INIT, then RTR/RTS with the new partner's info), made only
// when the round needs more than the last one, and destroyed when it needs fewer.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/fabric/buffer.hpp"
#include "rdmamesh/fabric/conn_info.hpp"
#include "rdmamesh/fabric/select.hpp"
#include "rdmamesh/plan/layout.hpp"
#include "rdmamesh/util/fault.hpp"
#include "rdmamesh/verbs/cq.hpp"
#include "rdmamesh/verbs/mr.hpp"
#include "rdmamesh/verbs/qp.hpp"
#include "rdmamesh/verbs/srq.hpp"

namespace rdmamesh::fabric {

// What the engine needs to drive one QP (a session) to one peer.
struct session_link {
  std::uint32_t peer = 0;         // rank
  std::uint32_t lane = 0;         // which of the peer's -q QPs
  std::uint32_t session = 0;      // peer index * qps + lane
  ibv_qp* qp = nullptr;           // null: not connected (--connect round: not a partner this round)
  std::uint64_t remote_addr = 0;  // the peer's region for this session
  std::uint32_t rkey = 0;
  std::uint32_t remote_slots = 0;
  std::uint64_t remote_stride = 0;
};

// Device limits and derived data-path settings, recorded for the report.
struct device_limits {
  std::uint32_t max_qp_wr = 0;
  std::uint32_t max_srq_wr = 0;
  int max_cqe = 0;
  std::uint32_t max_qp_rd_atom = 0;       // READs we accept in flight (responder)
  std::uint32_t max_qp_init_rd_atom = 0;  // READs we may issue in flight (initiator)
  std::uint64_t max_mr_size = 0;
  std::uint32_t max_inline = 0;  // probed
};

// Seconds the endpoint's own setup steps took on this rank (issue: where setup time goes).
struct endpoint_times {
  double device_s = 0;   // ibv_open_device, PD, CQs, inline probe
  double buffers_s = 0;  // buffer allocation and MR registration
  double qps_s = 0;      // QP creation and RESET -> INIT
  double connect_s = 0;  // INIT -> RTR -> RTS
};

// What this rank holds on its device.
struct endpoint_resources {
  std::uint64_t qps = 0;
  std::uint64_t cq_entries = 0;
  std::uint64_t registered_bytes = 0;
};

class endpoint {
 public:
  // The buffer goes on NUMA node `numa` through `topo` (either may be absent);
  // `ranks_on_device` ranks of this node use the same device (its limits are shared).
  endpoint(const options& o, const plan::layout& l, const port_choice& port, std::uint32_t rank, std::uint32_t n_ranks,
           topology_ptr topo = nullptr, int numa = -1, std::uint32_t ranks_on_device = 1);
  ~endpoint();
  endpoint(const endpoint&) = delete;
  endpoint& operator=(const endpoint&) = delete;

  const port_choice& port() const { return port_; }
  const device_limits& limits() const { return limits_; }
  std::uint32_t inline_size() const { return inline_size_; }  // effective threshold
  const endpoint_times& times() const { return times_; }
  endpoint_resources resources() const;

  // qps entries per rank (our own rank's left zero), for MPI_Alltoall with qps per rank.
  std::vector<conn_info> local_infos() const;
  // `remote[r * qps + lane]` is what rank r sent us for that lane. Validates, then RTS.
  void connect(std::span<const conn_info> remote, const std::optional<fault>& injected = std::nullopt);

  // --connect round. QPs in INIT for exactly these partners (sorted ranks), re-targeting the
  // last round's QPs first; their infos partner-major, qps per partner, for the exchange.
  // A QP is re-targeted only to a partner at the address its last partner had (`route_of`,
  // by rank: SoftRoCE keeps an RC QP's route across RESET, so a QP moved to another node's
  // address would still send to the old one); otherwise it is destroyed and a new one made.
  void set_routes(std::vector<std::string> route_of) { route_of_ = std::move(route_of); }
  std::vector<conn_info> round_infos(std::span<const std::uint32_t> partners);
  // The partners' infos in the same order: RTR/RTS. A session that cannot connect stays
  // unconnected (null qp) and its failure comes back as one line; the others go on.
  std::vector<std::string> connect_round(std::span<const std::uint32_t> partners, std::span<const conn_info> remote,
                                         const std::optional<fault>& injected = std::nullopt);

  std::span<const session_link> sessions() const { return links_; }
  std::byte* buffer() const { return buf_->data(); }
  bool buffer_on_numa() const { return buf_->on_numa_node(); }
  std::uint32_t lkey() const { return mr_->lkey(); }
  ibv_cq* send_cq() const { return send_cq_->get(); }
  ibv_cq* recv_cq() const { return recv_cq_->get(); }
  ibv_srq* srq() const { return srq_ ? srq_->get() : nullptr; }

 private:
  options opts_;
  plan::layout layout_;
  port_choice port_;
  std::uint32_t rank_;
  std::uint32_t n_ranks_;
  device_limits limits_;
  std::uint32_t inline_size_ = 0;
  endpoint_times times_;
  // Declaration order is teardown order reversed: QPs go first, then SRQ, MR, CQs, PD, device.
  verbs::context_ptr ctx_;
  verbs::pd_ptr pd_;
  verbs::cq_ptr send_cq_;
  verbs::cq_ptr recv_cq_;
  std::unique_ptr<host_buffer> buf_;
  std::unique_ptr<verbs::memory_region> mr_;
  verbs::srq_ptr srq_;
  std::vector<std::unique_ptr<verbs::queue_pair>> qps_;  // by session index; null: none
  std::vector<std::uint32_t> psns_;
  std::vector<session_link> links_;  // by session index

  std::mt19937 psn_gen_;
  bool recreate_ = false;              // RDMAMESH_BENCH_RECREATE (benchmark only): new QPs each round
  std::vector<std::string> route_of_;  // by rank: the address a QP to it sends to
  std::vector<std::string> route_;     // by session: the address of the QP's last partner

  std::uint64_t send_cqe_ = 0, recv_cqe_ = 0;  // CQ sizes, checked against the device

  void check_limits(std::uint32_t ranks_on_device);
  void open_queues();
  void register_buffer(topology_ptr topo, int numa);
  void make_qps();
  std::unique_ptr<verbs::queue_pair> make_qp() const;
  std::uint32_t new_psn();
  conn_info info_for(std::uint32_t session) const;
  void connect_session(std::uint32_t session, const conn_info& r, const std::optional<fault>& injected);
};

}  // namespace rdmamesh::fabric
