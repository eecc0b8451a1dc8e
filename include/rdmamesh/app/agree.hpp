// Collective error handling for setup steps: every rank runs a step, then all ranks learn the
// worst outcome, and rank 0 prints each distinct error once with the ranks that hit it.
#pragma once

#include <string>
#include <system_error>

#include "rdmamesh/mpi/world.hpp"
#include "rdmamesh/util/error.hpp"

namespace rdmamesh::app {

// Collective: every rank must call it. Returns the worst exit code over the ranks.
int agree(const mpi::world& w, int code, const std::string& message);

// Runs `f`, mapping what it throws to an exit code and a message, then agrees.
// `f` may itself call collectives only if it does so on every rank before it can throw.
template <class F>
int step(const mpi::world& w, F&& f) {
  int code = exit_ok;
  std::string message;
  try {
    f();
  } catch (const usage_error& e) {
    code = exit_usage;
    message = e.what();
  } catch (const std::exception& e) {
    code = exit_system;
    message = e.what();
  }
  return agree(w, code, message);
}

}  // namespace rdmamesh::app
