// Stream engine: rounds, the phase clock, the end-of-round bookkeeping and per-pair results.
#include "rdmamesh/engine/stream.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rdmamesh/stats/series.hpp"
#include "rdmamesh/util/pattern.hpp"
#include "rdmamesh/util/stop.hpp"

namespace rdmamesh::engine {

stream::stream(const options& o, const plan::layout& l, std::uint32_t rank, std::uint32_t n_ranks,
               const fabric::endpoint& ep)
    : core_(o, l, rank, n_ranks, ep) {
  for (const auto& link : core_.links()) {
    tx_session t;
    t.link = link;
    t.local_base = core_.buf() + l.tx_offset(link.session, 0);
    t.local_stride = l.tx_slots ? l.slot_stride : 0;
    t.local_slots = std::max<std::uint32_t>(l.tx_slots, 1);
    tx_.push_back(t);
    rx_session r;
    r.peer = link.peer;
    r.lane = link.lane;
    rx_.push_back(r);
  }
  if (o.duration_mode()) interval_s_ = o.interval_s;
  duration_s_ = o.duration_s;
  warmup_s_ = o.warmup_s;
  if (interval_s_ > 0) {  // marks never allocate in the hot loop: room for every slot, up front
    const std::size_t marks =
        stats::series_slots(std::max(o.round_seconds(false), o.round_seconds(true)), interval_s_) + 2;
    mark_at_.reserve(marks);
    mark_tx_.reserve(marks * tx_.size());
    mark_rx_.reserve(marks * rx_.size());
  }
  wr_.resize(std::max<std::uint32_t>(o.post_list, 1));
  rotate_ = o.verify;
  sge_.resize(wr_.size());
  reposts_.reserve(64);
  core_.fill_read_sources();
  core_.post_initial_receives();
}

void stream::relink(std::span<const fabric::session_link> links) {
  core_.relink(links);
  for (std::size_t i = 0; i < tx_.size(); ++i) tx_[i].link = links[i];
  chain_session_ = no_session;  // new peers' keys and addresses
}

void stream::begin_round(std::uint64_t size, const plan::round_role& role) {
  const options& o = core_.opts();
  size_ = size;
  round_host_ = {};
  cq_mod_ = plan::cq_mod_for(o, size, core_.layout().window);
  // A few lists per pass, then back to the CQs: a mesh rank also receives, and its peers'
  // messages need re-posted receives (on software RDMA a post can carry milliseconds of work).
  // Small messages carry little work each: up to 16 KiB of them per pass, as perftest fills its
  // window before it polls (a pass's clock read and CQ poll then cost a 64 B message ~8x less:
  // tools/bench-ipm).
  lists_per_pass_ = static_cast<std::uint32_t>(
      std::max<std::uint64_t>(8, (16 << 10) / std::max<std::uint64_t>(size * wr_.size(), 1)));
  send_flags_ = (o.op != op_kind::read && size <= core_.inline_size()) ? IBV_SEND_INLINE : 0;
  switch (o.op) {
    case op_kind::write: opcode_ = IBV_WR_RDMA_WRITE; break;
    case op_kind::write_imm: opcode_ = IBV_WR_RDMA_WRITE_WITH_IMM; break;
    case op_kind::send: opcode_ = IBV_WR_SEND; break;
    case op_kind::read: opcode_ = IBV_WR_RDMA_READ; break;
  }
  prepare_wrs();
  auto listed = [](const std::vector<std::uint32_t>& v, std::uint32_t p) {
    return std::find(v.begin(), v.end(), p) != v.end();
  };
  const std::uint32_t lanes = core_.layout().qps;
  idle_ = role.send_to.empty() && (role.recv_from.empty() || !receiver_sees_messages(o.op));
  for (auto& t : tx_) {
    t.active = listed(role.send_to, t.link.peer);  // a session that failed earlier stays failed
    if (t.active && t.link.qp == nullptr) fail_tx(t, "no connection for the round (see the connect error)");
    t.round_base = t.completed;
    t.at_start = t.at_end = t.completed;
    t.done = {};
    t.limit = !t.active           ? t.posted
              : o.duration_mode() ? std::numeric_limits<std::uint64_t>::max()
                                  : t.posted + lane_share(o.iters, lanes, t.link.lane);
    t.next_signal = (t.posted / cq_mod_ + 1) * cq_mod_;
    const double share = core_.rate_share(t.link.peer);
    t.paced = share < 1;
    if (t.paced) pause_ = 1 / share - 1;
  }
  for (auto& r : rx_) {
    r.active = listed(role.recv_from, r.peer);
    r.round_base = r.at_start = r.at_end = r.received;
    r.verify_base = r.verify_errors;
    r.expected = r.received;
    r.done = {};
    r.limit =
        o.duration_mode() ? std::numeric_limits<std::uint64_t>::max() : r.received + lane_share(o.iters, lanes, r.lane);
  }
  phase_ = phase::drain;  // nothing moves until start()
}

void stream::start() {
  t_start_ = clock::now();
  const round_deadlines d = deadlines_for(core_.opts(), duration_s_, warmup_s_, t_start_);
  deadline_measure_ = d.measure_from;
  deadline_end_ = d.end_by;
  phase_ = core_.opts().duration_mode() ? phase::warmup : phase::measure;
  t_measure_ = t_start_;  // iterations mode measures from the start; warm-up moves it
  if (phase_ == phase::measure) host_at_measure_ = snapshot_host();  // else where warm-up ends
  resume_at_ = active_since_ = t_start_;
  advance_phase(t_start_);
}

host_use stream::snapshot_host() const {
  host_use h = host_now();
  h.passes = static_cast<double>(all_passes_);
  h.idle_passes = static_cast<double>(idle_passes_);
  return h;
}

void stream::advance_phase(clock::time_point now) {
  const bool stop = stop_requested();  // SIGTERM/SIGINT: end the interval now, keep what it measured
  if (phase_ == phase::warmup && (now >= deadline_measure_ || stop)) {
    if (stall_ && core_.opts().duration_mode()) {  // test only: no CPU for the whole window
      stall_ = false;
      std::this_thread::sleep_until(deadline_end_ + std::chrono::milliseconds(100));
      now = clock::now();
    }
    phase_ = phase::measure;
    t_measure_ = now;
    host_at_measure_ = snapshot_host();
    for (auto& t : tx_) t.at_start = t.completed;
    for (auto& r : rx_) r.at_start = r.received;
    if (interval_s_ > 0) {
      mark_at_.clear();
      mark_tx_.clear();
      mark_rx_.clear();
      mark(now, false);
    }
  }
  if (phase_ == phase::measure) {
    // iterations mode ends when every WR is posted; duration mode only by the clock, so a
    // rank that only receives still measures the whole interval
    const bool all_posted =
        !core_.opts().duration_mode() &&
        std::all_of(tx_.begin(), tx_.end(), [](const tx_session& t) { return t.failed || t.posted >= t.limit; });
    if (interval_s_ > 0 && now >= next_mark_ && now < deadline_end_) mark(now, false);
    if (now >= deadline_end_ || all_posted || stop) {
      phase_ = phase::drain;
      t_end_ = now;
      round_host_ = host_between(host_at_measure_, snapshot_host());
      for (auto& t : tx_) t.at_end = t.completed;
      for (auto& r : rx_) r.at_end = r.received;
      if (interval_s_ > 0) mark(now, true);
    }
  }
}

void stream::mark(clock::time_point now, bool last) {
  const double at = std::chrono::duration<double>(now - t_measure_).count();
  mark_at_.push_back(at);
  for (const auto& t : tx_) mark_tx_.push_back(t.completed);
  for (const auto& r : rx_) mark_rx_.push_back(r.received);
  if (last) return;
  // the next grid boundary after this one: a loop that ran late skips the slots it missed
  const double next = std::floor(at / interval_s_ + 1e-9) + 1;
  next_mark_ =
      t_measure_ + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(interval_s_ * next));
}

