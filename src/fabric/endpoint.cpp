// Building and connecting one rank's QPs. Limits are checked against the device before
// anything large is allocated, so a bad flag fails fast with the limit it broke.
#include "rdmamesh/fabric/endpoint.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "rdmamesh/fabric/fit.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
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

// Signaled WRs a session can have outstanding: one per cq_mod WRs of the window, plus the
// extra signaled WR that closes an unsignaled tail at the end of a round.
std::uint64_t signaled_per_session(const options& o, const plan::layout& l) {
  std::uint32_t smallest_mod = l.window;
  for (auto s : o.sizes) smallest_mod = std::min(smallest_mod, plan::cq_mod_for(o, s, l.window));
  return (l.window + smallest_mod - 1) / smallest_mod + 2;
}

}  // namespace

endpoint::endpoint(const options& o, const plan::layout& l, const port_choice& port, std::uint32_t rank,
                   std::uint32_t n_ranks, topology_ptr topo, int numa, std::uint32_t ranks_on_device)
    : opts_(o), layout_(l), port_(port), rank_(rank), n_ranks_(n_ranks) {
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
  auto t0 = clock::now();
  ctx_ = std::make_shared<verbs::context>(port_.device);
  check_limits(ranks_on_device);
  open_queues();
  times_.device_s = since(t0);

  t0 = clock::now();
  register_buffer(std::move(topo), numa);
  times_.buffers_s = since(t0);

  t0 = clock::now();
  make_qps();
  times_.qps_s = since(t0);
}

// The whole node's demand on the device, before a PD, CQ, MR or QP exists.
void endpoint::check_limits(std::uint32_t ranks_on_device) {
  const options& o = opts_;
  const plan::layout& l = layout_;
  const ibv_device_attr& da = ctx_->device_attr();
  limits_.max_qp_wr = static_cast<std::uint32_t>(da.max_qp_wr);
  limits_.max_srq_wr = static_cast<std::uint32_t>(da.max_srq_wr);
  limits_.max_cqe = da.max_cqe;
  limits_.max_qp_rd_atom = static_cast<std::uint32_t>(da.max_qp_rd_atom);
  limits_.max_qp_init_rd_atom = static_cast<std::uint32_t>(da.max_qp_init_rd_atom);
  limits_.max_mr_size = da.max_mr_size;

  const std::string& dev = port_.device;
  const device_caps allowed = with_test_overrides({.max_qp = static_cast<std::uint64_t>(da.max_qp),
                                                   .max_cq = static_cast<std::uint64_t>(da.max_cq),
                                                   .max_mr = static_cast<std::uint64_t>(da.max_mr),
                                                   .max_pd = static_cast<std::uint64_t>(da.max_pd),
                                                   .max_srq = static_cast<std::uint64_t>(da.max_srq)});
  // --connect round holds QPs for one round's partners only
  const bool per_round = o.connect == connect_kind::round;
  const std::uint32_t held_peers = per_round ? o.max_partners(n_ranks_) : l.n_peers;
  if (auto e = misfit({held_peers, l.qps, l.srq_depth > 0, ranks_on_device, per_round, o.pairwise()}, allowed, dev,
                      this_host())) {
    throw usage_error(*e);
  }
  if (l.window > limits_.max_qp_wr) {
    throw usage_error(
        fmt::format("--tx-depth {} exceeds {}'s max_qp_wr {}; lower -t", l.window, dev, limits_.max_qp_wr));
  }
  if (l.srq_depth > limits_.max_srq_wr) {
    throw usage_error(
        fmt::format("--rx-depth {} exceeds {}'s max_srq_wr {}; lower -r", l.srq_depth, dev, limits_.max_srq_wr));
  }
  if (l.total_bytes() > limits_.max_mr_size) {
    throw usage_error(fmt::format("the buffer of {} bytes exceeds {}'s max_mr_size {}; lower --size or --peer-buffer",
                                  l.total_bytes(), dev, limits_.max_mr_size));
  }
  const std::uint64_t held_sessions = std::uint64_t{held_peers} * l.qps;
  send_cqe_ = std::max<std::uint64_t>(held_sessions * signaled_per_session(o, l), 1);
  recv_cqe_ = std::max<std::uint64_t>(l.srq_depth, 1);
  if (send_cqe_ > static_cast<std::uint64_t>(limits_.max_cqe)) {
    throw usage_error(
        fmt::format("{} QPs x {} signaled WRs each needs a send CQ of {} entries but {} allows {}; "
                    "raise -Q/--cq-mod or lower -t or -q{}",
                    held_sessions, signaled_per_session(o, l), send_cqe_, dev, limits_.max_cqe,
                    per_round ? "" : ", or use --connect round with pairwise patterns"));
  }
  if (recv_cqe_ > static_cast<std::uint64_t>(limits_.max_cqe)) {
    throw usage_error(fmt::format("--rx-depth {} needs a receive CQ of as many entries but {} allows {}; lower -r",
                                  l.srq_depth, dev, limits_.max_cqe));
  }
}

