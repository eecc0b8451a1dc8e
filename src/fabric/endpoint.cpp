// Building and connecting one rank's QPs. Limits are checked against the device before
// anything large is allocated, so a bad flag fails fast with the limit it broke.
#include "rdmamesh/fabric/endpoint.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "rdmamesh/util/error.hpp"
#include "rdmamesh/util/units.hpp"
#include "rdmamesh/verbs/error.hpp"

namespace rdmamesh::fabric {
namespace {

constexpr int access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

std::uint64_t memlock_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return rl.rlim_cur;
}

}  // namespace

endpoint::endpoint(const options& o, const plan::layout& l, const port_choice& port, std::uint32_t rank,
                   std::uint32_t n_ranks)
    : opts_(o), layout_(l), port_(port), rank_(rank), n_ranks_(n_ranks) {
  ctx_ = std::make_shared<verbs::context>(port_.device);
  const ibv_device_attr& da = ctx_->device_attr();
  limits_.max_qp_wr = static_cast<std::uint32_t>(da.max_qp_wr);
  limits_.max_cqe = da.max_cqe;
  limits_.max_qp_rd_atom = static_cast<std::uint32_t>(da.max_qp_rd_atom);
  limits_.max_qp_init_rd_atom = static_cast<std::uint32_t>(da.max_qp_init_rd_atom);
  limits_.max_mr_size = da.max_mr_size;

  if (o.tx_depth > limits_.max_qp_wr) {
    throw usage_error(
        fmt::format("--tx-depth {} exceeds {}'s max_qp_wr {}; lower -t", o.tx_depth, port_.device, limits_.max_qp_wr));
  }
  if (o.rx_depth > limits_.max_qp_wr) {
    throw usage_error(
        fmt::format("--rx-depth {} exceeds {}'s max_qp_wr {}; lower -r", o.rx_depth, port_.device, limits_.max_qp_wr));
  }
  if (l.total_bytes() > limits_.max_mr_size) {
    throw usage_error(fmt::format("the buffer of {} bytes exceeds {}'s max_mr_size {}; lower --size or --peer-buffer",
                                  l.total_bytes(), port_.device, limits_.max_mr_size));
  }
  const bool receives = receiver_sees_messages(o.op);
  const std::uint64_t send_cqe = std::uint64_t{l.n_peers} * l.window;
  const std::uint64_t recv_cqe = receives ? std::uint64_t{l.n_peers} * l.rx_depth : 1;
  if (std::max(send_cqe, recv_cqe) > static_cast<std::uint64_t>(limits_.max_cqe)) {
    throw usage_error(fmt::format("{} peers x {} needs a CQ of {} entries but {} allows {}; lower {}", l.n_peers,
                                  send_cqe >= recv_cqe ? "--tx-depth" : "--rx-depth", std::max(send_cqe, recv_cqe),
                                  port_.device, limits_.max_cqe, send_cqe >= recv_cqe ? "-t" : "-r"));
  }

  pd_ = std::make_shared<verbs::protection_domain>(ctx_);
  send_cq_ = std::make_shared<verbs::completion_queue>(ctx_, static_cast<int>(std::max<std::uint64_t>(send_cqe, 1)));
  recv_cq_ = std::make_shared<verbs::completion_queue>(ctx_, static_cast<int>(std::max<std::uint64_t>(recv_cqe, 1)));

  buf_ = std::make_unique<host_buffer>(l.total_bytes());
  try {
    mr_ = std::make_unique<verbs::memory_region>(pd_, buf_->data(), buf_->size(), access_flags);
  } catch (const verbs::verbs_error& e) {
    const std::uint64_t limit = memlock_limit();
    if (e.code().value() == ENOMEM && limit < buf_->size()) {
      throw usage_error(
          fmt::format("cannot register {} bytes: RLIMIT_MEMLOCK is {} bytes; raise it with `ulimit -l "
                      "unlimited` (or lower --size/--peer-buffer)",
                      buf_->size(), limit));
    }
    throw;
  }

  std::random_device rd;
  std::mt19937 gen(rd());
  const verbs::qp_caps caps{l.window, receives ? l.rx_depth : 1, 0};
  for (std::uint32_t i = 0; i < l.n_peers; ++i) {
    auto qp = std::make_unique<verbs::queue_pair>(pd_, send_cq_, recv_cq_, caps);
    verbs::to_init(*qp, port_.port, access_flags);
    qps_.push_back(std::move(qp));
    psns_.push_back(gen() & 0xffffff);
  }
}

