// The rounds of one run on this rank: per round, connect (--connect round), start together,
// run the round (app/round.hpp), keep what it measured, and agree whether to go on.
#include "rdmamesh/app/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <thread>
#include <type_traits>

#include "rdmamesh/app/round.hpp"
#include "rdmamesh/engine/pingpong.hpp"
#include "rdmamesh/engine/stream.hpp"
#include "rdmamesh/fabric/port_counters.hpp"
#include "rdmamesh/stats/series.hpp"
#include "rdmamesh/util/stop.hpp"

namespace rdmamesh::app {
namespace {

// --connect round: QPs for this round's partners, their infos swapped with those partners only
// (O(q) records, never N), then RTR/RTS. A failure is one line per session; the pair fails,
// the job goes on. Every partner takes part in the swap, whatever failed on its side.
std::vector<std::string> connect_round(const context& c, const engine::core& base, const plan::round_role& role) {
  std::vector<std::uint32_t> partners = role.send_to;
  partners.insert(partners.end(), role.recv_from.begin(), role.recv_from.end());
  std::sort(partners.begin(), partners.end());
  partners.erase(std::unique(partners.begin(), partners.end()), partners.end());
  std::vector<std::string> failed;
  std::vector<fabric::conn_info> mine;
  try {
    mine = c.ep.round_infos(partners);
  } catch (const std::exception& e) {
    failed.push_back(fmt::format("rank {}: making QPs for the round failed: {}", c.me, e.what()));
    mine.assign(partners.size() * c.o.qps, fabric::conn_info{});  // the partners see a bad record and say so
  }
  auto swap =
      c.w.iexchange_with(std::span<const std::uint32_t>(partners), std::span<const fabric::conn_info>(mine), c.o.qps);
  // Heard while waiting: a partner that died is named by rank 0 (which judges silence here,
  // as at a round's start) and every rank waiting on it learns who, instead of timing out
  // with nobody to name.
  wait_listening(c, base, "exchanging a round's connections with its partners", swap.done, c.me == 0);
  if (failed.empty()) failed = c.ep.connect_round(partners, swap.received, c.injected);
  return failed;
}

void merge_latency(rank_run& acc, engine::pingpong& eng, const plan::round_role& role) {
  const auto res = eng.round_results();
  const auto failed = eng.round_failures();
  for (std::uint32_t p : role.send_to) acc.latencies[p] = res[p];
  for (std::size_t p = 0; p < failed.size(); ++p) acc.lat_failed[p] |= failed[p];
  acc.lat_all.merge(eng.round_histogram());
}

// Each pair's counters and series come from the round that measured it.
void merge_bandwidth(rank_run& acc, engine::stream& eng, const plan::round_role& role, std::uint32_t round) {
  stats::merge_round(acc.counters, eng.round_results(), role, static_cast<int>(round));
  // a rank with no pair in a round only waits it out: its figures are of the rounds it measured
  const bool active = !role.send_to.empty() || !role.recv_from.empty();
  acc.host_rounds.push_back(active ? eng.round_host() : engine::host_use{});
  if (acc.slots == 0) return;
  const auto tx = eng.round_series(false, acc.slots), rx = eng.round_series(true, acc.slots);
  auto take = [&](std::vector<double>& into, const std::vector<double>& from, std::uint32_t p) {
    const auto at = static_cast<std::ptrdiff_t>(std::size_t{p} * acc.slots);
    std::copy_n(from.begin() + at, acc.slots, into.begin() + at);
  };
  for (std::uint32_t p : role.send_to) take(acc.tx_t, tx, p);
  for (std::uint32_t p : role.recv_from) take(acc.rx_t, rx, p);
}

template <class Engine>
rank_run empty_run(const context& c, double seconds) {
  rank_run acc;
  acc.counters.assign(c.n, {});
  acc.slots =
      std::is_same_v<Engine, engine::stream> && c.o.duration_mode() ? stats::series_slots(seconds, c.o.interval_s) : 0;
  acc.tx_t.assign(std::size_t{c.n} * acc.slots, std::numeric_limits<double>::quiet_NaN());
  acc.rx_t = acc.tx_t;
  acc.latencies.assign(c.n, {});
  acc.lat_failed.assign(c.n, 0);
  return acc;
}

template <class Engine>
rank_run measure_rounds(const context& c, Engine& eng, const plan::subset_schedule& sched, std::uint64_t size,
                        const retest_of& retest, bool& stopped) {
  const bool retest_round = retest.plan != nullptr;
  const double seconds = retest_round && retest.seconds > 0 ? retest.seconds : c.o.round_seconds(retest_round);
  rank_run acc = empty_run<Engine>(c, seconds);
  if constexpr (std::is_same_v<Engine, engine::stream>) eng.set_round(seconds, c.o.warmup_seconds(retest_round));
  const engine::core& base = eng.base();
  auto on_stuck = [&](const liveness::verdict& v, const std::string& what) {
    c.give_up(stuck_line(c, v, base.suspects(), what), v);
  };
  for (std::uint32_t round = 0; round < sched.rounds(); ++round) {
    const plan::round_role role = sched.role(round, c.me);
    if (c.o.connect == connect_kind::round) {
      const auto t0 = engine::clock::now();
      for (auto& e : connect_round(c, base, role)) acc.events.push_back(std::move(e));
      eng.relink(c.ep.sessions());
      acc.connect_s += std::chrono::duration<double>(engine::clock::now() - t0).count();
    }
    eng.begin_round(size, role);
    mpi::request start = c.w.ibarrier();
    // Rank 0 judges silence here too: a barrier can complete on the ranks a dying rank reached
    // and not on the others, and rank 0 may be the one left waiting while the rest run the
    // round. Its wait would end at --timeout anyway (collective_bound_s); judging only decides
    // that the rank it has not heard from is named, not nobody. The others do not judge rank 0
    // here: it writes each run between runs.
    wait_listening(c, base, "starting a round", start, c.me == 0);
    auto errors = run_round(c.w, eng, c.o, c.live, on_stuck);
    if constexpr (std::is_same_v<Engine, engine::stream>) {
      merge_bandwidth(acc, eng, role, round);
    } else {
      merge_latency(acc, eng, role);
    }
    for (auto& e : eng.base().take_events()) acc.events.push_back(std::move(e));
    for (auto& e : errors) acc.events.push_back(std::move(e));
    ++acc.rounds_done;
    // Slurm and mpirun signal every rank, a user may signal one: all learn of it here
    const int go_on = stop_requested() ? 0 : 1;
    int all_go_on = 0;
    mpi::request agree = c.w.iall_true(go_on, all_go_on);
    // a rank that dies as its round ends is named here: the others' rounds are over
    wait_listening(c, base, "agreeing whether to go on", agree, true);
    if (all_go_on == 0) {
      stopped = true;
      break;
    }
  }
  return acc;
}

// The lowest rank on this rank's device and port reads the port's counters, once per port.
bool reads_port(const context& c) {
  const auto& me = c.ranks[c.me];
  for (std::uint32_t r = 0; r < c.me; ++r) {
    const auto& o = c.ranks[r];
    if (o.node == me.node && o.port == me.port && o.device == me.device) return false;
  }
  return me.port > 0 && me.device[0] != '\0';
}

// RDMAMESH_SYSFS: where sysfs is mounted when not at /sys (a container that mounts the host's
// elsewhere; a network namespace whose own sysfs shows devices without their counters)
std::filesystem::path my_device_dir(const context& c) {
  const char* sysfs = std::getenv("RDMAMESH_SYSFS");
  const std::filesystem::path root = sysfs != nullptr && *sysfs != '\0' ? sysfs : "/sys";
  return root / "class" / "infiniband" / c.ranks[c.me].device.data();
}

fabric::counter_set read_my_port(const context& c) {
  return fabric::read_port_counters(my_device_dir(c), c.ranks[c.me].port);
}

std::chrono::milliseconds counters_lifespan(const context& c) {
  return fabric::counters_lifespan(my_device_dir(c), c.ranks[c.me].port);
}

}  // namespace

template <class Engine>
bool run_one(const context& c, Engine& eng, const plan::subset_schedule& sched, std::uint64_t size,
             std::uint32_t active_per_node, std::uint32_t index, bool& stopped, const retest_of& retest) {
  // around the whole run, outside every measured interval: a sysfs read costs milliseconds
  const bool reads = reads_port(c);
  const fabric::counter_set before = reads ? read_my_port(c) : fabric::counter_set{};
  const auto read_at = std::chrono::steady_clock::now();
  rank_run acc = measure_rounds(c, eng, sched, size, retest, stopped);
  if (reads && !before.empty()) {
    const auto& me = c.ranks[c.me];
    // past the counters' cache (a jiffy or two beyond its lifespan), or a short run reads its start
    std::this_thread::sleep_until(read_at + 2 * counters_lifespan(c) + std::chrono::milliseconds(10));
    acc.port_text = fabric::port_reading{static_cast<std::int32_t>(c.me), me.device.data(), me.port,
                                         fabric::counter_delta(before, read_my_port(c))}
                        .to_text();
  }
  const bool clean = acc.clean();
  io::run_record r = assemble(c, eng.base(), sched, size, active_per_node, index, stopped, acc, retest);
  if (c.me == 0) publish(c, std::move(r));
  return clean;
}

template bool run_one(const context&, engine::stream&, const plan::subset_schedule&, std::uint64_t, std::uint32_t,
                      std::uint32_t, bool&, const retest_of&);
template bool run_one(const context&, engine::pingpong&, const plan::subset_schedule&, std::uint64_t, std::uint32_t,
                      std::uint32_t, bool&, const retest_of&);

}  // namespace rdmamesh::app
