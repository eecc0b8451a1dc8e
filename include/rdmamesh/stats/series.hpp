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

// Marks: `at_s` (seconds since the interval began, increasing, the last one its end) and
// `count` (cumulative messages at each). Slot k's rate is what completed in [k, k+1) x
// `interval_s`, counts interpolated linearly between marks (a mark read late by a busy loop
// moves no bytes between slots); the last slot the interval reaches ends at its end, partial
// or over-long; slots after the end are NaN. Rate x slot width adds up to the bytes.
std::vector<double> slot_rates(std::span<const double> at_s, std::span<const std::uint64_t> count, std::uint32_t slots,
                               double interval_s, std::uint64_t msg_size);

}  // namespace rdmamesh::stats
