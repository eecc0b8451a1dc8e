// Ping-pong latency engine. Slots per session: rx 0 takes pings, rx 1 pongs; tx 0 is the
// ping source, tx 1 the pong source, so a rank can ping and answer the same peer at once.
#include "rdmamesh/engine/pingpong.hpp"
#include "rdmamesh/util/stop.hpp"

#include <arpa/inet.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rdmamesh/util/pattern.hpp"

namespace rdmamesh::engine {
namespace {

// WRITE ping-pong: the last byte of each message changes every iteration and is never 0
constexpr std::uint8_t marker(std::uint64_t iter) {
  return static_cast<std::uint8_t>(iter % 255 + 1);
}

constexpr std::uint32_t pong_bit = 1u << 31;
constexpr std::uint32_t iter_mask = pong_bit - 1;

std::uint8_t load_acquire(const std::byte* p) {
  return __atomic_load_n(reinterpret_cast<const std::uint8_t*>(p), __ATOMIC_ACQUIRE);
}

}  // namespace

pingpong::pingpong(const options& o, const plan::layout& l, std::uint32_t rank, std::uint32_t n_ranks,
                   const fabric::endpoint& ep)
    : core_(o, l, rank, n_ranks, ep) {
  for (const auto& link : core_.links()) {
    flow f;
    f.link = link;
    f.hist = std::make_unique<stats::histogram>();
    flows_.push_back(std::move(f));
  }
  reposts_.reserve(64);
  core_.fill_read_sources();
  core_.post_initial_receives();
}

void pingpong::relink(std::span<const fabric::session_link> links) {
  core_.relink(links);
  for (std::size_t i = 0; i < flows_.size(); ++i) flows_[i].link = links[i];
}

void pingpong::begin_round(std::uint64_t size, const plan::round_role& role) {
  const options& o = core_.opts();
  const plan::layout& l = core_.layout();
  size_ = size;
  cq_mod_ = plan::cq_mod_for(o, size, l.window);
  send_flags_ = (o.op != op_kind::read && size <= core_.inline_size()) ? IBV_SEND_INLINE : 0;
  auto listed = [](const std::vector<std::uint32_t>& v, std::uint32_t p) {
    return std::find(v.begin(), v.end(), p) != v.end();
  };
  for (auto& f : flows_) {
    const bool lane0 = f.link.lane == 0;  // latency needs one QP per pair
    f.initiating = lane0 && listed(role.send_to, f.link.peer);
    f.responding = lane0 && o.op != op_kind::read && listed(role.recv_from, f.link.peer);
    f.waiting = false;
    f.timed = false;
    f.pong_due = false;
    f.expected = f.answered;
    f.limit = !f.initiating       ? f.pings
              : o.duration_mode() ? std::numeric_limits<std::uint64_t>::max()
                                  : f.pings + o.iters;
    *f.hist = stats::histogram{};
    if ((f.initiating || f.responding) && f.link.qp == nullptr) {
      fail(f, "no connection for the round (see the connect error)");
    }
    f.until_signal = 1;  // cq_mod may differ per size: restart the count
    // no traffic is in flight between rounds: clear the marker slots, whose positions move with the size
    if (lane0 && o.op != op_kind::read) {
      std::memset(core_.buf() + l.rx_offset(f.link.session), 0, 2 * l.slot_stride);
      std::memset(core_.buf() + l.tx_offset(f.link.session, 0), 0, 2 * l.slot_stride);
    }
  }
  all_ = stats::histogram{};
  phase_ = phase::drain;
}

void pingpong::start() {
  t_start_ = clock::now();
  const round_deadlines d = deadlines_for(core_.opts(), core_.opts().duration_s, core_.opts().warmup_s, t_start_);
  deadline_measure_ = d.measure_from;
  deadline_end_ = d.end_by;
  phase_ = core_.opts().duration_mode() ? phase::warmup : phase::measure;
  advance_phase(t_start_);
}

void pingpong::advance_phase(clock::time_point now) {
  const bool stop = stop_requested();  // SIGTERM/SIGINT: end the interval now, keep what it measured
  if (phase_ == phase::warmup && (now >= deadline_measure_ || stop)) phase_ = phase::measure;
  if (phase_ == phase::measure) {
    const bool all_done = std::all_of(flows_.begin(), flows_.end(),
                                      [](const flow& f) { return !f.initiating || f.failed || f.pings >= f.limit; });
    if (now >= deadline_end_ || all_done || stop) phase_ = phase::drain;
  }
}

void pingpong::progress() {
  if ((++passes_ & 15) == 0 || phase_ == phase::warmup) advance_phase(clock::now());  // see stream
  const std::uint64_t before = activity_;
  const bool by_memory = core_.opts().op == op_kind::write;
  for (auto& f : flows_) {
    if (f.failed || !(f.initiating || f.responding)) continue;
    if (by_memory) check_memory(f);
    if (f.pong_due && post(f, true, f.answered - 1)) f.pong_due = false;
    if (f.initiating && !f.waiting && phase_ != phase::drain && f.pings < f.limit) {
      if (!f.timed) f.sent_at = clock::now();  // the first ping; later ones reuse the pong's time
      if (post(f, false, f.pings)) {
        f.waiting = true;
        f.timed = false;
      }
    }
  }
  // the send CQ only frees queue room (cq_mod <= window leaves plenty) except for READ, whose
  // completion is the arrival: polling it every pass would slow the pong's detection
  if (core_.opts().op == op_kind::read || (passes_ & 7) == 0) poll_send_cq();
  if (receiver_sees_messages(core_.opts().op)) poll_recv_cq();
  // sharing a CPU: an empty pass hands it to the rank that has the next move (maybe our peer)
  if (activity_ == before && core_.crowded()) sched_yield();
}

bool pingpong::post(flow& f, bool pong, std::uint64_t iter) {
  const plan::layout& l = core_.layout();
  if (f.posted - f.completed >= l.window) return false;  // wait for a signaled WR to retire the queue
  const op_kind op = core_.opts().op;
  std::byte* local = core_.buf() + l.tx_offset(f.link.session, pong ? 1 : 0);
  if (core_.opts().verify && op != op_kind::read) {
    fill_pattern(local, size_, {core_.rank(), f.link.peer, iter, pong ? 1u : 0u});
  }
  if (op == op_kind::write) reinterpret_cast<std::uint8_t*>(local)[size_ - 1] = marker(iter);

  const bool signaled = op == op_kind::read || --f.until_signal == 0;
  if (signaled) f.until_signal = cq_mod_;
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(local), static_cast<std::uint32_t>(size_), core_.lkey()};
  ibv_send_wr wr{};
  wr.wr_id = make_wr_id(f.link.session, f.posted);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = (signaled ? IBV_SEND_SIGNALED : 0) | send_flags_;
  wr.imm_data = htonl((pong ? pong_bit : 0) | static_cast<std::uint32_t>(iter & iter_mask));
  wr.wr.rdma.remote_addr = f.link.remote_addr + (pong ? f.link.remote_stride : 0);
  wr.wr.rdma.rkey = f.link.rkey;
  switch (op) {
    case op_kind::write: wr.opcode = IBV_WR_RDMA_WRITE; break;
    case op_kind::write_imm: wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM; break;
    case op_kind::send: wr.opcode = IBV_WR_SEND_WITH_IMM; break;
    case op_kind::read: wr.opcode = IBV_WR_RDMA_READ; break;
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(f.link.qp, &wr, &bad); rc != 0) {
    fail(f, fmt::format("ibv_post_send(qp={:#x}, {}, len={}) failed: {}", f.link.qp->qp_num, pong ? "pong" : "ping",
                        size_, std::strerror(rc)));
    return false;
  }
  ++f.posted;
  ++activity_;
  return true;
}

