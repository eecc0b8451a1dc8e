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

// Returns this rank's failures of the round, one line each. `on_stuck` runs (and must not
// return) when the other ranks never reach the exchange: a rank died or hangs.
template <class Engine, class OnStuck>
std::vector<std::string> run_round(const mpi::world& w, Engine& eng, const options& o, OnStuck on_stuck) {
  const auto me = w.rank();
  std::vector<std::string> errors;
  try {
    eng.start();
    while (eng.sending()) eng.progress();
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
    mpi::request req = w.ialltoall(std::span<const std::uint64_t>(sent), std::span<std::uint64_t>(expected), o.qps);
    if (!progress_until(
            eng, [&] { return req.test(); }, o.timeout_s))
      on_stuck();
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
