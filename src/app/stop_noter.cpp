// The stop request's note in the file, written from a thread of its own.
#include "rdmamesh/app/stop_noter.hpp"

#include <fmt/format.h>

#include "rdmamesh/util/stop.hpp"

namespace rdmamesh::app {

stop_noter::stop_noter(ledger* book) {
  if (!book) return;
  thread_ = std::thread([book] {
    if (const int sig = wait_for_stop()) {
      book->abandon(
          fmt::format("incomplete: interrupted by {} before the run in progress was written (the launcher "
                      "or the batch system ended the job, or a user did; a rank may have died)",
                      signal_name(sig)));
    }
  });
}

void stop_noter::release() {
  if (!thread_.joinable()) return;
  release_stop_waiter();
  thread_.join();
}

}  // namespace rdmamesh::app