void pingpong::check_memory(flow& f) {
  const plan::layout& l = core_.layout();
  const std::byte* ping = core_.buf() + l.rx_offset(f.link.session);
  const std::byte* pong = ping + l.slot_stride;
  if (f.responding && !f.pong_due && load_acquire(ping + size_ - 1) == marker(f.answered)) {
    on_ping(f, f.answered, ping, static_cast<std::uint32_t>(size_));
  }
  if (f.initiating && f.waiting && load_acquire(pong + size_ - 1) == marker(f.pings)) {
    on_pong(f, f.pings, pong, static_cast<std::uint32_t>(size_));
  }
}

void pingpong::on_ping(flow& f, std::uint64_t iter, const std::byte* data, std::uint32_t len) {
  ++activity_;
  if ((iter & iter_mask) != (f.answered & iter_mask)) {
    core_.mismatch(fmt::format("verify: rank {} -> rank {} ping {} arrived while {} was due (lost or reordered)",
                               f.link.peer, core_.rank(), iter, f.answered));
  }
  verify_payload(f, data, f.answered, false, len);
  ++f.answered;
  f.pong_due = !post(f, true, f.answered - 1);
}

void pingpong::on_pong(flow& f, std::uint64_t iter, const std::byte* data, std::uint32_t len) {
  if (!f.waiting || (iter & iter_mask) != (f.pings & iter_mask)) {
    core_.mismatch(fmt::format("verify: rank {} -> rank {} pong {} arrived while {} was due", f.link.peer, core_.rank(),
                               iter, f.pings));
    return;
  }
  verify_payload(f, data, f.pings, true, len);
  sample(f, true);
}

