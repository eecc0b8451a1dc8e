// The run loop: every pattern, every size and every --scaling step in order, each one run
// (app/measure.hpp), a retest after a mesh, shift or spread run when asked, and a pattern's derived
// group (sweep, scaling) closed in the ledger once its runs are in.
#pragma once

#include "rdmamesh/app/context.hpp"
#include "rdmamesh/app/setup.hpp"

namespace rdmamesh::app {

// Collective. False if any rank's part of any run was not clean; `stopped` is set when a stop
// request ended the job early. Engine: engine::stream or engine::pingpong.
template <class Engine>
bool run_patterns(const context& c, const setup& s, Engine& eng, bool& stopped);

}  // namespace rdmamesh::app
