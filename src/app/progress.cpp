// Estimates from the plan, corrected by how long the finished runs really took (the exchange
// and drain between intervals): honest enough to decide whether to wait or come back later.
#include "rdmamesh/app/progress.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "rdmamesh/util/units.hpp"

namespace rdmamesh::app {

progress::progress(const options& o, std::uint32_t total_runs, bool enabled)
    : o_(o), total_(total_runs), enabled_(enabled && total_runs > 1) {}

double progress::planned_s(std::uint32_t rounds) const {
  return static_cast<double>(rounds) * (o_.warmup_s + o_.duration_s);
}

std::string progress::start(pattern_kind p, std::uint64_t size, std::uint32_t rounds, clock::time_point now) {
  if (!enabled_) return {};
  // the plan's runs, counted here: the results file's run index also counts the retests
  // between them, which the plan does not know of
  const std::uint32_t index = std::min(started_++, total_ - 1);
  if (index == 0) began_ = now;
  const double elapsed = std::chrono::duration<double>(now - began_ - aside_).count();
  std::string line = fmt::format("[{}/{}] {} {}, {} round{}", index + 1, total_, to_string(p), format_size(size),
                                 rounds, rounds == 1 ? "" : "s");
  if (o_.duration_mode()) {
    // the runs still to come are planned like this one; scaled by what the plan missed so far
    const double factor = planned_done_ > 0 ? std::max(1.0, elapsed / planned_done_) : 1.0;
    const double left = planned_s(rounds) * (total_ - index) * factor;
    line += fmt::format(", ~{:.0f} s left", left);
    planned_done_ += planned_s(rounds);
  } else if (index > 0) {
    line += fmt::format(", {:.0f} s so far", elapsed);  // -n: a run's time depends on the link
  }
  return line + "\n";
}

}  // namespace rdmamesh::app
