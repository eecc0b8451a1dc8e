// The streaming engine (--mode bw): per QP a window of up to -t WRs, posted in lists of -l,
// every -Q'th signaled, refilled as completions arrive; receives come from the shared
// receive queue. It runs one schedule round at a time: begin_round() activates the sessions
// of the round, start() starts its clock, progress() drives it. Per-WR work is a few stores
// into a prebuilt WR chain: no allocation, no logging, no virtual calls.
#pragma once

#include <span>
#include <vector>

#include "rdmamesh/engine/core.hpp"
#include "rdmamesh/engine/host.hpp"
#include "rdmamesh/stats/counters.hpp"

namespace rdmamesh::engine {

class stream {
 public:
  // Posts every receive before returning, so peers may start sending right after.
  stream(const options& o, const plan::layout& l, std::uint32_t rank, std::uint32_t n_ranks,
         const fabric::endpoint& ep);

  void begin_round(std::uint64_t size, const plan::round_role& role);
  // RDMAMESH_FAULT=stall: this rank sleeps through the next round's window, from its warm-up's
  // end past the interval's end, so it measures 0 s (duration mode)
  void stall_next_window() { stall_ = true; }
  // --connect round, before begin_round: the QPs the endpoint connected for the round.
  void relink(std::span<const fabric::session_link> links);
  // The measured seconds of the rounds that follow (duration mode): -D, or a retest round's;
  // each run sets its own.
  // the next rounds' measured seconds and warm-up (a retest's are shorter than the run's)
  void set_round(double seconds, double warmup) {
    duration_s_ = seconds;
    warmup_s_ = warmup;
  }
  void start();     // the round's clock: warm-up, then the measured interval
  void progress();  // one pass: post what the windows allow, poll both CQs

  bool sending() const { return phase_ != phase::drain; }
  bool drained() const;  // every active session's WRs completed, the last one signaled
  // Cumulative sends completed per (rank, lane), rank-major: the drain exchange.
  std::vector<std::uint64_t> completed_by_lane() const;
  // What every peer completed toward us per lane; receiving goes on until it all arrived.
  void expect(std::span<const std::uint64_t> by_lane);
  bool received_all() const;
  void verify_final();  // --op write --verify: check what the round left in our slots

  void probe();                 // a liveness probe to every peer on an idle lane-0 QP (see core::post_probe)
  std::string pending() const;  // what a wait still waits for, for timeout messages
  std::uint64_t progress_count() const { return progress_; }  // posts and completions so far
  // What the host gave this thread over the last round's measured interval.
  const host_use& round_host() const { return round_host_; }
  std::vector<stats::pair_counters> round_results() const;  // by rank, lanes summed
  // --interval: bytes/s per peer (lanes summed) in each of `slots` slots of the measured
  // interval, sent (rx = false) or received; [n_ranks x slots], NaN for peers not in the round.
  std::vector<double> round_series(bool rx, std::uint32_t slots) const;
  core& base() { return core_; }

 private:
  enum class phase { warmup, measure, drain };

  struct tx_session {
    fabric::session_link link;
    std::uint64_t posted = 0, completed = 0, signaled_upto = 0;  // cumulative over rounds
    std::uint64_t limit = 0;                                     // cumulative WR count the round may reach
    std::uint64_t next_signal = 0;                               // the next seq + 1 that ends a cq_mod group
    std::uint32_t remote_slot = 0;    // posted % remote_slots, kept as a cursor: no division per WR
    std::uint32_t local_slot = 0;     // posted % the layout's tx slots, likewise
    std::byte* local_base = nullptr;  // the session's first tx slot; its slots are local_stride apart
    std::uint64_t local_stride = 0;   // 0: one slot (the layout has no tx slots per session)
    std::uint32_t local_slots = 1;
    std::uint64_t round_base = 0;  // `completed` when the round began
    std::uint64_t at_start = 0, at_end = 0;
    clock::time_point done{};
    bool active = false, failed = false;
    bool paced = false;  // RDMAMESH_FAULT=slow holds this session back
  };
  struct rx_session {
    std::uint32_t peer = 0, lane = 0;
    std::uint64_t received = 0, expected = 0, limit = 0, round_base = 0, at_start = 0, at_end = 0;
    std::uint64_t verify_errors = 0, verify_base = 0;
    clock::time_point done{};
    bool active = false, failed = false;
  };

