// Engine setup, the phase clock (warm-up -> measure -> drain), the end-of-run bookkeeping
// and the per-pair results.
#include "rdmamesh/engine/engine.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "rdmamesh/util/pattern.hpp"

namespace rdmamesh::engine {

engine::engine(const options& o, const plan::layout& l, std::uint32_t rank, std::uint32_t n_ranks,
               const fabric::endpoint& ep)
    : opts_(o),
      layout_(l),
      rank_(rank),
      n_ranks_(n_ranks),
      buf_(ep.buffer()),
      lkey_(ep.lkey()),
      send_cq_(ep.send_cq()),
      recv_cq_(ep.recv_cq()) {
  const std::uint64_t limit = o.duration_mode() ? std::numeric_limits<std::uint64_t>::max() : o.iters;
  for (const auto& link : ep.peers()) {
    const std::uint32_t idx = plan::peer_index(rank_, link.rank);
    client_session c;
    c.link = link;
    c.index = idx;
    c.limit = limit;
    clients_.push_back(c);
    server_session sv;
    sv.peer = link.rank;
    sv.index = idx;
    sv.qp = link.qp;
    servers_.push_back(sv);
  }
  if (receiver_sees_messages(o.op)) {
    for (auto& sv : servers_) {
      for (std::uint32_t i = 0; i < layout_.rx_depth && !sv.failed; ++i) post_recv(sv);
    }
  }
}

void engine::start() {
  t_start_ = clock::now();
  const auto secs = [](double s) {
    return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(s));
  };
  if (opts_.duration_mode()) {
    deadline_measure_ = t_start_ + secs(opts_.warmup_s);
    deadline_end_ = deadline_measure_ + secs(opts_.duration_s);
    phase_ = phase::warmup;
  } else {
    deadline_measure_ = t_start_;
    deadline_end_ = clock::time_point::max();
    phase_ = phase::measure;
    t_measure_ = t_start_;
  }
  advance_phase(t_start_);
}

void engine::advance_phase(clock::time_point now) {
  if (phase_ == phase::warmup && now >= deadline_measure_) {
    phase_ = phase::measure;
    t_measure_ = now;
    for (auto& c : clients_) c.at_start = c.completed;
    for (auto& sv : servers_) sv.at_start = sv.received;
  }
  if (phase_ == phase::measure) {
    bool all_posted = true;
    for (const auto& c : clients_) all_posted = all_posted && (c.failed || c.posted >= c.limit);
    if (now >= deadline_end_ || all_posted) {
      phase_ = phase::drain;
      t_end_ = now;
      for (auto& c : clients_) c.at_end = c.completed;
      for (auto& sv : servers_) sv.at_end = sv.received;
    }
  }
}

void engine::progress() {
  advance_phase(clock::now());
  if (phase_ != phase::drain) {
    for (auto& c : clients_) {
      if (!c.failed) post_sends(c);
    }
  }
  poll_send_cq();
  if (receiver_sees_messages(opts_.op)) poll_recv_cq();
}

bool engine::drained() const {
  return std::all_of(clients_.begin(), clients_.end(),
                     [](const client_session& c) { return c.failed || c.completed == c.posted; });
}

std::vector<std::uint64_t> engine::completed_by_rank() const {
  std::vector<std::uint64_t> out(n_ranks_, 0);
  for (const auto& c : clients_) out[c.link.rank] = c.completed;
  return out;
}

void engine::expect(std::span<const std::uint64_t> by_rank) {
  for (auto& sv : servers_) sv.expected = by_rank[sv.peer];
}

bool engine::received_all() const {
  if (!receiver_sees_messages(opts_.op)) return true;
  return std::all_of(servers_.begin(), servers_.end(),
                     [](const server_session& sv) { return sv.failed || sv.received >= sv.expected; });
}

