// The driver. Setup is a sequence of agreed steps (any rank's failure stops all ranks with
// one message). Then, for each pattern and each size, the pattern's rounds run one after
// another over the connections made once; rank 0 assembles, prints and writes each run as
// it ends, so a later failure loses nothing already measured.
#include "rdmamesh/app/run.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "rdmamesh/app/agree.hpp"
#include "rdmamesh/app/ledger.hpp"
#include "rdmamesh/app/liveness.hpp"
#include "rdmamesh/app/progress.hpp"
#include "rdmamesh/app/provenance.hpp"
#include "rdmamesh/app/round.hpp"
#include "rdmamesh/app/same_options.hpp"
#include "rdmamesh/app/watchdog.hpp"
#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/engine/pingpong.hpp"
#include "rdmamesh/engine/stream.hpp"
#include "rdmamesh/fabric/endpoint.hpp"
#include "rdmamesh/fabric/placement.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/fabric/select.hpp"
#include "rdmamesh/fabric/topology.hpp"
#include "rdmamesh/io/report.hpp"
#include "rdmamesh/io/results_file.hpp"
#include "rdmamesh/mpi/beacon.hpp"
#include "rdmamesh/plan/layout.hpp"
#include "rdmamesh/plan/schedule.hpp"
#include "rdmamesh/stats/matrix.hpp"
#include "rdmamesh/stats/retest.hpp"
#include "rdmamesh/stats/series.hpp"
#include "rdmamesh/stats/setup.hpp"
#include "rdmamesh/util/fault.hpp"
#include "rdmamesh/util/stop.hpp"
#include "rdmamesh/util/units.hpp"

namespace rdmamesh::app {
namespace {

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + '\n';
  return out;
}

std::vector<std::string> split_lines(const std::vector<std::string>& blobs) {
  std::vector<std::string> out;
  for (const auto& b : blobs) {
    std::size_t pos = 0;
    while (pos < b.size()) {
      const std::size_t eol = b.find('\n', pos);
      out.push_back(b.substr(pos, eol - pos));
      pos = eol == std::string::npos ? b.size() : eol + 1;
    }
  }
  return out;
}

void print(const std::string& text) {
  fmt::print("{}", text);
  std::fflush(stdout);
}

std::string_view signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "a signal";
  }
}

// Everything the run loop needs on every rank.
struct context {
  const mpi::world& w;
  const options& o;
  std::uint32_t n;
  std::uint32_t me;
  ledger& book;  // rank 0 keeps the records; elsewhere it stays empty
  std::uint32_t inline_size;
  std::uint32_t window;
  const std::vector<fabric::rank_info>& ranks;
  std::span<const std::int32_t> node_of;
  std::uint32_t nodes;
  watchdog& dog;
  liveness& live;
  fabric::endpoint& ep;
  const std::optional<fault>& injected;
  // a peer fell silent during a round: report, make sure rank 0 records why, exit
  std::function<void(const std::string&, const std::optional<liveness::verdict>&, const std::vector<std::uint32_t>&)>
      give_up;
};

std::string host_of(const context& c, std::uint32_t r) {
  return std::string(fabric::text(c.ranks[r].host));
}

// The line a rank prints when a peer stopped answering: who, how this rank knows, and what
// it was waiting for. Without a verdict the engine's suspects (peers whose NIC stopped
// acknowledging) are named, if any.
std::string stuck_line(const context& c, const std::optional<liveness::verdict>& v,
                       const std::vector<std::uint32_t>& suspects, const std::string& what) {
  const std::string me = fmt::format("rank {} ({})", c.me, host_of(c, c.me));
  if (v && v->reporter >= 0 && v->rank < 0) {
    return fmt::format("{}: ended the job because rank {} gave up: {}", me, v->reporter, v->reason);
  }
  if (v && v->rank < 0) return fmt::format("{}: the job ended while {}: {}", me, what, v->reason);
  if (v) {
    const auto r = static_cast<std::uint32_t>(v->rank);
    return fmt::format("{}: rank {} ({}) stopped answering ({}) while {}; results so far are kept", me, r,
                       host_of(c, r), v->reason, what);
  }
  if (suspects.empty()) {
    return fmt::format(
        "{}: the other ranks stopped answering while {}; a rank died or hangs (see the launcher's messages), or "
        "raise --timeout (now {:g} s)",
        me, what, c.o.timeout_s);
  }
  std::vector<std::string> names;
  for (auto r : suspects) names.push_back(fmt::format("rank {} ({})", r, host_of(c, r)));
  return fmt::format("{}: {} stopped answering (RDMA retries to {} ran out) while {}; results so far are kept", me,
                     fmt::join(names, ", "), suspects.size() == 1 ? "it" : "them", what);
}

