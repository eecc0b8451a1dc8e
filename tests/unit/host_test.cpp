// What the host gave a rank over an interval: figures that add up to no more than the time that
// passed, as /runs/N/host promises (check_results.py holds every VM run to it).
#include <doctest/doctest.h>

#include "rdmamesh/engine/host.hpp"

using rdmamesh::engine::host_between;
using rdmamesh::engine::host_use;

TEST_CASE("an interval's wait is held to its time off a CPU") {
  // under stress-ng, a 0.23 s interval read 0.17 s on a CPU and 0.16 s waiting: a wait that began
  // before the interval, charged when it ended
  const host_use from{.wall_s = 10, .cpu_s = 1, .wait_s = 2, .nivcsw = 5, .passes = 100, .known = true};
  host_use to = from;
  to.wall_s += 0.23;
  to.cpu_s += 0.17;
  to.wait_s += 0.16;
  to.passes += 39;
  const host_use d = host_between(from, to);
  CHECK(d.wall_s == doctest::Approx(0.23));
  CHECK(d.cpu_s == doctest::Approx(0.17));
  CHECK(d.wait_s == doctest::Approx(0.06));  // what the interval had off a CPU
  CHECK(d.cpu_s + d.wait_s <= d.wall_s + 1e-12);
  CHECK(d.passes == 39);
  CHECK(d.known);
  // a wait that fits is kept as read
  to.wait_s = from.wait_s + 0.04;
  CHECK(host_between(from, to).wait_s == doctest::Approx(0.04));
}

TEST_CASE("this thread's own readings: time moves forward and adds up") {
  const host_use from = rdmamesh::engine::host_now();
  volatile double x = 0;
  for (int i = 0; i < 2000000; ++i) x = x + 1;
  const host_use d = host_between(from, rdmamesh::engine::host_now());
  CHECK(d.wall_s > 0);
  if (d.known) {
    CHECK(d.cpu_s >= 0);
    CHECK(d.wait_s >= 0);
    CHECK(d.cpu_s + d.wait_s <= d.wall_s * 1.1 + 0.05);  // cpu is the kernel's, read up to a tick late
  }
}
