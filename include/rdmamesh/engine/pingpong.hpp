// The latency engine (--mode lat): one ping-pong per active pair on its first QP. The
// initiator sends a ping, the responder answers with a pong, the initiator records half the
// round trip (as perftest's *_lat) in the pair's histogram. How arrival is seen depends on
// the op: WRITE polls the last byte of the slot (it changes every iteration), WRITE_IMM and
// SEND take a receive completion whose immediate says ping or pong and which iteration, READ
// needs no responder and records its whole completion time. Same round protocol as stream.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "rdmamesh/engine/core.hpp"
#include "rdmamesh/stats/histogram.hpp"
#include "rdmamesh/stats/latency.hpp"

namespace rdmamesh::engine {

class pingpong {
 public:
  pingpong(const options& o, const plan::layout& l, std::uint32_t rank, std::uint32_t n_ranks,
           const fabric::endpoint& ep);

  void begin_round(std::uint64_t size, const plan::round_role& role);
  // --connect round, before begin_round: the QPs the endpoint connected for the round.
  void relink(std::span<const fabric::session_link> links);
  void start();
  void progress();

  bool sending() const { return phase_ != phase::drain; }
  bool drained() const;                                  // no ping of ours still waits for its pong
  std::vector<std::uint64_t> completed_by_lane() const;  // pings completed, (rank, lane) as stream
  void expect(std::span<const std::uint64_t> by_lane);   // pings each peer completed toward us
  bool received_all() const;                             // every one of them answered
  void verify_final() {}
  void probe();  // see stream::probe

  std::string pending() const;
  std::uint64_t progress_count() const { return activity_; }        // posts, arrivals, completions so far
  std::vector<stats::latency_summary> round_results() const;        // by rank, as initiator
  const stats::histogram& round_histogram() const { return all_; }  // every pair of this rank
  std::vector<std::uint64_t> round_failures() const;                // 1 per rank whose flow failed
  core& base() { return core_; }

 private:
  enum class phase { warmup, measure, drain };

  struct flow {
    fabric::session_link link;
    bool initiating = false, responding = false, failed = false;
    // initiator
    std::uint64_t pings = 0, limit = 0;  // cumulative pings completed / allowed this round
    bool waiting = false;
    bool timed = false;  // sent_at already holds the next ping's send time
    clock::time_point sent_at{};
    std::unique_ptr<stats::histogram> hist;  // this round's measured samples
    // responder
    std::uint64_t answered = 0, expected = 0;
    bool pong_due = false;
    // send queue
    std::uint64_t posted = 0, completed = 0;
    std::uint32_t until_signal = 1;  // WRs left before the next signaled one
  };

  bool post(flow& f, bool pong, std::uint64_t iter);
  void check_memory(flow& f);
  void poll_send_cq();
  void poll_recv_cq();
  void on_ping(flow& f, std::uint64_t iter, const std::byte* data, std::uint32_t len);
  void on_pong(flow& f, std::uint64_t iter, const std::byte* data, std::uint32_t len);
  void verify_payload(const flow& f, const std::byte* data, std::uint64_t iter, bool pong, std::uint64_t len);
  // Records now - sent_at (halved for a round trip) and makes now the next ping's send time:
  // one clock read per iteration, as perftest takes one timestamp per iteration.
  void sample(flow& f, bool half);
  void fail(flow& f, const std::string& what);
  void advance_phase(clock::time_point now);

  core core_;
  std::uint64_t size_ = 0;
  std::uint32_t cq_mod_ = 1;
  int send_flags_ = 0;
  std::vector<flow> flows_;  // by session index; only lane 0 sessions are used
  std::vector<std::uint64_t> reposts_;
  stats::histogram all_;
  phase phase_ = phase::drain;
  clock::time_point t_start_{}, deadline_measure_{}, deadline_end_{};
  std::uint32_t passes_ = 0;
  std::uint64_t activity_ = 0;  // posts, arrivals and completions so far
};

}  // namespace rdmamesh::engine