// What one rank measured over all rounds of one run.
struct rank_run {
  std::vector<stats::pair_counters> counters;     // bw, by peer rank
  std::vector<double> tx_t, rx_t;                 // bw --interval: [peer][slot] bytes/s
  std::vector<stats::latency_summary> latencies;  // lat, by peer rank (as initiator)
  std::vector<std::uint64_t> lat_failed;          // lat, 1 per peer whose flow failed
  stats::histogram lat_all;                       // lat, every flow of this rank
  std::vector<std::string> events;
};

void merge_latency(rank_run& acc, engine::pingpong& eng, const plan::round_role& role) {
  const auto res = eng.round_results();
  const auto failed = eng.round_failures();
  for (std::uint32_t p : role.send_to) acc.latencies[p] = res[p];
  for (std::size_t p = 0; p < failed.size(); ++p) acc.lat_failed[p] |= failed[p];
  acc.lat_all.merge(eng.round_histogram());
}

// Rank 0 prints the run and hands it to the ledger; every rank returns whether its own part was clean.
// `stopped` is set when a stop request (on any rank) ended the run before its last round.
// A retest run: the plan it runs and, on rank 0, the send bandwidth of the run it retests.
struct retest_of {
  std::int32_t index = -1;
  const stats::retest_plan* plan = nullptr;
  const stats::square<double>* before = nullptr;
};

// --connect round: QPs for this round's partners, their infos swapped with those partners only
// (O(q) records, never N), then RTR/RTS. A failure is one line per session; the pair fails,
// the job goes on. Every partner takes part in the swap, whatever failed on its side.
template <class Guarded>
std::vector<std::string> connect_round(const context& c, const plan::round_role& role, Guarded& guarded) {
  std::vector<std::uint32_t> partners = role.send_to;
  partners.insert(partners.end(), role.recv_from.begin(), role.recv_from.end());
  std::sort(partners.begin(), partners.end());
  partners.erase(std::unique(partners.begin(), partners.end()), partners.end());
  std::vector<std::string> failed;
  std::vector<fabric::conn_info> mine;
  try {
    mine = c.ep.round_infos(partners);
  } catch (const std::exception& e) {
    failed.push_back(fmt::format("rank {}: making QPs for the round failed: {}", c.me, e.what()));
    mine.assign(partners.size() * c.o.qps, fabric::conn_info{});  // the partners see a bad record and say so
  }
  const auto theirs = guarded("exchanging a round's connections with its partners", [&] {
    return c.w.exchange_with(std::span<const std::uint32_t>(partners), std::span<const fabric::conn_info>(mine),
                             c.o.qps);
  });
  if (failed.empty()) failed = c.ep.connect_round(partners, theirs, c.injected);
  return failed;
}