std::vector<double> stream::round_series(bool rx, std::uint32_t slots) const {
  const std::uint32_t n = core_.n_ranks();
  std::vector<double> out(std::size_t{n} * slots, std::numeric_limits<double>::quiet_NaN());
  const std::size_t sessions = tx_.size(), marks = mark_at_.size();
  if (slots == 0 || marks < 2) return out;
  std::vector<std::vector<std::uint64_t>> by_peer(n);  // counts per mark, lanes summed
  for (std::size_t s = 0; s < sessions; ++s) {
    const bool active = rx ? rx_[s].active : tx_[s].active;
    if (!active) continue;
    const std::uint32_t peer = rx ? rx_[s].peer : tx_[s].link.peer;
    auto& v = by_peer[peer];
    v.resize(marks, 0);
    for (std::size_t m = 0; m < marks; ++m) v[m] += (rx ? mark_rx_ : mark_tx_)[m * sessions + s];
  }
  for (std::uint32_t p = 0; p < n; ++p) {
    if (by_peer[p].empty()) continue;
    const auto rates = stats::slot_rates(mark_at_, by_peer[p], slots, interval_s_, size_);
    std::copy(rates.begin(), rates.end(), out.begin() + static_cast<std::ptrdiff_t>(std::size_t{p} * slots));
  }
  return out;
}

