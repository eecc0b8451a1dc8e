// The watchdog thread sleeps on a condition variable until the armed deadline passes.
#include "rdmamesh/app/watchdog.hpp"

namespace rdmamesh::app {

watchdog::watchdog(std::function<void(const std::string&)> on_expire)
    : on_expire_(std::move(on_expire)), thread_([this] { loop(); }) {}

watchdog::~watchdog() {
  {
    std::lock_guard lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void watchdog::arm(std::string what, double seconds) {
  {
    std::lock_guard lock(mu_);
    what_ = std::move(what);
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    armed_ = true;
  }
  cv_.notify_all();
}

void watchdog::disarm() {
  std::lock_guard lock(mu_);
  armed_ = false;
}

void watchdog::loop() {
  std::unique_lock lock(mu_);
  while (!quit_) {
    if (!armed_) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ && !quit_ &&
        std::chrono::steady_clock::now() >= deadline_) {
      const std::string what = what_;
      lock.unlock();
      on_expire_(what);  // does not return
      return;
    }
  }
}

}  // namespace rdmamesh::app
