// What the host gave a rank's thread over an interval: time on a CPU, time runnable but waiting
// for one, involuntary switches, and how many of the engine's passes found nothing to do. Read
// at a round's edges, never inside the data path. A rank that is slow because it waited for a
// CPU while it had work is a host effect, not the network's; one that is slow because its NIC
// or link is slow is idle for much of the time it does run (the idle share tells them apart).
#pragma once

#include <cstdint>

namespace rdmamesh::engine {

struct host_use {
  double wall_s = 0;       // elapsed
  double cpu_s = 0;        // running (/proc/thread-self/schedstat, field 1)
  double wait_s = 0;       // runnable, waiting for a CPU (field 2: run_delay)
  double nivcsw = 0;       // involuntary context switches (getrusage RUSAGE_THREAD)
  double passes = 0;       // engine passes (bandwidth mode)
  double idle_passes = 0;  // ... that posted and polled nothing
  bool known = false;      // the kernel had schedstat (CONFIG_SCHED_INFO)

  host_use& operator+=(const host_use& o);
};
host_use operator-(host_use a, const host_use& b);

// This thread's use so far (wall: a monotonic clock). Cheap: one small /proc read.
host_use host_now();

}  // namespace rdmamesh::engine
