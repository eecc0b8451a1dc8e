// One rank's side of the mesh: device, PD, one buffer under one MR, a send and a receive CQ,
// and one RC QP per peer. Built in RESET/INIT, then connected with the peers' conn_info.
// The engine gets plain handles (peer_link) and never sees these classes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/fabric/buffer.hpp"
#include "rdmamesh/fabric/conn_info.hpp"
#include "rdmamesh/fabric/select.hpp"
#include "rdmamesh/plan/layout.hpp"
#include "rdmamesh/verbs/cq.hpp"
#include "rdmamesh/verbs/mr.hpp"
#include "rdmamesh/verbs/qp.hpp"

namespace rdmamesh::fabric {

// What the engine needs to drive traffic to one peer.
struct peer_link {
  std::uint32_t rank = 0;
  ibv_qp* qp = nullptr;
  std::uint64_t remote_addr = 0;  // the peer's receive region for us
  std::uint32_t rkey = 0;
  std::uint32_t remote_slots = 0;
  std::uint64_t remote_stride = 0;
};

// Device limits recorded for the report.
struct device_limits {
  std::uint32_t max_qp_wr = 0;
  int max_cqe = 0;
  std::uint32_t max_qp_rd_atom = 0;       // READs we accept in flight (responder)
  std::uint32_t max_qp_init_rd_atom = 0;  // READs we may issue in flight (initiator)
  std::uint64_t max_mr_size = 0;
};

class endpoint {
 public:
  endpoint(const options& o, const plan::layout& l, const port_choice& port, std::uint32_t rank, std::uint32_t n_ranks);
  ~endpoint();
  endpoint(const endpoint&) = delete;
  endpoint& operator=(const endpoint&) = delete;

  const port_choice& port() const { return port_; }
  const device_limits& limits() const { return limits_; }

  // One entry per rank (our own entry is left zero), for MPI_Alltoall.
  std::vector<conn_info> local_infos() const;
  // `remote[r]` is what rank r sent us. Validates, then takes every QP to RTS.
  void connect(std::span<const conn_info> remote);

  std::span<const peer_link> peers() const { return links_; }
  std::byte* buffer() const { return buf_->data(); }
  std::uint32_t lkey() const { return mr_->lkey(); }
  ibv_cq* send_cq() const { return send_cq_->get(); }
  ibv_cq* recv_cq() const { return recv_cq_->get(); }

 private:
  options opts_;
  plan::layout layout_;
  port_choice port_;
  std::uint32_t rank_;
  std::uint32_t n_ranks_;
  device_limits limits_;
  // Declaration order is teardown order reversed: QPs go first, then MR, CQs, PD, device.
  verbs::context_ptr ctx_;
  verbs::pd_ptr pd_;
  verbs::cq_ptr send_cq_;
  verbs::cq_ptr recv_cq_;
  std::unique_ptr<host_buffer> buf_;
  std::unique_ptr<verbs::memory_region> mr_;
  std::vector<std::unique_ptr<verbs::queue_pair>> qps_;  // by peer index
  std::vector<std::uint32_t> psns_;
  std::vector<peer_link> links_;
};

}  // namespace rdmamesh::fabric
