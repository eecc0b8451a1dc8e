// One schedule round, the same protocol for both engines: traffic until the round's clock or
// iterations run out, drain the send queues, swap per-lane completion counts with a
// non-blocking all-to-all while still servicing receives, wait until every message counted
// has arrived, verify. Local failures become events; every rank still takes part in each
// collective, in the same order, so one rank's failure cannot hang the others.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/engine/core.hpp"
#include "rdmamesh/mpi/world.hpp"
#include "rdmamesh/util/stop.hpp"

namespace rdmamesh::app {

// Progress the engine until `done` or `timeout_s` passed; false on timeout.
template <class Engine, class Done>
bool progress_until(Engine& e, Done done, double timeout_s) {
  const auto deadline = engine::clock::now() +
                        std::chrono::duration_cast<engine::clock::duration>(std::chrono::duration<double>(timeout_s));
  while (!done()) {
    e.progress();
    if (engine::clock::now() > deadline) return false;
  }
  return true;
}

// Returns this rank's failures of the round, one line each. `on_stuck(what)` runs (and must not
// return) when the other ranks never reach the exchange: a rank died or hangs. `on_stop()` runs
// when a stop request ended the interval, before anything waits on the other ranks.
template <class Engine, class OnStuck, class OnStop>
std::vector<std::string> run_round(const mpi::world& w, Engine& eng, const options& o, OnStuck on_stuck,
                                   OnStop on_stop) {
  const auto me = w.rank();
  std::vector<std::string> errors;
  try {
    eng.start();
    while (eng.sending()) eng.progress();
    if (stop_requested()) on_stop();
    if (!progress_until(
            eng, [&] { return eng.drained(); }, o.timeout_s)) {
      errors.push_back(fmt::format("rank {}: timed out after {:g} s draining sends (still waiting for {})", me,
                                   o.timeout_s, eng.pending()));
    }
  } catch (const std::exception& e) {
    errors.push_back(fmt::format("rank {}: {}", me, e.what()));
  }

  const std::vector<std::uint64_t> sent = eng.completed_by_lane();
  std::vector<std::uint64_t> expected(sent.size(), 0);
  {
    // Peers that are late to the exchange get a liveness probe; a peer whose NIC stopped
    // answering (probe or round traffic ran out of retries) will never come, so stop waiting.
    constexpr double probe_after_s = 2.0;
    mpi::request req = w.ialltoall(std::span<const std::uint64_t>(sent), std::span<std::uint64_t>(expected), o.qps);
    const auto t0 = engine::clock::now();
    bool probed = false;
    while (!req.test()) {
      eng.progress();
      const double waited = std::chrono::duration<double>(engine::clock::now() - t0).count();
      if (!probed && waited >= probe_after_s) {
        eng.probe();
        probed = true;
      }
      if ((waited >= probe_after_s && !eng.base().suspects().empty()) || waited >= o.timeout_s) {
        on_stuck(fmt::format("exchanging the round's message counts (waited {:.0f} s)", waited));
      }
    }
  }
  eng.expect(expected);
  if (!progress_until(
          eng, [&] { return eng.received_all(); }, o.timeout_s)) {
    errors.push_back(fmt::format("rank {}: timed out after {:g} s waiting for {}", me, o.timeout_s, eng.pending()));
  }
  eng.verify_final();
  return errors;
}

}  // namespace rdmamesh::app
