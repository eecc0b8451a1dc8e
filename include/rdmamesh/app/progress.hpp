// Rank 0's progress on stderr for jobs of several runs: one line as each run starts,
// `[3/12] shift 64 KiB, 3 rounds, ~9 s left`, printed between runs, never inside a measured
// interval. --quiet drops it; a single run prints nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "rdmamesh/cli/options.hpp"

namespace rdmamesh::app {

class progress {
 public:
  using clock = std::chrono::steady_clock;
  progress(const options& o, std::uint32_t total_runs, bool enabled);

  // The line for the next of the plan's runs, of `rounds` rounds; empty when disabled.
  std::string start(pattern_kind p, std::uint64_t size, std::uint32_t rounds, clock::time_point now = clock::now());

  // Time spent between the plan's runs on work it does not count (a --retest): left out of the
  // pace the estimate scales the plan by.
  void aside(clock::duration d) { aside_ += d; }

  // Seconds a duration run of `rounds` rounds is planned to take (warm-up and interval).
  double planned_s(std::uint32_t rounds) const;

 private:
  const options& o_;
  std::uint32_t total_;
  bool enabled_;
  std::uint32_t started_ = 0;  // the plan's runs started so far
  clock::time_point began_{};
  clock::duration aside_{};
  double planned_done_ = 0;  // planned seconds of the runs already started
};

}  // namespace rdmamesh::app