template <class Engine>
bool run_one(const context& c, Engine& eng, const plan::subset_schedule& sched, std::uint64_t size,
             std::uint32_t active_per_node, std::uint32_t index, bool& stopped, const retest_of& retest = {}) {
  rank_run acc;
  acc.counters.assign(c.n, {});
  const std::uint32_t slots = std::is_same_v<Engine, engine::stream> && c.o.duration_mode()
                                  ? stats::series_slots(c.o.duration_s, c.o.interval_s)
                                  : 0;
  acc.tx_t.assign(std::size_t{c.n} * slots, std::numeric_limits<double>::quiet_NaN());
  acc.rx_t = acc.tx_t;
  acc.latencies.assign(c.n, {});
  acc.lat_failed.assign(c.n, 0);
  // every collective is bounded: if a peer never comes, the watchdog names it and ends the run
  auto guarded = [&](const char* what, auto&& collective) {
    guarded_wait g(
        c.dog,
        stuck_line(c, std::nullopt, eng.base().suspects(), fmt::format("{} (waited {:g} s)", what, c.o.timeout_s)),
        c.o.timeout_s);
    return collective();
  };
  auto on_stuck = [&](const std::optional<liveness::verdict>& v, const std::string& what) {
    c.give_up(stuck_line(c, v, eng.base().suspects(), what), v, eng.base().suspects());
  };
  std::uint32_t rounds_done = 0;
  double connect_s = 0;  // --connect round: this rank's time re-targeting QPs, outside every interval
  for (std::uint32_t round = 0; round < sched.rounds(); ++round) {
    const plan::round_role role = sched.role(round, c.me);
    if (c.o.connect == connect_kind::round) {
      const auto t0 = engine::clock::now();
      for (auto& e : connect_round(c, role, guarded)) acc.events.push_back(std::move(e));
      eng.relink(c.ep.sessions());
      connect_s += std::chrono::duration<double>(engine::clock::now() - t0).count();
    }
    eng.begin_round(size, role);
    guarded("starting a round", [&] {
      c.w.barrier();
      return 0;
    });
    auto errors = run_round(c.w, eng, c.o, c.live, on_stuck);
    if constexpr (std::is_same_v<Engine, engine::stream>) {
      stats::merge_round(acc.counters, eng.round_results(), role, static_cast<int>(round));
      if (slots > 0) {  // each pair's series from the round that measured it, as its counters
        const auto tx = eng.round_series(false, slots), rx = eng.round_series(true, slots);
        auto take = [&](std::vector<double>& into, const std::vector<double>& from, std::uint32_t p) {
          const auto at = static_cast<std::ptrdiff_t>(std::size_t{p} * slots);
          std::copy_n(from.begin() + at, slots, into.begin() + at);
        };
        for (std::uint32_t p : role.send_to) take(acc.tx_t, tx, p);
        for (std::uint32_t p : role.recv_from) take(acc.rx_t, rx, p);
      }
    } else {
      merge_latency(acc, eng, role);
    }
    for (auto& e : eng.base().take_events()) acc.events.push_back(std::move(e));
    for (auto& e : errors) acc.events.push_back(std::move(e));
    ++rounds_done;
    // Slurm and mpirun signal every rank, a user may signal one: all learn of it here
    if (!guarded("agreeing whether to go on", [&] { return c.w.all_true(!stop_requested()); })) {
      stopped = true;
      break;
    }
  }

  bool clean = acc.events.empty();
  for (const auto& p : acc.counters) clean = clean && p.flags == 0 && p.verify_errors == 0;
  for (auto f : acc.lat_failed) clean = clean && f == 0;

  auto events =
      split_lines(guarded("collecting events", [&] { return c.w.allgather_strings(join_lines(acc.events)); }));
  io::run_record r;
  r.index = index;
  r.pattern = sched.pattern();
  r.size = size;
  r.rounds = sched.rounds();
  r.rounds_done = rounds_done;
  r.interrupted = stopped;
  r.active_per_node = active_per_node;
  if (active_per_node > 0) {
    r.active.assign(c.n, 0);
    for (auto m : sched.members()) r.active[m] = 1;
  }
  if (c.o.connect == connect_kind::round) {
    r.round_connect_s = guarded("gathering connect times", [&] { return c.w.max(connect_s); });
  }
  r.cq_mod = plan::cq_mod_for(c.o, size, c.window);
  r.inline_size = (c.o.op != op_kind::read && size <= c.inline_size) ? c.inline_size : 0;
  r.events = std::move(events);
  if constexpr (std::is_same_v<Engine, engine::stream>) {
    const auto rows =
        guarded("gathering counters", [&] { return c.w.gather(std::span<const stats::pair_counters>(acc.counters)); });
    if (slots > 0) {
      const auto tx_t =
          guarded("gathering the time series", [&] { return c.w.gather(std::span<const double>(acc.tx_t)); });
      const auto rx_t =
          guarded("gathering the time series", [&] { return c.w.gather(std::span<const double>(acc.rx_t)); });
      if (c.me == 0) {  // gathered [rank][peer][slot] -> [slot][src][dst]; rx rows are the receiver's
        const std::size_t n = c.n;
        r.slots = slots;
        r.interval_s = c.o.interval_s;
        r.tx_bw_t.assign(slots * n * n, std::numeric_limits<double>::quiet_NaN());
        r.rx_bw_t = r.tx_bw_t;
        const bool rx_seen = receiver_sees_messages(c.o.op);
        for (std::size_t a = 0; a < n; ++a) {
          for (std::size_t b = 0; b < n; ++b) {
            for (std::size_t k = 0; k < slots; ++k) {
              r.tx_bw_t[(k * n + a) * n + b] = tx_t[(a * n + b) * slots + k];
              if (rx_seen) r.rx_bw_t[(k * n + a) * n + b] = rx_t[(b * n + a) * slots + k];
            }
          }
        }
      }
    }
    if (c.me == 0) {
      r.bw = stats::assemble(rows, c.n, size, receiver_sees_messages(c.o.op));
      if (retest.plan) {  // a few pairs alone: their verdicts, not outliers among themselves
        r.retest_of = retest.index;
        r.retest = stats::judge_retest(*retest.plan, *retest.before, r.bw->tx_bw, c.o.slow_pct);
        r.retest_controls = retest.plan->controls.size();
      } else {
        r.outliers = stats::find_outliers(r.bw->tx_bw, r.bw->flags, r.bw->round, c.node_of, c.o.slow_pct);
        r.outlier_text = io::outlier_lines(r, c.ranks);
      }
    }
  } else {
    const auto rows = guarded("gathering latencies",
                              [&] { return c.w.gather(std::span<const stats::latency_summary>(acc.latencies)); });
    const auto failed =
        guarded("gathering failures", [&] { return c.w.gather(std::span<const std::uint64_t>(acc.lat_failed)); });
    const auto counts = guarded("summing histograms", [&] { return c.w.reduce_sum(acc.lat_all.counts()); });
    struct moments {
      std::uint64_t count, min, max;
      double mean, m2;
    };
    const moments mine{acc.lat_all.count(), acc.lat_all.min(), acc.lat_all.max(), acc.lat_all.mean(), acc.lat_all.m2()};
    const auto all_moments =
        guarded("gathering moments", [&] { return c.w.gather(std::span<const moments>(&mine, 1)); });
    if (c.me == 0) {
      r.lat = stats::assemble_latency(rows, c.n);
      r.lat_all.add_counts(counts);
      for (const auto& m : all_moments) r.lat_all.merge_moments(m.count, m.min, m.max, m.mean, m.m2);
      r.lat_flags = stats::square<std::uint8_t>(c.n, 0);
      // a failed flow taints the pair in both directions: either end may have seen it
      for (std::uint32_t a = 0; a < c.n; ++a) {
        for (std::uint32_t b = 0; b < c.n; ++b) {
          if (failed[std::size_t{a} * c.n + b] != 0) r.lat_flags.at(a, b) = r.lat_flags.at(b, a) = 1;
        }
      }
    }
  }
  if (c.me == 0) {
    print(io::format_run(c.o, r));
    for (const auto& line : io::window_lines(c.o, r, c.ranks)) print(line + "\n");
    for (std::size_t i = 0; i < r.outlier_text.size(); ++i) {
      // failed pairs have their own "# failed pairs:" line already
      if (r.outliers->found[i].kind != stats::outlier_kind::failed) print(r.outlier_text[i] + "\n");
    }
    for (const auto& line : io::retest_lines(r, c.ranks)) print(line + "\n");
    print(io::format_scaling(r, c.node_of, c.nodes));
    c.book.add(std::move(r));
  }
  return clean;
}

