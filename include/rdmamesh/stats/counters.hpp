// What one rank measured about one peer: the fixed-size record the engine fills and rank 0
// gathers into the N x N matrices.
#pragma once

#include <cstdint>
#include <type_traits>

namespace rdmamesh::stats {

enum pair_flags : std::uint32_t {
  tx_failed = 1u << 0,      // a send completion of this pair carried an error
  rx_failed = 1u << 1,      // a receive completion of this pair carried an error
  rx_incomplete = 1u << 2,  // fewer messages arrived than the sender completed
};

struct pair_counters {
  std::uint64_t tx_msgs = 0;   // sends completed inside the measured interval
  std::uint64_t rx_msgs = 0;   // messages received inside the measured interval
  std::uint64_t tx_total = 0;  // sends completed over the whole run (warm-up and drain too)
  std::uint64_t rx_total = 0;  // messages received over the whole run
  std::uint64_t verify_errors = 0;
  double tx_seconds = 0;  // length of the interval tx_msgs covers
  double rx_seconds = 0;  // length of the interval rx_msgs covers
  std::uint32_t flags = 0;
  std::int32_t round = -1;  // the schedule round that measured the pair's sending side
};

static_assert(std::is_trivially_copyable_v<pair_counters>);

}  // namespace rdmamesh::stats
