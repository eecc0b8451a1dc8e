// Signal handlers touch nothing but a sig_atomic_t (and _exit on the second signal).
#include "rdmamesh/util/stop.hpp"

#include <unistd.h>

#include <csignal>

namespace rdmamesh {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int sig) {
  if (g_signal != 0) _exit(128 + sig);  // asked twice: leave now
  g_signal = sig;
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
}

}  // namespace rdmamesh