void pingpong::verify_payload(const flow& f, const std::byte* data, std::uint64_t iter, bool pong, std::uint64_t len) {
  if (!core_.opts().verify) return;
  // WRITE's last byte is the arrival marker, not payload
  const std::uint64_t checked = core_.opts().op == op_kind::write ? size_ - 1 : size_;
  if (len != size_) {
    core_.mismatch(fmt::format("verify: rank {} -> rank {} {} {}: {} bytes arrived, expected {}", f.link.peer,
                               core_.rank(), pong ? "pong" : "ping", iter, len, size_));
    return;
  }
  if (auto bad = check_pattern(data, checked, {f.link.peer, core_.rank(), iter, pong ? 1u : 0u})) {
    core_.mismatch(fmt::format("verify: rank {} -> rank {} {} {}: byte {} of {} is {:#04x}, expected {:#04x}",
                               f.link.peer, core_.rank(), pong ? "pong" : "ping", iter, bad->offset, size_, bad->actual,
                               bad->expected));
  }
}

void pingpong::sample(flow& f, bool half) {
  const clock::time_point now = clock::now();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - f.sent_at).count();
  f.sent_at = now;
  f.timed = true;
  if (phase_ == phase::measure || (phase_ == phase::drain && !core_.opts().duration_mode())) {
    const std::uint64_t v = static_cast<std::uint64_t>(ns > 0 ? ns : 0) / (half ? 2 : 1);
    f.hist->record(v);
    all_.record(v);
  }
  ++f.pings;
  f.waiting = false;
}

void pingpong::poll_send_cq() {
  constexpr int batch = 32;
  ibv_wc wcs[batch];
  const int n = ibv_poll_cq(core_.send_cq(), batch, wcs);
  if (n < 0) throw std::runtime_error(fmt::format("ibv_poll_cq(send cq) failed: {}", n));
  activity_ += static_cast<std::uint64_t>(n);
  for (int i = 0; i < n; ++i) {
    const ibv_wc& wc = wcs[i];
    if (is_probe(wc.wr_id)) {
      if (wc.status != IBV_WC_SUCCESS)
        fail(flows_[wc.wr_id & ~probe_bit], core_.completion_error(wc, "liveness probe"));
      continue;
    }
    flow& f = flows_[wc.wr_id >> seq_bits];
    if (wc.status != IBV_WC_SUCCESS) {
      fail(f, core_.completion_error(wc, "send"));
      continue;
    }
    f.completed += retired_by(wc.wr_id, f.completed);
    if (wc.opcode == IBV_WC_RDMA_READ && f.waiting) {
      const plan::layout& l = core_.layout();
      const std::byte* data = core_.buf() + l.tx_offset(f.link.session, 0);
      if (core_.opts().verify) {
        if (auto bad = check_pattern(data, size_, {f.link.peer, core_.rank(), 0, 0})) {
          core_.mismatch(fmt::format("verify: READ rank {} -> rank {} {}: byte {} of {} is {:#04x}, expected {:#04x}",
                                     f.link.peer, core_.rank(), f.pings, bad->offset, size_, bad->actual,
                                     bad->expected));
        }
      }
      sample(f, false);
    }
  }
}