// PD, the two CQs, and the inline threshold the device grants.
void endpoint::open_queues() {
  pd_ = std::make_shared<verbs::protection_domain>(ctx_);
  send_cq_ = std::make_shared<verbs::completion_queue>(ctx_, static_cast<int>(send_cqe_));
  recv_cq_ = std::make_shared<verbs::completion_queue>(ctx_, static_cast<int>(recv_cqe_));
  limits_.max_inline = verbs::probe_max_inline(pd_, send_cq_);
  if (opts_.inline_size > 0 && static_cast<std::uint32_t>(opts_.inline_size) > limits_.max_inline) {
    throw usage_error(fmt::format("--inline-size {} exceeds {}'s largest inline size {}; lower -I", opts_.inline_size,
                                  port_.device, limits_.max_inline));
  }
  inline_size_ = plan::inline_for(opts_, limits_.max_inline);
}

// The one buffer, on the NIC's NUMA node, under one MR; a memlock limit is named as such.
void endpoint::register_buffer(topology_ptr topo, int numa) {
  buf_ = std::make_unique<host_buffer>(layout_.total_bytes(), std::move(topo), numa);
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
}

// The SRQ and the session table; with --connect all every QP up front, in INIT.
void endpoint::make_qps() {
  const plan::layout& l = layout_;
  const bool per_round = opts_.connect == connect_kind::round;
  if (l.srq_depth > 0) srq_ = std::make_shared<verbs::shared_receive_queue>(pd_, l.srq_depth);
  psn_gen_.seed(std::random_device{}());
  recreate_ = per_round && std::getenv("RDMAMESH_BENCH_RECREATE") != nullptr;
  qps_.resize(l.sessions());
  psns_.assign(l.sessions(), 0);
  links_.resize(l.sessions());
  for (std::uint32_t s = 0; s < l.sessions(); ++s) {
    links_[s].peer = plan::peer_rank(rank_, s / l.qps);
    links_[s].lane = s % l.qps;
    links_[s].session = s;
  }
  if (per_round) return;
  for (std::uint32_t s = 0; s < l.sessions(); ++s) {
    qps_[s] = make_qp();
    verbs::to_init(*qps_[s], port_.port, access_flags);
    psns_[s] = new_psn();
  }
}

std::unique_ptr<verbs::queue_pair> endpoint::make_qp() const {
  return std::make_unique<verbs::queue_pair>(pd_, send_cq_, recv_cq_, srq_,
                                             verbs::qp_caps{layout_.window, 1, inline_size_});
}

std::uint32_t endpoint::new_psn() {
  return static_cast<std::uint32_t>(psn_gen_() & 0xffffff);
}

endpoint_resources endpoint::resources() const {
  return {
      // --connect round: the most it holds at once, one round's partners
      .qps = opts_.connect == connect_kind::round ? std::uint64_t{opts_.max_partners(n_ranks_)} * layout_.qps
                                                  : std::uint64_t{layout_.sessions()},
      // what the provider allocated (it may round the request up)
      .cq_entries = static_cast<std::uint64_t>(send_cq_->get()->cqe) + static_cast<std::uint64_t>(recv_cq_->get()->cqe),
      .registered_bytes = buf_->size()};
}

endpoint::~endpoint() {
  // QPs hold references to the CQs, SRQ and PD; release them before the rest.
  qps_.clear();
}

conn_info endpoint::info_for(std::uint32_t s) const {
  conn_info c;
  c.magic = conn_info_magic;
  c.qp_num = qps_[s]->qp_num();
  c.psn = psns_[s];
  c.rkey = mr_->rkey();
  c.addr = reinterpret_cast<std::uintptr_t>(buf_->data()) + layout_.rx_offset(s);
  c.length = layout_.rx_region_bytes();
  c.slot_stride = layout_.slot_stride;
  c.slots = layout_.rx_slots;
  c.lid = port_.lid;
  c.mtu = static_cast<std::uint8_t>(port_.mtu);
  c.ethernet = port_.ethernet ? 1 : 0;
  c.gid = port_.gid.raw;
  c.use_grh = port_.gid_index >= 0 ? 1 : 0;
  c.max_rd_atomic = static_cast<std::uint8_t>(std::min<std::uint32_t>(limits_.max_qp_rd_atom, 255));
  return c;
}

std::vector<conn_info> endpoint::local_infos() const {
  std::vector<conn_info> out(std::size_t{n_ranks_} * layout_.qps);
  for (std::uint32_t s = 0; s < layout_.sessions(); ++s) {
    const std::uint32_t peer = plan::peer_rank(rank_, s / layout_.qps);
    out[std::size_t{peer} * layout_.qps + s % layout_.qps] = info_for(s);
  }
  return out;
}

