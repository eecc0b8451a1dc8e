// One run (one pattern at one size, or a retest): every round of its schedule on this rank,
// with --connect round's per-round connections, then its assembly on rank 0. Every rank calls
// it with the same schedule; the collectives inside run in the same order on all of them.
#pragma once

#include <cstdint>

#include "rdmamesh/app/assemble.hpp"
#include "rdmamesh/app/context.hpp"
#include "rdmamesh/plan/schedule.hpp"

namespace rdmamesh::app {

// Returns whether this rank's part was clean. `stopped` is set when a stop request (on any
// rank) ended the run before its last round. Engine: engine::stream or engine::pingpong.
template <class Engine>
bool run_one(const context& c, Engine& eng, const plan::subset_schedule& sched, std::uint64_t size,
             std::uint32_t active_per_node, std::uint32_t index, bool& stopped, const retest_of& retest = {});

}  // namespace rdmamesh::app
