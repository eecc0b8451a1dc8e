// What both engines (stream: bandwidth and message rate; pingpong: latency) share: the
// rank's plain handles, the session tables, the shared receive queue, and the event log.
// Nothing here calls MPI: the driver runs the collectives and calls progress() meanwhile.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <infiniband/verbs.h>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/fabric/endpoint.hpp"
#include "rdmamesh/plan/layout.hpp"
#include "rdmamesh/plan/schedule.hpp"
#include "rdmamesh/util/fault.hpp"

namespace rdmamesh::engine {

using clock = std::chrono::steady_clock;

// Messages of a pair that lane `lane` of `lanes` carries: the pair's total, split evenly.
constexpr std::uint64_t lane_share(std::uint64_t total, std::uint32_t lanes, std::uint32_t lane) {
  return total / lanes + (lane < total % lanes ? 1 : 0);
}

// wr_id of a send WR: session index << 40 | low 40 bits of its sequence number. A completion
// retires its WR and, RC being in order, every earlier one of the session.
inline constexpr int seq_bits = 40;
inline constexpr std::uint64_t seq_mask = (std::uint64_t{1} << seq_bits) - 1;
constexpr std::uint64_t make_wr_id(std::uint32_t session, std::uint64_t seq) {
  return (std::uint64_t{session} << seq_bits) | (seq & seq_mask);
}
// A liveness probe's wr_id: the top bit, then the session. No data WR comes near it.
inline constexpr std::uint64_t probe_bit = std::uint64_t{1} << 63;
constexpr bool is_probe(std::uint64_t wr_id) {
  return (wr_id & probe_bit) != 0;
}

// How many WRs a completion for `wr_id` retires when `completed` were retired before.
constexpr std::uint64_t retired_by(std::uint64_t wr_id, std::uint64_t completed) {
  return (((wr_id & seq_mask) - (completed & seq_mask)) & seq_mask) + 1;
}

// A round's deadlines from its start: in duration mode the measured interval follows the
// warm-up and lasts `duration_s` (-D, or a retest round's); iterations mode has neither (its
// messages end the round).
struct round_deadlines {
  clock::time_point measure_from, end_by;
};
round_deadlines deadlines_for(const options& o, double duration_s, double warmup_s, clock::time_point start);

class core {
 public:
  core(const options& o, const plan::layout& l, std::uint32_t rank, std::uint32_t n_ranks, const fabric::endpoint& ep);

  const options& opts() const { return opts_; }
  const plan::layout& layout() const { return layout_; }
  std::uint32_t rank() const { return rank_; }
  std::uint32_t n_ranks() const { return n_ranks_; }
  std::span<const fabric::session_link> links() const { return links_; }
  // --connect round: this round's QPs (null where a session has none).
  void relink(std::span<const fabric::session_link> links);

  // The session a receive completion belongs to (binary search over QP numbers); -1 if none.
  int session_of_qp(std::uint32_t qp_num) const;

  // Receives for the SRQ: none-scatter for WRITE_WITH_IMM, a pool slot each for SEND.
  void post_initial_receives();
  void repost(std::span<const std::uint64_t> wr_ids);  // one chained ibv_post_srq_recv

  // --op read, --verify: every slot a peer may read holds a known pattern.
  void fill_read_sources();

  std::byte* buf() const { return buf_; }
  std::uint32_t lkey() const { return lkey_; }
  ibv_cq* send_cq() const { return send_cq_; }
  ibv_cq* recv_cq() const { return recv_cq_; }
  std::uint32_t inline_size() const { return inline_size_; }

  // Failures and mismatches, one line each; mismatch lines are capped (the count is exact).
  void event(std::string line) { events_.push_back(std::move(line)); }
  void mismatch(std::string line);
  const std::vector<std::string>& events() const { return events_; }
  std::vector<std::string> take_events();

  // The event line for a failed completion. A retry-exceeded status also makes the peer a
  // suspect: its NIC stopped acknowledging, the mark of a dead process or a broken link.
  std::string completion_error(const ibv_wc& wc, const char* what);
  const std::vector<std::uint32_t>& suspects() const { return suspects_; }  // sorted peer ranks

  // A zero-length signaled RDMA WRITE on an idle session's QP: a live peer's NIC acknowledges
  // it at once, a dead peer's does not, and the QP reports retry-exceeded. False if the post failed.
  bool post_probe(const fabric::session_link& s);

  // RDMAMESH_FAULT=corrupt:SRC:DST:MSG on rank SRC: damage that one payload after filling it.
  void inject(const std::optional<fault>& f);
  bool corrupts(std::uint32_t peer, std::uint32_t lane, std::uint64_t seq) const {
    return peer == corrupt_peer_ && lane == 0 && seq == corrupt_seq_;
  }
  // RDMAMESH_FAULT=slow:SRC:DST:PCT on rank SRC: the share of its rate toward `peer` (1: full).
  double rate_share(std::uint32_t peer) const { return slow_ && slow_->hits(rank_, peer) ? slow_->pct / 100 : 1.0; }

  // Another rank is pinned onto one of this rank's CPUs: give the CPU away on empty passes.
  void set_crowded(bool crowded) { crowded_ = crowded; }
  bool crowded() const { return crowded_; }

 private:
  options opts_;
  plan::layout layout_;
  std::uint32_t rank_;
  std::uint32_t n_ranks_;
  std::byte* buf_;
  std::uint32_t lkey_;
  ibv_cq* send_cq_;
  ibv_cq* recv_cq_;
  ibv_srq* srq_;
  std::uint32_t inline_size_;
  std::vector<fabric::session_link> links_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_qp_;  // (qp_num, session), sorted
  std::vector<std::string> events_;
  std::uint64_t mismatches_ = 0;
  std::vector<std::uint32_t> suspects_;
  bool crowded_ = false;
  std::uint32_t corrupt_peer_ = UINT32_MAX;
  std::uint64_t corrupt_seq_ = 0;
  std::optional<fault> slow_;
};

}  // namespace rdmamesh::engine