void stream::progress() {
  // The clock costs a vDSO call (a trap on some VMs): read it after every pass that did work
  // (a post or a completion already cost far more) and every 16th empty pass.
  if (worked_ || (++passes_ & 15) == 0) advance_phase(clock::now());
  polled_ = 0;
  posted_ = 0;
  if (phase_ != phase::drain) {
    for (auto& t : tx_) {
      if (t.active && !t.failed && (!t.paced || clock::now() >= resume_at_)) post_sends(t);
    }
  } else {
    // an unsignaled tail never completes: close it with one signaled WR
    for (auto& t : tx_) {
      if (t.active && !t.failed && t.posted > t.signaled_upto && t.posted < t.completed + core_.layout().window) {
        post_batch(t, 1, true);
      }
    }
  }
  poll_send_cq();
  if (receiver_sees_messages(core_.opts().op)) poll_recv_cq();
  worked_ = polled_ > 0 || posted_ > 0;
  progress_ += static_cast<std::uint64_t>(polled_ + posted_);
  ++all_passes_;
  idle_passes_ += worked_ ? 0 : 1;
  if (!worked_ && core_.crowded()) sched_yield();
  // a rank with nothing at all to do this round (not sending; one-sided op, so nothing to
  // receive either) sleeps instead of spinning, in long naps: its core goes to the ranks and
  // kernel work that have some (on a VM every wake-up costs the host). A receiver of
  // WRITE_IMM/SEND keeps polling: it must re-post receives.
  if (idle_ && polled_ == 0) {
    using std::chrono::microseconds;
    const clock::time_point now = clock::now();
    std::this_thread::sleep_until(phase_ == phase::drain ? now + microseconds(200)
                                                         : std::min(deadline_end_, now + microseconds(1000)));
    advance_phase(clock::now());
  }
}

bool stream::drained() const {
  return std::all_of(tx_.begin(), tx_.end(), [](const tx_session& t) {
    return !t.active || t.failed || (t.completed == t.posted && t.signaled_upto == t.posted);
  });
}

std::vector<std::uint64_t> stream::completed_by_lane() const {
  const std::uint32_t lanes = core_.layout().qps;
  std::vector<std::uint64_t> out(std::size_t{core_.n_ranks()} * lanes, 0);
  for (const auto& t : tx_) out[std::size_t{t.link.peer} * lanes + t.link.lane] = t.completed;
  return out;
}

void stream::expect(std::span<const std::uint64_t> by_lane) {
  const std::uint32_t lanes = core_.layout().qps;
  for (auto& r : rx_) r.expected = by_lane[std::size_t{r.peer} * lanes + r.lane];
}