// Rank 0's thread that marks the file the moment a stop request arrives; released (and
// joined) when the job ends, on every path out, exceptions included.
class stop_noter {
 public:
  explicit stop_noter(ledger* book) {
    if (!book) return;
    thread_ = std::thread([book] {
      if (const int sig = wait_for_stop()) {
        book->abandon(
            fmt::format("incomplete: interrupted by {} before the run in progress was written (the launcher "
                        "or the batch system ended the job, or a user did; a rank may have died)",
                        signal_name(sig)));
      }
    });
  }
  ~stop_noter() { release(); }
  stop_noter(const stop_noter&) = delete;
  stop_noter& operator=(const stop_noter&) = delete;
  void release() {
    if (!thread_.joinable()) return;
    release_stop_waiter();
    thread_.join();
  }

 private:
  std::thread thread_;
};

// What setup hands the job: everything made once, on every rank.
struct setup {
  std::uint32_t n = 0, me = 0;
  mpi::node_info node;
  std::vector<std::uint32_t> local_of;  // by rank
  std::vector<std::int32_t> node_of;    // by rank
  std::vector<std::uint32_t> steps{0};  // --scaling steps; 0: every rank active
  plan::layout layout;
  std::optional<fault> injected;
  std::unique_ptr<io::results_file> file;  // rank 0 with -o only
  std::unique_ptr<fabric::endpoint> ep;
  std::vector<fabric::rank_info> ranks;
  std::unique_ptr<engine::stream> streamer;  // --mode bw
  std::unique_ptr<engine::pingpong> pinger;  // --mode lat
};