void engine::verify_final() {
  if (!opts_.verify || receiver_sees_messages(opts_.op)) return;
  const std::uint64_t slots = layout_.rx_slots;
  for (auto& sv : servers_) {
    if (sv.failed) continue;
    const std::uint64_t total = sv.expected;
    for (std::uint64_t s = 0; s < std::min(total, slots); ++s) {
      const std::uint64_t last = s + (total - 1 - s) / slots * slots;  // the newest message that hit slot s
      const std::byte* at = buf_ + layout_.rx_offset(sv.index) + layout_.rx_slot_offset(last);
      if (auto bad = check_pattern(at, layout_.msg_size, {sv.peer, rank_, last})) {
        note_mismatch(sv, byte_mismatch(sv.peer, last, bad->offset, bad->expected, bad->actual));
      }
    }
    sv.received = total;  // one-sided: what landed is what the sender completed
  }
}

std::string engine::pending() const {
  std::vector<std::string> parts;
  for (const auto& c : clients_) {
    if (!c.failed && c.completed != c.posted) {
      parts.push_back(fmt::format("{} send completions from rank {}", c.posted - c.completed, c.link.rank));
    }
  }
  if (receiver_sees_messages(opts_.op)) {
    for (const auto& sv : servers_) {
      if (!sv.failed && sv.received < sv.expected) {
        parts.push_back(fmt::format("{} messages from rank {}", sv.expected - sv.received, sv.peer));
      }
    }
  }
  if (parts.empty()) return "nothing";
  std::string out = parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i) out += ", " + parts[i];
  return out;
}

std::vector<stats::pair_counters> engine::results() const {
  using seconds = std::chrono::duration<double>;
  std::vector<stats::pair_counters> out(n_ranks_);
  const double interval = seconds(t_end_ - t_measure_).count();
  for (std::size_t i = 0; i < clients_.size(); ++i) {
    const client_session& c = clients_[i];
    const server_session& sv = servers_[i];
    stats::pair_counters& p = out[c.link.rank];
    p.tx_total = c.completed;
    p.rx_total = sv.received;
    p.verify_errors = sv.verify_errors;
    if (opts_.duration_mode()) {
      p.tx_msgs = c.at_end - c.at_start;
      p.rx_msgs = sv.at_end - sv.at_start;
      p.tx_seconds = interval;
      p.rx_seconds = interval;
    } else {
      // each pair's own interval: from the common start to its last completion
      p.tx_msgs = c.completed;
      p.rx_msgs = sv.received;
      p.tx_seconds = c.done == clock::time_point{} ? 0.0 : seconds(c.done - t_start_).count();
      p.rx_seconds = sv.done == clock::time_point{} ? 0.0 : seconds(sv.done - t_start_).count();
    }
    if (c.failed) p.flags |= stats::tx_failed;
    if (sv.failed) p.flags |= stats::rx_failed;
    if (receiver_sees_messages(opts_.op) && !sv.failed && sv.received < sv.expected) p.flags |= stats::rx_incomplete;
  }
  return out;
}

void engine::note_mismatch(server_session& sv, std::string line) {
  constexpr std::uint64_t max_reported = 10;
  ++sv.verify_errors;
  if (++mismatches_reported_ <= max_reported) events_.push_back(std::move(line));
}

std::string engine::byte_mismatch(std::uint32_t src, std::uint64_t seq, std::size_t offset, unsigned expected,
                                  unsigned actual) const {
  return fmt::format("verify: rank {} -> rank {} message {}: byte {} of {} is {:#04x}, expected {:#04x}", src, rank_,
                     seq, offset, layout_.msg_size, actual, expected);
}

void engine::fail_client(client_session& s, const std::string& what) {
  if (s.failed) return;
  s.failed = true;
  s.done = clock::now();
  events_.push_back(fmt::format("rank {} -> rank {}: {}", rank_, s.link.rank, what));
}

void engine::fail_server(server_session& sv, const std::string& what) {
  if (sv.failed) return;
  sv.failed = true;
  sv.done = clock::now();
  events_.push_back(fmt::format("rank {} -> rank {}: {}", sv.peer, rank_, what));
}

}  // namespace rdmamesh::engine
