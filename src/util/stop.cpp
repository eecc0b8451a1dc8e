// Signal handlers touch nothing but a sig_atomic_t and a semaphore (and _exit on the second
// signal): all three are async-signal-safe.
#include "rdmamesh/util/stop.hpp"

#include <semaphore.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace rdmamesh {
namespace {

volatile std::sig_atomic_t g_signal = 0;

// Initialized before main, so the handler and the waiter never race its creation.
struct waiter_semaphore {
  sem_t sem{};
  waiter_semaphore() { sem_init(&sem, 0, 0); }
};
waiter_semaphore g_waiter;

extern "C" void on_stop_signal(int sig) {
  if (g_signal != 0) _exit(128 + sig);  // asked twice: leave now
  g_signal = sig;
  sem_post(&g_waiter.sem);
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

bool stop_requested() {
  return g_signal != 0;
}
int stop_signal() {
  return g_signal;
}
void request_stop(int sig) {
  g_signal = sig;
  sem_post(&g_waiter.sem);
}

int wait_for_stop() {
  while (sem_wait(&g_waiter.sem) != 0 && errno == EINTR) {
  }
  return g_signal;
}

void release_stop_waiter() {
  sem_post(&g_waiter.sem);
}

std::string_view signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "a signal";
  }
}

}  // namespace rdmamesh
