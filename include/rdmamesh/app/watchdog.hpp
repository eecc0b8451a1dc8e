// A thread that bounds every wait of the main thread. Before a wait (a collective, a round, an
// exchange) the main thread says what it waits for and for how long; if that passes, the
// watchdog reports it, naming the peers whose connections failed (the likely dead ones), lets
// rank 0 mark the results file incomplete, and ends the process. Nothing can hang forever.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace rdmamesh::app {

class watchdog {
 public:
  // `on_expire` runs on the watchdog thread with the report line; it must not return.
  explicit watchdog(std::function<void(const std::string&)> on_expire);
  ~watchdog();
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

  void arm(std::string what, double seconds);  // restarts the clock
  void disarm();

 private:
  void loop();

  std::function<void(const std::string&)> on_expire_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string what_;
  std::chrono::steady_clock::time_point deadline_{};
  bool armed_ = false;
  bool quit_ = false;
  std::thread thread_;
};

// How long a rank waits in a collective before its watchdog gives up. Rank 0 names a silent rank
// (liveness) and tells the others; they wait twice as long, so that its word reaches them before
// their own clock runs out (a survivor entering a collective as the peer died once raced rank 0
// and named nobody).
inline double collective_bound_s(std::uint32_t rank, double timeout_s) {
  return rank == 0 ? timeout_s : 2 * timeout_s;
}

// RAII: armed for the lifetime of the guard.
class guarded_wait {
 public:
  guarded_wait(watchdog& dog, std::string what, double seconds) : dog_(dog) { dog_.arm(std::move(what), seconds); }
  ~guarded_wait() { dog_.disarm(); }
  guarded_wait(const guarded_wait&) = delete;
  guarded_wait& operator=(const guarded_wait&) = delete;

 private:
  watchdog& dog_;
};

}  // namespace rdmamesh::app
