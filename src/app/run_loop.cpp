// Patterns x sizes x steps, with the test-only faults that are timed from a run's start.
#include "rdmamesh/app/run_loop.hpp"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <thread>
#include <type_traits>

#include "rdmamesh/app/measure.hpp"
#include "rdmamesh/app/progress.hpp"
#include "rdmamesh/app/retest.hpp"
#include "rdmamesh/plan/schedule.hpp"
#include "rdmamesh/plan/spread.hpp"

namespace rdmamesh::app {
namespace {

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

// The faults injected into run `index` (RDMAMESH_FAULT, test only).
template <class Engine>
void inject_into_run(const setup& s, Engine& eng, std::uint32_t me, std::uint32_t index) {
  if (!s.injected || s.injected->run != index) return;
  arm_signal_fault(*s.injected, me);
  if constexpr (std::is_same_v<Engine, engine::stream>) {
    if (s.injected->what == fault::kind::stall && s.injected->src == me) eng.stall_next_window();
  }
}

// What a run plays: the pattern over the active ranks (each rail apart with --rails aligned), or
// spread's plan, which needs the ranks' places
plan::subset_schedule schedule_of(const context& c, const setup& s, pattern_kind pattern,
                                  std::vector<std::uint32_t> members) {
  if (pattern == pattern_kind::spread) {
    // every rank: the plan setup made; a --scaling step: its own over the active ranks
    auto rounds = members.size() == c.n
                      ? s.spread.rounds
                      : plan::spread_rounds(members, s.node_of, s.rail_of, s.leaf_of, c.o.partners, c.o.seed).rounds;
    return {std::move(rounds), c.n, pattern_kind::spread};
  }
  return {pattern, plan::rail_groups(std::move(members), s.rail_of, c.o.rails), c.n, c.o.bidirectional, c.o.target};
}

}  // namespace

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
        const plan::subset_schedule sched =
            schedule_of(c, s, pattern, k ? plan::active_ranks(s.local_of, k) : everyone);
        inject_into_run(s, eng, c.me, index);
        if (const auto line = shown.start(pattern, size, sched.rounds()); !line.empty()) {
          std::fputs(line.c_str(), stderr);
          std::fflush(stderr);
        }
        clean = run_one(c, eng, sched, size, k, index, stopped) && clean;
        ++index;
        if constexpr (std::is_same_v<Engine, engine::stream>) {
          if (c.o.retest && !stopped && k == 0 && goes_to_retest(pattern)) {
            const auto t0 = progress::clock::now();
            clean = retest_slow_pairs(c, eng, size, index, stopped) && clean;
            shown.aside(progress::clock::now() - t0);
          }
        }
      }
    }
    if (c.me == 0 && !stopped) c.book.close_pattern(pattern);
  }
  return clean;
}

template bool run_patterns(const context&, const setup&, engine::stream&, bool&);
template bool run_patterns(const context&, const setup&, engine::pingpong&, bool&);

}  // namespace rdmamesh::app
