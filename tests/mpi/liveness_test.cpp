// Multi-rank tests of liveness (beats to rank 0, pulses from it): a rank that falls silent is
// named by rank 0 and, through rank 0's announcement, by every other rank; ranks that keep
// working are never accused however long they work; a rank that gives up reaches rank 0.
// The only clock here is the hang bound of the test itself.
#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "rdmamesh/app/liveness.hpp"
#include "rdmamesh/mpi/beacon.hpp"
#include "rdmamesh/mpi/world.hpp"

using namespace rdmamesh;
using clock_type = app::liveness::clock;

namespace {

// Ticks until a verdict comes (or `for_s` passes, when given): what a round's loop does.
std::optional<app::liveness::verdict> tick_until(app::liveness& live, std::optional<double> for_s = std::nullopt) {
  const auto t0 = clock_type::now();
  for (;;) {
    const auto now = clock_type::now();
    if (auto v = live.tick(now, true)) return v;
    if (for_s && std::chrono::duration<double>(now - t0).count() > *for_s) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

TEST_CASE("liveness: the rank that falls silent is named by rank 0 and then by every other rank") {
  mpi::world w;
  mpi::beacon b(w);
  app::liveness live(b, 2.0);
  const int silent = w.size() - 1;
  live.begin_round(clock_type::now());
  if (w.rank() == silent) {
    w.barrier();  // blocked, as a SIGSTOPped rank: no beats
    return;
  }
  auto v = tick_until(live);
  REQUIRE(v.has_value());
  CHECK(v->rank == silent);
  CHECK(v->reason.find("heard nothing from it") != std::string::npos);
  if (w.rank() == 0) {
    CHECK_FALSE(v->from_root);
    live.announce(v->rank, "rank 0 " + v->reason, 1.0);
  } else {
    CHECK(v->from_root);  // rank 0 kept pulsing: only its announcement names anyone
    CHECK(v->reason.rfind("rank 0 heard nothing from it", 0) == 0);
  }
  w.barrier();
}

TEST_CASE("liveness: a live rank a round ahead is heard; only the silent rank is named") {
  // A barrier can complete on the ranks a dying rank reached and not on rank 0: the others run
  // the next round while rank 0 still waits in the last. Each must take the other for alive.
  mpi::world w;
  mpi::beacon b(w);
  app::liveness live(b, 2.0);
  if (w.size() < 3) return;  // needs a rank ahead and a silent one besides rank 0
  const int silent = w.size() - 1;
  live.begin_round(clock_type::now());
  if (w.rank() != 0) live.begin_round(clock_type::now());  // a round ahead of rank 0
  if (w.rank() == silent) {
    w.barrier();
    return;
  }
  auto v = tick_until(live);
  REQUIRE(v.has_value());
  CHECK(v->rank == silent);
  if (w.rank() == 0) {
    live.announce(v->rank, "rank 0 " + v->reason, 1.0);
  } else {
    CHECK(v->from_root);  // rank 0's pulses of the round before still said it lives
  }
  w.barrier();
}

TEST_CASE("liveness: ranks that keep working are never accused, for many times --timeout") {
  mpi::world w;
  mpi::beacon b(w);
  // generous against a busy machine's scheduling gaps; the loop outlasts it twice over
  app::liveness live(b, 3.0);
  live.begin_round(clock_type::now());
  const auto v = tick_until(live, 7.0);
  CHECK_FALSE(v.has_value());
  w.barrier();
}

TEST_CASE("liveness: a rank that gives up reaches rank 0, which acknowledges it") {
  mpi::world w;
  mpi::beacon b(w);
  app::liveness live(b, 60.0);
  live.begin_round(clock_type::now());
  const int reporter = w.size() - 1;
  if (w.rank() == reporter) {
    CHECK(live.report(-1, "rank 1 (host): the other ranks stopped answering", 600.0));
  } else if (w.rank() == 0) {
    auto v = tick_until(live);
    REQUIRE(v.has_value());
    CHECK(v->reporter == reporter);
    CHECK(v->rank == -1);  // it named no one: its whole line is the reason
    CHECK(v->reason == "rank 1 (host): the other ranks stopped answering");
    live.acknowledge(v->reporter);
  }
  w.barrier();
}
