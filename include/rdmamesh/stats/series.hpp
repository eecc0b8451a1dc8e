// Bandwidth over time (--interval): cumulative counts read at marks inside the measured
// interval become bytes/s per slot of a fixed grid, the same grid on every rank, so rank 0
// can stack them into [T, N, N].
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace rdmamesh::stats {

// How many slots of `interval_s` cover `duration_s` (the last one may be partial); 0 when
// sampling is off.
std::uint32_t series_slots(double duration_s, double interval_s);

// Marks: `at_s` (seconds since the interval began, increasing), `slot_of` (the grid boundary
// each was read at: floor(at / interval), the final mark the number of slots it closes) and
// `count` (cumulative messages). Slots between two marks get their rate; slots no pair of
// marks spans are NaN (a job cut short).
std::vector<double> slot_rates(std::span<const double> at_s, std::span<const std::uint32_t> slot_of,
                               std::span<const std::uint64_t> count, std::uint32_t slots, std::uint64_t msg_size);

}  // namespace rdmamesh::stats
