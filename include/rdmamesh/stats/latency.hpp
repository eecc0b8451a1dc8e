// A latency distribution reduced to what is gathered per pair and printed: exact count, min,
// max, mean and standard deviation, histogram percentiles. Nanoseconds throughout.
#pragma once

#include <cstdint>
#include <type_traits>

#include "rdmamesh/stats/histogram.hpp"

namespace rdmamesh::stats {

struct latency_summary {
  std::uint64_t count = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0, stddev = 0;
};

static_assert(std::is_trivially_copyable_v<latency_summary>);

latency_summary summarize(const histogram& h);

}  // namespace rdmamesh::stats
