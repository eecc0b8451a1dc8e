// One schedule round, the same protocol for both engines: traffic until the round's clock or
// iterations run out, drain the send queues, swap per-lane completion counts with a
// non-blocking all-to-all while still servicing receives, wait until every message counted
// has arrived, verify. Local failures become events; every rank still takes part in each
// collective, in the same order, so one rank's failure cannot hang the others.
//
// No wait is bounded by how long it lasts, only by how long nothing happens: a drain or a
// receive wait ends when no completion came for --timeout, and the exchange ends early only
// when liveness (beats and pulses through rank 0) names a silent peer.
#pragma once

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "rdmamesh/app/liveness.hpp"
#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/engine/core.hpp"
#include "rdmamesh/mpi/world.hpp"

namespace rdmamesh::app {

// A pass that posted or completed something costs far more than a clock read (on rxe one
// post of 1 MiB takes milliseconds), so the clock is read after those and every 64th empty one.
class ticker {
 public:
  template <class Engine>
  bool due(const Engine& e) {
    const std::uint64_t now = e.progress_count();
    const bool worked = now != seen_;
    seen_ = now;
    return worked || (++empty_ & 63) == 0;
  }

 private:
  std::uint64_t seen_ = 0;
  std::uint32_t empty_ = 0;
};

// Progress the engine until `done`; false once no completion came for `timeout_s`.
template <class Engine, class Done, class Tick>
bool progress_until(Engine& e, Done done, double timeout_s, Tick tick) {
  const auto quiet_limit = std::chrono::duration<double>(timeout_s);
  std::uint64_t seen = e.progress_count();
  auto quiet_since = engine::clock::now();
  ticker t;
  while (!done()) {
    e.progress();
    if (!t.due(e)) continue;
    const auto now = engine::clock::now();
    tick(now);
    if (e.progress_count() != seen) {
      seen = e.progress_count();
      quiet_since = now;
    } else if (now - quiet_since > quiet_limit) {
      return false;
    }
  }
  return true;
}

// Returns this rank's failures of the round, one line each. `on_stuck(verdict, what)` runs
// (and must not return) when liveness names a peer that fell silent.
template <class Engine, class OnStuck>
std::vector<std::string> run_round(const mpi::world& w, Engine& eng, const options& o, liveness& live,
                                   OnStuck on_stuck) {
  const auto me = w.rank();
  std::vector<std::string> errors;
  bool judge = true;  // silence is a verdict until our exchange is done
  const char* what = "sending";
  auto tick = [&](engine::clock::time_point now) {
    if (auto v = live.tick(now, judge)) on_stuck(*v, what);
  };
  live.begin_round(engine::clock::now());
  try {
    eng.start();
    ticker t;
    while (eng.sending()) {
      eng.progress();
      if (t.due(eng)) tick(engine::clock::now());
    }
    what = "draining sends";
    if (!progress_until(
            eng, [&] { return eng.drained(); }, o.timeout_s, tick)) {
      errors.push_back(fmt::format("rank {}: no completion for {:g} s while draining sends (still waiting for {})", me,
                                   o.timeout_s, eng.pending()));
    }
  } catch (const std::exception& e) {
    errors.push_back(fmt::format("rank {}: {}", me, e.what()));
  }

  const std::vector<std::uint64_t> sent = eng.completed_by_lane();
  std::vector<std::uint64_t> expected(sent.size(), 0);
  {
    // A peer late to the exchange gets a probe on each idle path: a path whose retries run
    // out is named by the line of any later wait that times out (stuck_line). It is not a dead
    // peer: a slow or lossy port fails a path while both ends live (the peer still draining its
    // own sends behind it), and that pair is reported failed like any other. Only liveness (no
    // beat for --timeout) ends the wait early.
    constexpr double probe_after_s = 2.0;
    what = "exchanging the round's message counts";
    mpi::request req = w.ialltoall(std::span<const std::uint64_t>(sent), std::span<std::uint64_t>(expected), o.qps);
    const auto t0 = engine::clock::now();
    bool probed = false;
    ticker t;
    while (!req.test()) {
      eng.progress();
      if (!t.due(eng)) continue;
      const auto now = engine::clock::now();
      tick(now);
      if (!probed && std::chrono::duration<double>(now - t0).count() >= probe_after_s) {
        eng.probe();
        probed = true;
      }
    }
  }
  judge = false;
  what = "waiting for the round's messages";
  eng.expect(expected);
  if (!progress_until(
          eng, [&] { return eng.received_all(); }, o.timeout_s, tick)) {
    errors.push_back(
        fmt::format("rank {}: no message arrived for {:g} s while waiting for {}", me, o.timeout_s, eng.pending()));
  }
  eng.verify_final();
  return errors;
}

}  // namespace rdmamesh::app
