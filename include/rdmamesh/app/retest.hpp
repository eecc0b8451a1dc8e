// --retest: after a mesh, shift or spread run with slow pairs, rank 0 picks those pairs and a few healthy
// control pairs of the same run, every rank learns them, and they run again, each alone, as a
// run of its own: still slow alone (the link or NIC) or fine alone (contention).
#pragma once

#include <cstdint>

#include "rdmamesh/app/context.hpp"
#include "rdmamesh/engine/stream.hpp"
#include "rdmamesh/stats/model.hpp"

namespace rdmamesh::app {

// Collective. Retests the last run recorded (at `size`) if it had slow pairs; `index` moves on
// by one when a retest ran. Returns whether this rank's part was clean.
bool retest_slow_pairs(const context& c, engine::stream& eng, std::uint64_t size, std::uint32_t& index, bool& stopped);

// The model's settings from the flags: --false-alarm's level, --slow's bound.
stats::model_settings model_settings_of(const options& o);

}  // namespace rdmamesh::app
