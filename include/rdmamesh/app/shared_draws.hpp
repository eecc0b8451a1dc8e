// A judged run's false-alarm draws, drawn by every rank: rank 0 hands out what the draws need
// (a few words a pair), each rank draws its share, and the counts add up on rank 0.
#pragma once

#include "rdmamesh/app/context.hpp"
#include "rdmamesh/stats/false_alarm.hpp"

namespace rdmamesh::app {

// Collective. `model`: rank 0's, from the run it judged (nullptr elsewhere); `judge`: the
// finder's settings, the same on every rank. The figure on rank 0 (zero elsewhere) is the one
// rank 0 drawing alone would state: each draw has its own seed, whichever rank draws it.
stats::false_alarms shared_draws(const context& c, const engine::core& base, const stats::finder_settings& judge,
                                 const stats::draw_model* model);

}  // namespace rdmamesh::app