// RDMAMESH_FAULT=kill / term: the signal as if sent from outside (kill(getpid()) is
// process-directed, like `kill` and the launcher's), that many seconds into the run.
void arm_signal_fault(const fault& f, std::uint32_t me) {
  int sig = 0;
  if (f.what == fault::kind::kill && f.src == me) sig = SIGKILL;
  if (f.what == fault::kind::term) sig = SIGTERM;
  if (sig == 0) return;
  std::thread([seconds = f.seconds, sig] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    ::kill(::getpid(), sig);
  }).detach();
}

// --retest: rank 0 picks the last run's slow pairs and a few healthy control pairs, every rank
// learns them, and they run again, each alone, as a run of their own (`index` moves on).
template <class Engine>
bool retest_slow_pairs(const context& c, Engine& eng, std::uint64_t size, std::uint32_t& index, bool& stopped) {
  if constexpr (!std::is_same_v<Engine, engine::stream>) {
    return true;
  } else {
    stats::retest_plan plan;
    std::optional<stats::square<double>> before;
    std::string text;
    if (c.me == 0) {
      const auto last = c.book.last();
      if (last && last->bw && last->retest_of < 0) {
        // at most 2 x N slow pairs (a slow rank's row and column), 4 controls
        plan = stats::plan_retest(last->bw->tx_bw, last->bw->flags, last->bw->round, c.o.slow_pct, 2 * c.n, 4);
        before = last->bw->tx_bw;
      }
      if (!plan.slow.empty()) text = stats::encode_pairs(plan.slow) + "|" + stats::encode_pairs(plan.controls);
    }
    {
      guarded_wait g(c.dog, fmt::format("rank {}: the other ranks stopped answering before a retest", c.me),
                     c.o.timeout_s);
      text = c.w.bcast_string(text);
    }
    if (text.empty()) return true;
    const auto bar = text.find('|');
    plan.slow = stats::decode_pairs(text.substr(0, bar));
    plan.controls = stats::decode_pairs(text.substr(bar + 1));
    stats::pair_list all = plan.slow;
    all.insert(all.end(), plan.controls.begin(), plan.controls.end());
    const plan::subset_schedule sched(plan::alone_rounds(all, c.n), c.n);
    if (c.me == 0 && !c.o.quiet) {
      fmt::print(stderr, "[retest] {} slow pair(s) and {} control pair(s) alone, {} rounds\n", plan.slow.size(),
                 plan.controls.size(), sched.rounds());
      std::fflush(stderr);
    }
    const retest_of what{static_cast<std::int32_t>(index - 1), &plan, before ? &*before : nullptr};
    const bool clean = run_one(c, eng, sched, size, 0, index, stopped, what);
    ++index;
    return clean;
  }
}

// Every pattern, size and --scaling step in order; false if any rank's part was not clean.
template <class Engine>
bool run_patterns(const context& c, const setup& s, Engine& eng, bool& stopped) {
  bool clean = true;
  std::uint32_t index = 0;
  std::vector<std::uint32_t> everyone(c.n);
  for (std::uint32_t r = 0; r < c.n; ++r) everyone[r] = r;
  progress shown(c.o, static_cast<std::uint32_t>(c.o.patterns.size() * c.o.sizes.size() * s.steps.size()),
                 c.me == 0 && !c.o.quiet);
  for (auto pattern : c.o.patterns) {
    if (stopped) break;
    for (std::uint64_t size : c.o.sizes) {
      for (std::uint32_t k : s.steps) {
        if (stopped) break;
        const plan::subset_schedule sched(pattern, k ? plan::active_ranks(s.local_of, k) : everyone, c.n,
                                          c.o.bidirectional, c.o.target);
        if (s.injected && s.injected->run == index) arm_signal_fault(*s.injected, c.me);
        if constexpr (std::is_same_v<Engine, engine::stream>) {
          if (s.injected && s.injected->what == fault::kind::stall && s.injected->src == c.me &&
              s.injected->run == index) {
            eng.stall_next_window();
          }
        }
        if (const auto line = shown.start(index, pattern, size, sched.rounds()); !line.empty()) {
          std::fputs(line.c_str(), stderr);
          std::fflush(stderr);
        }
        clean = run_one(c, eng, sched, size, k, index, stopped) && clean;
        ++index;
        if (c.o.retest && !stopped && k == 0 && (pattern == pattern_kind::mesh || pattern == pattern_kind::shift)) {
          clean = retest_slow_pairs(c, eng, size, index, stopped) && clean;
        }
      }
    }
    if (c.me == 0 && !stopped) c.book.close_pattern(pattern);
  }
  return clean;
}