endpoint::~endpoint() {
  // QPs hold references to the CQs and PD; release them before the rest.
  qps_.clear();
}

std::vector<conn_info> endpoint::local_infos() const {
  std::vector<conn_info> out(n_ranks_);
  for (std::uint32_t i = 0; i < layout_.n_peers; ++i) {
    conn_info& c = out[plan::peer_rank(rank_, i)];
    c.magic = conn_info_magic;
    c.qp_num = qps_[i]->qp_num();
    c.psn = psns_[i];
    c.rkey = mr_->rkey();
    c.addr = reinterpret_cast<std::uintptr_t>(buf_->data()) + layout_.rx_offset(i);
    c.length = layout_.rx_region_bytes();
    c.slot_stride = layout_.slot_stride;
    c.slots = layout_.rx_slots;
    c.lid = port_.lid;
    c.mtu = static_cast<std::uint8_t>(port_.mtu);
    c.ethernet = port_.ethernet ? 1 : 0;
    c.gid = port_.gid.raw;
    c.use_grh = port_.gid_index >= 0 ? 1 : 0;
    c.max_rd_atomic = static_cast<std::uint8_t>(std::min<std::uint32_t>(limits_.max_qp_rd_atom, 255));
  }
  return out;
}

void endpoint::connect(std::span<const conn_info> remote) {
  if (remote.size() != n_ranks_) {
    throw std::logic_error(fmt::format("connect: {} infos for {} ranks", remote.size(), n_ranks_));
  }
  for (std::uint32_t i = 0; i < layout_.n_peers; ++i) {
    const std::uint32_t peer = plan::peer_rank(rank_, i);
    const conn_info& r = remote[peer];
    if (auto err = validate(r, static_cast<int>(peer), port_.ethernet); !err.empty()) throw usage_error(err);
    if (r.slot_stride < layout_.msg_size) {
      throw usage_error(
          fmt::format("rank {} has slots of {} bytes for messages of {}; run identical options on every "
                      "rank",
                      peer, r.slot_stride, layout_.msg_size));
    }
    verbs::rtr_params rtr;
    rtr.port = port_.port;
    rtr.sgid_index = std::max(port_.gid_index, 0);
    rtr.path_mtu = static_cast<ibv_mtu>(std::min<int>(port_.mtu, r.mtu));
    rtr.max_dest_rd_atomic = static_cast<std::uint8_t>(std::min<std::uint32_t>(limits_.max_qp_rd_atom, 255));
    rtr.remote = {r.qp_num, r.psn, r.lid, r.gid, port_.ethernet || r.use_grh != 0};
    verbs::to_rtr(*qps_[i], rtr);

    verbs::rts_params rts;
    rts.sq_psn = psns_[i];
    rts.timeout = static_cast<std::uint8_t>(opts_.qp_timeout);
    rts.max_rd_atomic = static_cast<std::uint8_t>(
        std::clamp<std::uint32_t>(std::min<std::uint32_t>(limits_.max_qp_init_rd_atom, r.max_rd_atomic), 1, 255));
    verbs::to_rts(*qps_[i], rts);

    links_.push_back({peer, qps_[i]->get(), r.addr, r.rkey, r.slots, r.slot_stride});
  }
}

}  // namespace rdmamesh::fabric