void endpoint::connect_session(std::uint32_t s, const conn_info& r, const std::optional<fault>& injected) {
  const std::uint32_t peer = plan::peer_rank(rank_, s / layout_.qps);
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
  verbs::to_rtr(*qps_[s], rtr);

  verbs::rts_params rts;
  rts.sq_psn = psns_[s];
  rts.timeout = static_cast<std::uint8_t>(opts_.qp_timeout);
  // as deep as both ends allow: a READ depth of 1 serializes READs on the round trip
  rts.max_rd_atomic = static_cast<std::uint8_t>(
      std::clamp<std::uint32_t>(std::min<std::uint32_t>(limits_.max_qp_init_rd_atom, r.max_rd_atomic), 1, 255));
  verbs::to_rts(*qps_[s], rts);

  std::uint32_t rkey = r.rkey;
  // RDMAMESH_FAULT=rkey:SRC:DST: a key the peer never issued, so its NIC answers with a
  // remote access error, as a stale or mixed-up key would in a real job
  if (injected && injected->what == fault::kind::rkey && injected->hits(rank_, peer)) rkey = ~rkey;
  links_[s] = {peer, s % layout_.qps, s, qps_[s]->get(), r.addr, rkey, r.slots, r.slot_stride};
}

void endpoint::connect(std::span<const conn_info> remote, const std::optional<fault>& injected) {
  const auto t0 = std::chrono::steady_clock::now();
  if (remote.size() != std::size_t{n_ranks_} * layout_.qps) {
    throw std::logic_error(
        fmt::format("connect: {} infos for {} ranks x {} QPs", remote.size(), n_ranks_, layout_.qps));
  }
  for (std::uint32_t s = 0; s < layout_.sessions(); ++s) {
    const std::uint32_t peer = plan::peer_rank(rank_, s / layout_.qps);
    connect_session(s, remote[std::size_t{peer} * layout_.qps + s % layout_.qps], injected);
  }
  times_.connect_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<conn_info> endpoint::round_infos(std::span<const std::uint32_t> partners) {
  const std::uint32_t q = layout_.qps;
  route_.resize(qps_.size());
  auto route = [&](std::uint32_t rank) { return rank < route_of_.size() ? route_of_[rank] : std::string(); };
  std::vector<std::uint8_t> wanted(qps_.size(), 0);
  for (std::uint32_t p : partners) {
    for (std::uint32_t lane = 0; lane < q; ++lane) wanted[plan::peer_index(rank_, p) * q + lane] = 1;
  }
  // the last round's QPs that serve no partner now are re-targeted before any is made
  std::vector<std::pair<std::string, std::unique_ptr<verbs::queue_pair>>> spare;
  for (std::size_t s = 0; s < qps_.size(); ++s) {
    links_[s].qp = nullptr;
    if (recreate_) qps_[s].reset();  // tools/scale-model's comparison: destroy and create instead
    if (qps_[s] && !wanted[s]) spare.emplace_back(route_[s], std::move(qps_[s]));
  }
  std::vector<conn_info> out;
  out.reserve(partners.size() * q);
  for (std::uint32_t p : partners) {
    const std::string to = route(p);
    for (std::uint32_t lane = 0; lane < q; ++lane) {
      const std::uint32_t s = plan::peer_index(rank_, p) * q + lane;
      if (!qps_[s]) {
        auto same = std::find_if(spare.begin(), spare.end(), [&](const auto& sp) { return sp.first == to; });
        if (same != spare.end()) {
          qps_[s] = std::move(same->second);
          spare.erase(same);
        }
      }
      if (qps_[s]) {
        verbs::to_reset(*qps_[s]);  // forgets the old partner, its PSNs and any error state
      } else {
        qps_[s] = make_qp();
      }
      route_[s] = to;
      verbs::to_init(*qps_[s], port_.port, access_flags);
      psns_[s] = new_psn();
      out.push_back(info_for(s));
    }
  }
  spare.clear();  // never hold more than the round needs
  return out;
}

std::vector<std::string> endpoint::connect_round(std::span<const std::uint32_t> partners,
                                                 std::span<const conn_info> remote,
                                                 const std::optional<fault>& injected) {
  const std::uint32_t q = layout_.qps;
  std::vector<std::string> failed;
  for (std::size_t i = 0; i < partners.size(); ++i) {
    for (std::uint32_t lane = 0; lane < q; ++lane) {
      const std::uint32_t s = plan::peer_index(rank_, partners[i]) * q + lane;
      try {
        connect_session(s, remote[i * q + lane], injected);
      } catch (const std::exception& e) {
        links_[s].qp = nullptr;
        failed.push_back(fmt::format("rank {} -> rank {} lane {}: connecting for the round failed: {}", rank_,
                                     partners[i], lane, e.what()));
      }
    }
  }
  return failed;
}

}  // namespace rdmamesh::fabric
