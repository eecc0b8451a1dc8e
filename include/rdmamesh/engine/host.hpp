// What the host gave a rank's thread over an interval: time on a CPU, time runnable but waiting
// for one, involuntary switches, and how many of the engine's passes found nothing to do. Read
// at the measured interval's edges, never inside the data path: evidence of how contended the
// host was, recorded beside the rates: the verdict reads it for a cause's category (stats/why) and for
// a pair alone in the retest (stats/retest).
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
  bool known = false;      // the kernel had schedstat (CONFIG_SCHED_INFO): cpu_s and wait_s are real

  host_use& operator+=(const host_use& o);
};
host_use operator-(host_use a, const host_use& b);

// This thread's use so far (wall: a monotonic clock). Cheap: one small /proc read.
host_use host_now();

// What the host gave between two readings of host_now: `to - from`, its wait held to the time
// the interval spent off a CPU. The scheduler charges a wait when it ends, so a wait that began
// before `from` counts whole in this interval and cpu + wait could exceed the time that passed.
host_use host_between(const host_use& from, const host_use& to);

}  // namespace rdmamesh::engine