// The measured part of the job, after setup: its failure paths (a stop request, a silent
// peer, a collective that never completes) and the rounds of every run; the exit code.
int run_job(const mpi::world& w, const options& o, setup& s) {
  const std::uint32_t n = s.n, me = s.me;
  io::results_file* file = s.file.get();
  // A stop request (Slurm's scancel, mpirun tearing the job down after a rank died): rank 0
  // notes it in the file at once from a thread of its own, since the main thread may sit in
  // a collective and the launcher's SIGKILL follows within about a second.
  ledger book(o, s.steps, s.node_of, static_cast<std::uint32_t>(s.node.nodes), file);
  stop_noter noter(file ? &book : nullptr);

  // When peers stop answering: say so, make sure rank 0 has marked the file incomplete with
  // everything finished so far, and end this process. Rank 0 writes before it tells the
  // others, so their exit (and the launcher's teardown) cannot cut the write short.
  mpi::beacon beacon(w);
  liveness live(beacon, o.timeout_s);
  auto leave = [&](const std::string& line) {
    fmt::print(stderr, "rdmamesh: error: {}\n", line);
    std::fflush(stdout);
    std::fflush(stderr);
    if (me == 0) book.abandon("incomplete: " + line);
  };
  auto give_up = [&](const std::string& line, const std::optional<liveness::verdict>& v,
                     const std::vector<std::uint32_t>& suspects) {
    leave(line);
    // who fell silent, and how this rank knows: rank 0 tells everyone, the others tell rank 0
    int culprit = -1;
    std::string reason = line;
    if (v && v->rank >= 0) {
      culprit = v->rank;
      reason = v->reporter >= 0 || v->from_root ? v->reason : fmt::format("rank {} {}", me, v->reason);
    } else if (!v && !suspects.empty()) {
      culprit = static_cast<int>(suspects.front());
      reason = fmt::format("rank {}'s RDMA retries to it ran out", me);
    }
    if (me == 0) {
      live.announce(culprit, reason, 1.0);
      if (v && v->reporter >= 0) live.acknowledge(v->reporter);
    } else if (!(v && v->from_root)) {
      live.report(culprit, reason, o.timeout_s + 5);  // rank 0 may be in a collective: its watchdog then writes
    }
    std::_Exit(exit_system);
  };
  // the watchdog's thread must not call MPI while the main thread sits in a collective
  watchdog dog([&](const std::string& line) {
    leave(line);
    if (me != 0) std::this_thread::sleep_for(std::chrono::seconds(2));  // rank 0's watchdog writes the file
    std::_Exit(exit_system);
  });

  const context c{w,
                  o,
                  n,
                  me,
                  book,
                  s.ep->inline_size(),
                  s.layout.window,
                  s.ranks,
                  s.node_of,
                  static_cast<std::uint32_t>(s.node.nodes),
                  dog,
                  live,
                  *s.ep,
                  s.injected,
                  give_up};
  bool stopped = false;
  bool clean = s.streamer ? run_patterns(c, s, *s.streamer, stopped) : run_patterns(c, s, *s.pinger, stopped);

  {
    guarded_wait g(dog, fmt::format("rank {}: the other ranks stopped answering at the end of the run", me),
                   o.timeout_s);
    clean = w.all_true(clean);
  }
  if (me == 0) {
    if (stopped) {
      const std::string line =
          fmt::format("interrupted by {}: wrote the {} run(s) measured so far, the last one cut short{}",
                      stop_signal() ? signal_name(stop_signal()) : "a signal to another rank", book.runs(),
                      file ? fmt::format(", to {}", file->path()) : std::string());
      book.finish(false, line);
      fmt::print(stderr, "rdmamesh: error: {}\n", line);
    } else {
      print(book.finish(true, clean ? "ok" : "finished with failures"));
    }
  }
  noter.release();
  {
    guarded_wait g(dog, fmt::format("rank {}: the other ranks stopped answering at the end of the run", me),
                   o.timeout_s);
    w.barrier();  // no rank tears down its QPs while a peer might still touch them
  }
  if (stopped) return exit_interrupted;
  return clean ? exit_ok : exit_run_failures;
}

}  // namespace