  void post_sends(tx_session& s);
  void pace();  // RDMAMESH_FAULT=slow: start a pause after a paced session's completion
  bool post_batch(tx_session& s, std::uint64_t n, bool signal_last);
  bool post_list(tx_session& s, std::uint64_t n, bool signal_last);  // post_batch, inlined in post_sends
  void post_failed(tx_session& s, std::uint64_t n, int rc);          // cold: the error's text
  void prepare_wrs();                   // what every WR of a round shares, written once: a post fills in the rest
  void aim_chain(const tx_session& s);  // without --verify: the chain's addresses for session s
  void poll_send_cq();
  void poll_recv_cq();
  void on_recv(rx_session& r, const ibv_wc& wc);
  void check_payload(rx_session& r, const std::byte* at, std::uint64_t seq);  // --verify, message `seq` of r
  void check_read(const tx_session& s, std::uint64_t from, std::uint64_t to);
  void fail_tx(tx_session& s, const std::string& what);
  void fail_rx(rx_session& r, const std::string& what);
  void advance_phase(clock::time_point now);
  void mark(clock::time_point now, bool last);  // --interval: every session's count, now

  core core_;
  std::uint64_t size_ = 0;
  std::uint32_t cq_mod_ = 1;
  std::uint32_t lists_per_pass_ = 8;  // post lists a session posts per pass before the CQs are polled
  int send_flags_ = 0;                // IBV_SEND_INLINE when the size allows
  ibv_wr_opcode opcode_ = IBV_WR_RDMA_WRITE;
  std::vector<tx_session> tx_;   // by session index
  std::vector<rx_session> rx_;   // by session index
  std::vector<ibv_send_wr> wr_;  // the post-list chain, reused for every session
  std::vector<ibv_sge> sge_;
  // Without --verify nothing reads which slot a message used, so WR i of the chain always
  // carries slot i's addresses, written when another session takes the chain (as perftest
  // re-posts one prepared list); with --verify every WR's slots rotate with its seq.
  bool rotate_ = false;
  std::uint32_t chain_session_ = no_session;  // the session whose addresses the chain carries
  static constexpr std::uint32_t no_session = ~std::uint32_t{0};
  std::vector<std::uint64_t> reposts_;
  phase phase_ = phase::drain;
  clock::time_point t_start_{}, t_measure_{}, t_end_{}, deadline_measure_{}, deadline_end_{};
  std::uint32_t passes_ = 0;
  bool idle_ = false;           // nothing to send or receive in the round
  int polled_ = 0;              // completions seen by the current pass
  int posted_ = 0;              // WRs posted by the current pass
  bool worked_ = false;         // the last pass posted or polled something
  std::uint64_t progress_ = 0;  // WRs posted and completions polled, cumulative
  std::uint64_t all_passes_ = 0, idle_passes_ = 0;
  host_use host_at_measure_{}, round_host_{};
  host_use snapshot_host() const;
  // RDMAMESH_FAULT=slow (test only): after a completion the paced sessions, together, pause
  // for their last active stretch times `pause_`: they run about 1 / (1 + pause_) of the time,
  // as if this rank's NIC were that much slower toward those peers
  double pause_ = 0;
  clock::time_point resume_at_{}, active_since_{};
  // --interval: marks read from the clock the hot loop already reads, [mark] and [mark][session]
  double interval_s_ = 0;
  double duration_s_ = 0;
  double warmup_s_ = 0;
  bool stall_ = false;  // RDMAMESH_FAULT=stall, for the next window
  clock::time_point next_mark_{};
  std::vector<double> mark_at_;
  std::vector<std::uint64_t> mark_tx_, mark_rx_;
};

}  // namespace rdmamesh::engine
