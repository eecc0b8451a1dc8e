// The job's failure paths and its end. A silent peer or an expired watchdog ends this process
// after rank 0 has marked the file incomplete with every run finished so far; a stop request
// ends the run in progress, which is written, and the job exits 4.
#include "rdmamesh/app/job.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "rdmamesh/app/context.hpp"
#include "rdmamesh/app/run_loop.hpp"
#include "rdmamesh/app/stop_noter.hpp"
#include "rdmamesh/mpi/beacon.hpp"
#include "rdmamesh/util/error.hpp"
#include "rdmamesh/util/stop.hpp"

namespace rdmamesh::app {
namespace {

// Who fell silent, and how this rank knows: rank 0 tells every rank, the others tell rank 0.
void tell_who(const options& o, std::uint32_t me, liveness& live, const liveness::verdict& v) {
  const std::string reason = v.reporter >= 0 || v.from_root ? v.reason : fmt::format("rank {} {}", me, v.reason);
  if (me == 0) {
    live.announce(v.rank, reason, 1.0);
    if (v.reporter >= 0) live.acknowledge(v.reporter);
  } else if (!v.from_root) {
    live.report(v.rank, reason, o.timeout_s + 5);  // rank 0 may be in a collective: its watchdog then writes
  }
}

// The logical AND over ranks, tested between 1 ms naps: the other ranks wait here while rank 0
// judges the last run and writes it, and spinning they took the CPU from it wherever they share
// its cores (64 ranks on the VM's 2 vCPUs under stress-ng: rank 0's judging outlasted their
// 2 x --timeout bound, CI 2026-11-26). A nap is nothing beside a job's end.
bool all_true_napping(const mpi::world& w, bool mine) {
  const int in = mine ? 1 : 0;
  int out = 0;
  mpi::request r = w.iall_true(in, out);
  while (!r.test()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return out != 0;
}

// The normal end (every run, or a stop request): the status and last line on rank 0, then a
// barrier so no rank tears down its QPs while a peer might still touch them.
int finish_job(const mpi::world& w, const options& o, std::uint32_t me, ledger& book, const io::results_file* file,
               watchdog& dog, stop_noter& noter, bool clean, bool stopped) {
  {
    guarded_wait g(dog, fmt::format("rank {}: the other ranks stopped answering at the end of the run", me),
                   collective_bound_s(me, o.timeout_s));
    clean = all_true_napping(w, clean);
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
  // the fabric was measured whole and is not healthy: its own exit code, apart from a failed job
  bool degraded = false;
  {
    guarded_wait g(dog, fmt::format("rank {}: the other ranks stopped answering at the end of the run", me),
                   collective_bound_s(me, o.timeout_s));
    degraded = !w.all_true(!(me == 0 && book.health() == stats::health::degraded));
  }
  noter.release();
  {
    guarded_wait g(dog, fmt::format("rank {}: the other ranks stopped answering at the end of the run", me),
                   collective_bound_s(me, o.timeout_s));
    w.barrier();
  }
  if (stopped) return exit_interrupted;
  if (!clean) return exit_run_failures;
  return degraded ? exit_degraded : exit_ok;
}

}  // namespace

int run_job(const mpi::world& w, const options& o, setup& s) {
  const std::uint32_t me = s.me;
  io::results_file* file = s.file.get();
  ledger book(o, s.steps, s.node_of, static_cast<std::uint32_t>(s.node.nodes), file);
  if (me == 0) {
    book.set_verdict(s.verdict_path,
                     {.results = o.output,
                      .command_line = s.command_line,
                      .job_id = s.job_id,
                      .ended = "",
                      .complete = false,
                      .expect_bps = s.expect_floor_bps,
                      .expect_how = s.expect_how,
                      .uplinks = s.uplink_names,
                      .false_alarm_pct = o.false_alarm_pct},
                     s.ranks, s.config, s.uplinks, s.nics);
  }
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
  auto give_up = [&](const std::string& line, const liveness::verdict& v) {
    leave(line);
    tell_who(o, me, live, v);
    std::_Exit(exit_system);
  };
  // the watchdog's thread must not call MPI while the main thread sits in a collective
  watchdog dog([&](const std::string& line) {
    leave(line);
    if (me != 0) std::this_thread::sleep_for(std::chrono::seconds(2));  // rank 0's watchdog writes the file
    std::_Exit(exit_system);
  });

  const auto cpu_group = fabric::cpu_groups(s.ranks);
  const stats::pair_classes classes(s.n, s.node_of, s.uplinks, s.nics, cpu_group);
  const context c{w,
                  o,
                  s.n,
                  me,
                  book,
                  s.ep->inline_size(),
                  s.layout.window,
                  s.ranks,
                  s.node_of,
                  s.uplinks,
                  s.uplink_names,
                  s.nics,
                  classes,
                  static_cast<std::uint32_t>(s.node.nodes),
                  dog,
                  live,
                  *s.ep,
                  s.injected,
                  s.expect_floor_bps,
                  give_up};
  bool stopped = false;
  // --preflight: the NICs' settings are the whole check (judged as the header printed them)
  const bool clean = o.preflight  ? true
                     : s.streamer ? run_patterns(c, s, *s.streamer, stopped)
                                  : run_patterns(c, s, *s.pinger, stopped);
  return finish_job(w, o, me, book, file, dog, noter, clean, stopped);
}

}  // namespace rdmamesh::app
