// Rank 0's thread that marks the results file the moment a stop request (SIGTERM, SIGINT)
// arrives: the main thread may sit in a collective, and the launcher's SIGKILL follows within
// about a second. Released (and joined) when the job ends, on every path out.
#pragma once

#include <thread>

#include "rdmamesh/app/ledger.hpp"

namespace rdmamesh::app {

class stop_noter {
 public:
  explicit stop_noter(ledger* book);  // null: nothing to mark, no thread
  ~stop_noter() { release(); }
  stop_noter(const stop_noter&) = delete;
  stop_noter& operator=(const stop_noter&) = delete;
  void release();

 private:
  std::thread thread_;
};

}  // namespace rdmamesh::app