bool stream::received_all() const {
  if (!receiver_sees_messages(core_.opts().op)) return true;
  return std::all_of(rx_.begin(), rx_.end(), [](const rx_session& r) { return r.failed || r.received >= r.expected; });
}

void stream::verify_final() {
  const options& o = core_.opts();
  if (!o.verify || o.op != op_kind::write) return;
  const plan::layout& l = core_.layout();
  for (std::uint32_t s = 0; s < rx_.size(); ++s) {
    rx_session& r = rx_[s];
    if (!r.active || r.failed) continue;
    // the newest message of this round in each slot it reached (older rounds may differ in size)
    const std::uint64_t total = r.expected;
    const std::uint64_t first = std::max(r.round_base, total > l.rx_slots ? total - l.rx_slots : 0);
    for (std::uint64_t seq = first; seq < total; ++seq) {
      check_payload(r, core_.buf() + l.rx_offset(s) + l.rx_slot_offset(seq), seq);
    }
    r.received = total;  // one-sided: what landed is what the sender completed
  }
}

void stream::probe() {
  for (auto& t : tx_) {
    if (t.link.lane == 0 && t.link.qp && !t.failed && t.completed == t.posted) core_.post_probe(t.link);
  }
}

std::string stream::pending() const {
  std::vector<std::string> parts;
  for (const auto& t : tx_) {
    if (t.active && !t.failed && t.completed != t.posted) {
      parts.push_back(
          fmt::format("{} send completions from rank {} lane {}", t.posted - t.completed, t.link.peer, t.link.lane));
    }
  }
  for (const auto& r : rx_) {
    if (!r.failed && r.received < r.expected) {
      parts.push_back(fmt::format("{} messages from rank {} lane {}", r.expected - r.received, r.peer, r.lane));
    }
  }
  return parts.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<stats::pair_counters> stream::round_results() const {
  using seconds = std::chrono::duration<double>;
  const options& o = core_.opts();
  std::vector<stats::pair_counters> out(core_.n_ranks());
  const double interval = seconds(t_end_ - t_measure_).count();
  auto since_start = [&](clock::time_point t) {
    return t == clock::time_point{} ? 0.0 : seconds(t - t_start_).count();
  };
  for (std::size_t s = 0; s < tx_.size(); ++s) {
    const tx_session& t = tx_[s];
    const rx_session& r = rx_[s];
    stats::pair_counters& p = out[t.link.peer];
    p.tx_total += t.completed - t.round_base;
    p.rx_total += r.received - r.round_base;
    p.verify_errors += r.verify_errors - r.verify_base;
    if (o.duration_mode()) {
      p.tx_msgs += t.at_end - t.at_start;
      p.rx_msgs += r.at_end - r.at_start;
      p.tx_seconds = interval;
      p.rx_seconds = interval;
    } else {
      // each pair's own interval: from the common start to its last completion
      p.tx_msgs += t.completed - t.round_base;
      p.rx_msgs += r.received - r.round_base;
      p.tx_seconds = std::max(p.tx_seconds, since_start(t.done));
      p.rx_seconds = std::max(p.rx_seconds, since_start(r.done));
    }
    if (t.active && t.failed) p.flags |= stats::tx_failed;
    if (r.active && r.failed) p.flags |= stats::rx_failed;
    if (receiver_sees_messages(o.op) && r.active && !r.failed && r.received < r.expected) {
      p.flags |= stats::rx_incomplete;
    }
  }
  return out;
}

void stream::fail_tx(tx_session& s, const std::string& what) {
  if (s.failed) return;
  s.failed = true;
  s.done = clock::now();
  core_.event(fmt::format("rank {} -> rank {}: {}", core_.rank(), s.link.peer, what));
}

void stream::fail_rx(rx_session& r, const std::string& what) {
  if (r.failed) return;
  r.failed = true;
  r.done = clock::now();
  core_.event(fmt::format("rank {} -> rank {}: {}", r.peer, core_.rank(), what));
}

}  // namespace rdmamesh::engine