int run(const mpi::world& w, int argc, char** argv) {
  setup s;
  const auto n = s.n = static_cast<std::uint32_t>(w.size());
  const auto me = s.me = static_cast<std::uint32_t>(w.rank());

  // cli: parse everywhere; help and version print once
  const parse_outcome parsed = parse_command_line(argc, argv);
  int code = agree(w, parsed.opts ? exit_ok : parsed.exit_code, parsed.opts ? std::string() : parsed.text);
  if (!w.all_true(parsed.opts.has_value())) {
    if (me == 0 && code == exit_ok) print(parsed.text);
    return code;
  }
  const options& o = *parsed.opts;

  std::optional<fault>& injected = s.injected;
  code = step(w, [&] {
    if (n < 2) {
      throw usage_error(
          "rdmamesh needs at least 2 ranks (one per end of a pair); launch it with mpirun -np N or "
          "srun -n N, N >= 2");
    }
    check_same_options(w, o);
    injected = fault_from_env(n);
  });
  if (code != exit_ok) return code;

  // plan: the buffer layout and the schedules' shape, before anything is allocated; --scaling
  // steps need every rank's place on its node
  const mpi::node_info node = s.node = w.node();
  const auto& local_of = s.local_of = w.allgather(static_cast<std::uint32_t>(node.local_rank));
  s.node_of = w.allgather(static_cast<std::int32_t>(node.node));
  auto& steps = s.steps;
  auto& layout = s.layout;
  code = step(w, [&] {
    for (auto p : o.patterns) (void)plan::schedule(p, n, o.bidirectional, o.target);  // validates --target
    if (o.scaling) steps = plan::scaling_steps(local_of, *std::max_element(local_of.begin(), local_of.end()) + 1);
    layout = plan::make_layout(o, n);
  });
  if (code != exit_ok) return code;

  // io: the output file exists before any traffic, so a bad path costs nothing
  auto& file = s.file;
  code = step(w, [&] {
    if (me == 0 && !o.output.empty()) {
      file = std::make_unique<io::results_file>(o.output, o.force, n, join_command_line(argc, argv));
      auto config = describe(o);
      if (injected) config.emplace_back("RDMAMESH_FAULT", std::getenv("RDMAMESH_FAULT"));
      file->write_config(config);
      file->write_provenance(provenance());
    }
  });
  if (code != exit_ok) return code;
  auto abandon_file = [&] {
    // nothing measured yet: leave no empty file behind to block the corrected rerun
    if (file) {
      const std::string path = file->path();
      file.reset();
      std::remove(path.c_str());
    }
  };

  // fabric: placement (where this rank runs, which NIC), device, resources, exchange, connect
  std::optional<fabric::port_choice> port;
  std::optional<fabric::placement> where;
  fabric::topology_ptr topo;
  // where setup time goes, phase by phase (stats::setup_phase_names)
  stats::setup_times took{};
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
  code = step(w, [&] {
    const auto t0 = clock::now();
    const auto devices = fabric::discover(o.ib_dev);
    std::vector<std::string> usable;
    for (const auto& d : devices) {
      if (std::any_of(d.ports.begin(), d.ports.end(), [](const auto& p) { return p.state == IBV_PORT_ACTIVE; })) {
        usable.push_back(d.name);
      }
    }
    topo = std::make_shared<fabric::topology>();
    // every rank on this node pins its buffer: check it fits before the kernel OOM-kills a rank
    const std::uint64_t node_bytes = layout.total_bytes() * static_cast<std::uint64_t>(node.local_size);
    if (const std::uint64_t ram = topo->total_memory(); ram > 0 && node_bytes > ram / 10 * 9) {
      throw usage_error(fmt::format(
          "the buffers need {} per rank, {} for the {} ranks on {}, more than 90% of its {} of memory; lower "
          "--size or --peer-buffer, or run fewer ranks per node",
          format_size(layout.total_bytes()), format_size(node_bytes), node.local_size, fabric::this_host(),
          format_size(ram)));
    }
    where = fabric::place(topo->describe(usable), node.local_rank, node.local_size, o.bind, o.ib_dev);
    if (where->source == fabric::bound_by::rdmamesh) topo->bind_process(where->pu);
    options chosen = o;
    chosen.ib_dev = where->device;
    port = fabric::choose_port(devices, chosen);
    took[0] = since(t0);
  });
  if (code != exit_ok) return abandon_file(), code;

  auto& ep = s.ep;
  // the ranks of this node on the same device share its limits (max_qp, max_cq, ...)
  const auto devices_of = w.allgather_strings(port->device);
  std::uint32_t on_device = 0;
  for (std::uint32_t r = 0; r < n; ++r) on_device += s.node_of[r] == node.node && devices_of[r] == port->device;
  code =
      step(w, [&] { ep = std::make_unique<fabric::endpoint>(o, layout, *port, me, n, topo, where->numa, on_device); });
  if (code != exit_ok) return abandon_file(), code;
  took[1] = ep->times().device_s;
  took[2] = ep->times().buffers_s;
  took[3] = ep->times().qps_s;
  auto t_exchange = clock::now();
  const auto& ranks = s.ranks =
      w.allgather(fabric::make_rank_info(fabric::this_host(), &*port, &*where, node, ep->buffer_on_numa()));
  if (o.connect == connect_kind::round) {
    std::vector<std::string> route_of;
    for (const auto& r : ranks) route_of.push_back(fabric::address_of(r));
    ep->set_routes(std::move(route_of));
  }
  // ranks pinned onto common CPUs must not spin through each other's time slices
  bool crowded = false;
  for (std::uint32_t r = 0; r < n; ++r) crowded = crowded || (r != me && fabric::share_cpu(ranks[me], ranks[r]));

  if (o.connect == connect_kind::all) {  // --connect round connects per round, with the round's partners only
    const std::vector<fabric::conn_info> mine = ep->local_infos();
    const std::vector<fabric::conn_info> theirs = w.alltoall(std::span<const fabric::conn_info>(mine), o.qps);
    took[4] = since(t_exchange);
    code = step(w, [&] { ep->connect(theirs, injected); });
    if (code != exit_ok) return abandon_file(), code;
    took[5] = ep->times().connect_s;
  } else {
    took[4] = since(t_exchange);
  }

  // engine: receives are posted before the first barrier, so no peer ever finds none
  auto& streamer = s.streamer;
  auto& pinger = s.pinger;
  code = step(w, [&] {
    const auto t0 = clock::now();
    if (o.mode == mode_kind::bw) {
      streamer = std::make_unique<engine::stream>(o, layout, me, n, *ep);
    } else {
      pinger = std::make_unique<engine::pingpong>(o, layout, me, n, *ep);
    }
    took[6] = since(t0);
  });
  if (code != exit_ok) return abandon_file(), code;
  engine::core& base = streamer ? streamer->base() : pinger->base();
  base.set_crowded(crowded);
  base.inject(injected);
  const auto t_barrier = clock::now();
  w.barrier();
  took[7] = since(t_barrier);
  const auto all_took = w.allgather(took);
  const fabric::endpoint_resources held = ep->resources();
  const auto all_held = w.allgather(stats::setup_resources{held.qps, held.cq_entries, held.registered_bytes});

  if (me == 0) {
    for (const auto& warning : fabric::sharing_warnings(ranks)) fmt::print(stderr, "rdmamesh: warning: {}\n", warning);
    std::string header = io::format_header(o, ranks, ep->inline_size());
    header += io::format_setup(stats::summarize_setup(all_took), stats::peak_resources(all_held, s.node_of), ranks);
    if (injected)
      header += fmt::format("# fault injected (test only): RDMAMESH_FAULT={}\n", std::getenv("RDMAMESH_FAULT"));
    print(header + io::format_table_header(o));
    if (file) {
      file->write_ranks(ranks, all_took, all_held);
    }
  }
  return run_job(w, o, s);
}

}  // namespace rdmamesh::app
