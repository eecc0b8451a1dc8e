// Error types that travel up to main: bad input (exit 2) versus a failure of the system (exit 3).
#pragma once

#include <stdexcept>
#include <string>

namespace rdmamesh {

// Bad input from the user: flags, options, environment. The message names the fix.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A wait that ran past its deadline; the message says what was still pending.
class timeout_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit codes shared by the driver, the tests and docs/verdict.md.
enum exit_code : int {
  exit_ok = 0,
  exit_run_failures = 1,  // the run finished but pairs failed or payloads mismatched
  exit_usage = 2,         // bad input; nothing was measured
  exit_system = 3,        // verbs, MPI or I/O failure
  exit_interrupted = 4,   // SIGTERM/SIGINT: what was measured is written, the rest never ran
  exit_degraded = 5,      // every run finished cleanly, but the verdict names a cause (a slow node, rank, link)
};

}  // namespace rdmamesh
