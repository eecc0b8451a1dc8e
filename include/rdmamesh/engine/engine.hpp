// The traffic engine: one rank's N-1 client sessions (sending) and N-1 server sessions
// (receiving), all driven from one progress loop over one send CQ and one receive CQ.
// It knows nothing of MPI: the driver calls progress() while it waits on collectives.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <infiniband/verbs.h>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/fabric/endpoint.hpp"
#include "rdmamesh/plan/layout.hpp"
#include "rdmamesh/stats/counters.hpp"

namespace rdmamesh::engine {

using clock = std::chrono::steady_clock;

// The sending side of one QP.
struct client_session {
  fabric::peer_link link;
  std::uint32_t index = 0;   // peer index (layout order)
  std::uint64_t posted = 0;  // WRs posted
  std::uint64_t completed = 0;
  std::uint64_t limit = 0;                 // WRs to post in total (iterations mode), else max
  std::uint64_t at_start = 0, at_end = 0;  // `completed` at the measured interval's edges
  clock::time_point done{};                // iterations mode: when the last WR completed
  bool failed = false;
};

// The receiving side of one QP.
struct server_session {
  std::uint32_t peer = 0;
  std::uint32_t index = 0;
  ibv_qp* qp = nullptr;
  std::uint64_t received = 0;
  std::uint64_t expected = 0;  // what the sender completed (known after the drain exchange)
  std::uint64_t at_start = 0, at_end = 0;
  clock::time_point done{};
  std::uint64_t verify_errors = 0;
  bool failed = false;
};

class engine {
 public:
  // Posts every receive before returning, so peers may start sending right after.
  engine(const options& o, const plan::layout& l, std::uint32_t rank, std::uint32_t n_ranks,
         const fabric::endpoint& ep);

  void start();     // the clock starts: warm-up, then the measured interval
  void progress();  // one pass: post what the windows allow, poll both CQs

  bool sending() const { return phase_ != phase::drain; }
  bool drained() const;  // every non-failed session has all its WRs completed
  // Sends each peer completed, by rank, for the drain exchange.
  std::vector<std::uint64_t> completed_by_rank() const;
  // What every peer says it completed toward us (by rank); receiving continues until it arrived.
  void expect(std::span<const std::uint64_t> by_rank);
  bool received_all() const;
  // --op write: after every peer drained, check the final contents of our receive slots.
  void verify_final();

  std::string pending() const;                        // what a wait is still waiting for, for timeout messages
  std::vector<stats::pair_counters> results() const;  // by rank
  const std::vector<std::string>& events() const { return events_; }  // failures and mismatches

 private:
  enum class phase { warmup, measure, drain };

  void post_sends(client_session& s);
  void poll_send_cq();
  void poll_recv_cq();
  void post_recv(server_session& sv);
  void on_recv(server_session& sv, const ibv_wc& wc);
  void fail_client(client_session& s, const std::string& what);
  void fail_server(server_session& sv, const std::string& what);
  // Counts a mismatch on `sv`; the first few are kept as events (they name the problem, the count its size).
  void note_mismatch(server_session& sv, std::string line);
  std::string byte_mismatch(std::uint32_t src, std::uint64_t seq, std::size_t offset, unsigned expected,
                            unsigned actual) const;
  void advance_phase(clock::time_point now);

  options opts_;
  plan::layout layout_;
  std::uint32_t rank_;
  std::uint32_t n_ranks_;
  std::byte* buf_;
  std::uint32_t lkey_;
  ibv_cq* send_cq_;
  ibv_cq* recv_cq_;
  std::vector<client_session> clients_;  // by peer index
  std::vector<server_session> servers_;  // by peer index
  phase phase_ = phase::warmup;
  clock::time_point t_start_{}, t_measure_{}, t_end_{};
  clock::time_point deadline_measure_{}, deadline_end_{};
  std::vector<std::string> events_;
  std::uint64_t mismatches_reported_ = 0;
};

}  // namespace rdmamesh::engine
