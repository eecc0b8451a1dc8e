// Rank 0's progress lines: what a user waiting on a long sweep reads.
#include <doctest/doctest.h>

#include "rdmamesh/app/progress.hpp"

using namespace rdmamesh;
using app::progress;

TEST_CASE("duration runs: time left from the plan, corrected by what the finished runs really took") {
  options o;
  o.duration_s = 2;
  o.warmup_s = 1;
  progress p(o, 4, true);
  const auto t0 = progress::clock::now();
  CHECK(p.start(pattern_kind::mesh, 65536, 3, t0) == "[1/4] mesh 64K, 3 rounds, ~36 s left\n");
  // the first run took 18 s where 9 were planned: the rest is expected to overrun as much
  CHECK(p.start(pattern_kind::mesh, 1 << 20, 3, t0 + std::chrono::seconds(18)) ==
        "[2/4] mesh 1M, 3 rounds, ~54 s left\n");
  // never less than the plan, even when the runs came in early
  CHECK(p.start(pattern_kind::pairs, 4096, 1, t0 + std::chrono::seconds(19)) == "[3/4] pairs 4K, 1 round, ~6 s left\n");
  // it counts the plan's runs it was told of, whatever the results file numbers between them (a
  // --retest run after each): the last is the total's, its own rounds left at the pace so far
  // at the pace of the plan's runs alone: the 20 s of a retest between them (aside) left out
  p.aside(std::chrono::seconds(20));
  CHECK(p.start(pattern_kind::pairs, 4096, 1, t0 + std::chrono::seconds(62)) == "[4/4] pairs 4K, 1 round, ~6 s left\n");
}

TEST_CASE("iteration runs: elapsed time, no guess; a single run or --quiet prints nothing") {
  options o;
  o.iters = 100;
  o.duration_s = 0;
  progress p(o, 3, true);
  const auto t0 = progress::clock::now();
  CHECK(p.start(pattern_kind::pairs, 8, 6, t0) == "[1/3] pairs 8, 6 rounds\n");
  CHECK(p.start(pattern_kind::pairs, 4096, 6, t0 + std::chrono::milliseconds(5400)) ==
        "[2/3] pairs 4K, 6 rounds, 5 s so far\n");
  CHECK(progress(o, 1, true).start(pattern_kind::mesh, 8, 1, t0).empty());
  CHECK(progress(o, 3, false).start(pattern_kind::mesh, 8, 1, t0).empty());
}
