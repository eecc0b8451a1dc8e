// Reading what the host gave this thread: the scheduler's own accounting, which needs no
// privileges and costs one read of a small /proc file.
#include "rdmamesh/engine/host.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace rdmamesh::engine {

host_use& host_use::operator+=(const host_use& o) {
  wall_s += o.wall_s;
  cpu_s += o.cpu_s;
  wait_s += o.wait_s;
  nivcsw += o.nivcsw;
  passes += o.passes;
  idle_passes += o.idle_passes;
  known = known || o.known;
  return *this;
}

host_use operator-(host_use a, const host_use& b) {
  a.wall_s -= b.wall_s;
  a.cpu_s -= b.cpu_s;
  a.wait_s -= b.wait_s;
  a.nivcsw -= b.nivcsw;
  a.passes -= b.passes;
  a.idle_passes -= b.idle_passes;
  a.known = a.known && b.known;
  return a;
}

host_use host_between(const host_use& from, const host_use& to) {
  host_use d = to - from;
  d.wait_s = std::clamp(d.wait_s, 0.0, std::max(d.wall_s - d.cpu_s, 0.0));
  return d;
}

host_use host_now() {
  host_use h;
  h.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r")) {
    unsigned long long run_ns = 0, wait_ns = 0;
    h.known = std::fscanf(f, "%llu %llu", &run_ns, &wait_ns) == 2;
    std::fclose(f);
    h.cpu_s = static_cast<double>(run_ns) * 1e-9;
    h.wait_s = static_cast<double>(wait_ns) * 1e-9;
  }
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) == 0) h.nivcsw = static_cast<double>(ru.ru_nivcsw);
  return h;
}

}  // namespace rdmamesh::engine