void pingpong::poll_recv_cq() {
  constexpr int batch = 32;
  ibv_wc wcs[batch];
  const int n = ibv_poll_cq(core_.recv_cq(), batch, wcs);
  if (n < 0) throw std::runtime_error(fmt::format("ibv_poll_cq(recv cq) failed: {}", n));
  activity_ += static_cast<std::uint64_t>(n);
  const plan::layout& l = core_.layout();
  reposts_.clear();
  for (int i = 0; i < n; ++i) {
    const ibv_wc& wc = wcs[i];
    reposts_.push_back(wc.wr_id);
    const int s = core_.session_of_qp(wc.qp_num);
    if (s < 0) continue;
    flow& f = flows_[static_cast<std::size_t>(s)];
    if (wc.status != IBV_WC_SUCCESS) {
      fail(f, core_.completion_error(wc, "receive"));
      continue;
    }
    const std::uint32_t imm = ntohl(wc.imm_data);
    const bool pong = (imm & pong_bit) != 0;
    const std::byte* data = core_.opts().op == op_kind::send
                                ? core_.buf() + l.pool_slot_offset(static_cast<std::uint32_t>(wc.wr_id))
                                : core_.buf() + l.rx_offset(f.link.session) + (pong ? l.slot_stride : 0);
    const std::uint32_t len = core_.opts().op == op_kind::send ? wc.byte_len : static_cast<std::uint32_t>(size_);
    if (pong) {
      on_pong(f, imm & iter_mask, data, len);
    } else {
      on_ping(f, imm & iter_mask, data, len);
    }
  }
  if (!reposts_.empty()) core_.repost(reposts_);
}

bool pingpong::drained() const {
  return std::all_of(flows_.begin(), flows_.end(),
                     [](const flow& f) { return !f.initiating || f.failed || !f.waiting; });
}

std::vector<std::uint64_t> pingpong::completed_by_lane() const {
  const std::uint32_t lanes = core_.layout().qps;
  std::vector<std::uint64_t> out(std::size_t{core_.n_ranks()} * lanes, 0);
  for (const auto& f : flows_) out[std::size_t{f.link.peer} * lanes + f.link.lane] = f.pings;
  return out;
}

void pingpong::expect(std::span<const std::uint64_t> by_lane) {
  const std::uint32_t lanes = core_.layout().qps;
  for (auto& f : flows_) f.expected = by_lane[std::size_t{f.link.peer} * lanes + f.link.lane];
}

bool pingpong::received_all() const {
  return std::all_of(flows_.begin(), flows_.end(), [](const flow& f) {
    return !f.responding || f.failed || (f.answered >= f.expected && !f.pong_due);
  });
}

std::string pingpong::pending() const {
  std::vector<std::string> parts;
  for (const auto& f : flows_) {
    if (f.initiating && !f.failed && f.waiting) parts.push_back(fmt::format("the pong of rank {}", f.link.peer));
    if (f.responding && !f.failed && f.answered < f.expected) {
      parts.push_back(fmt::format("{} pings from rank {}", f.expected - f.answered, f.link.peer));
    }
  }
  return parts.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<stats::latency_summary> pingpong::round_results() const {
  std::vector<stats::latency_summary> out(core_.n_ranks());
  for (const auto& f : flows_) {
    if (f.initiating) out[f.link.peer] = stats::summarize(*f.hist);
  }
  return out;
}

void pingpong::probe() {
  for (auto& f : flows_) {
    if (f.link.lane == 0 && f.link.qp && !f.failed && f.completed == f.posted) core_.post_probe(f.link);
  }
}

std::vector<std::uint64_t> pingpong::round_failures() const {
  std::vector<std::uint64_t> out(core_.n_ranks(), 0);
  for (const auto& f : flows_) {
    if ((f.initiating || f.responding) && f.failed) out[f.link.peer] = 1;
  }
  return out;
}

void pingpong::fail(flow& f, const std::string& what) {
  if (f.failed) return;
  f.failed = true;
  f.waiting = false;
  core_.event(fmt::format("rank {} <-> rank {}: {}", core_.rank(), f.link.peer, what));
}

}  // namespace rdmamesh::engine
