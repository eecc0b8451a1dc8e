// Gathering one run to rank 0 and turning it into a record: bandwidth counters and time series,
// or latency summaries and histograms; then the console lines and the ledger.
#include "rdmamesh/app/assemble.hpp"
#include "rdmamesh/app/retest.hpp"

#include <limits>
#include <span>

#include "rdmamesh/app/shared_draws.hpp"
#include "rdmamesh/io/report.hpp"
#include "rdmamesh/stats/outliers.hpp"
#include "rdmamesh/stats/series.hpp"

namespace rdmamesh::app {
namespace {

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + '\n';
  return out;
}

std::vector<std::string> split_lines(const std::vector<std::string>& blobs) {
  std::vector<std::string> out;
  for (const auto& b : blobs) {
    std::size_t pos = 0;
    while (pos < b.size()) {
      const std::size_t eol = b.find('\n', pos);
      out.push_back(b.substr(pos, eol - pos));
      pos = eol == std::string::npos ? b.size() : eol + 1;
    }
  }
  return out;
}

// Gathered [rank][peer][slot] -> [slot][src][dst]; rx rows are the receiver's.
void transpose_series(const context& c, const std::vector<double>& tx_t, const std::vector<double>& rx_t,
                      std::uint32_t slots, io::run_record& r) {
  const std::size_t n = c.n;
  r.slots = slots;
  r.interval_s = c.o.interval_s;
  r.tx_bw_t.assign(slots * n * n, std::numeric_limits<double>::quiet_NaN());
  r.rx_bw_t = r.tx_bw_t;
  const bool rx_seen = receiver_sees_messages(c.o.op);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) {
      for (std::size_t k = 0; k < slots; ++k) {
        r.tx_bw_t[(k * n + a) * n + b] = tx_t[(a * n + b) * slots + k];
        if (rx_seen) r.rx_bw_t[(k * n + a) * n + b] = rx_t[(b * n + a) * slots + k];
      }
    }
  }
}

void gather_bandwidth(const context& c, const engine::core& base, rank_run& acc, const retest_of& retest,
                      io::run_record& r) {
  const auto rows = guarded(c, base, "gathering counters",
                            [&] { return c.w.gather(std::span<const stats::pair_counters>(acc.counters)); });
  if (acc.slots > 0) {
    const auto tx_t =
        guarded(c, base, "gathering the time series", [&] { return c.w.gather(std::span<const double>(acc.tx_t)); });
    const auto rx_t =
        guarded(c, base, "gathering the time series", [&] { return c.w.gather(std::span<const double>(acc.rx_t)); });
    if (c.me == 0) transpose_series(c, tx_t, rx_t, acc.slots, r);
  }
  engine::host_use mine;  // over the rounds it measured (an idle round adds nothing)
  for (const auto& h : acc.host_rounds) mine += h;
  const auto host =
      guarded(c, base, "gathering host use", [&] { return c.w.gather(std::span<const engine::host_use>(&mine, 1)); });
  // a retest's pairs alone, each beside what its ranks had of a CPU in its own round (every rank
  // ran the same rounds: a stop request ends them on all at once)
  std::vector<engine::host_use> host_rounds;
  if (retest.plan) {
    host_rounds = guarded(c, base, "gathering host use by round",
                          [&] { return c.w.gather(std::span<const engine::host_use>(acc.host_rounds)); });
  }
  // the finder's settings, on every rank: each draws a share of the run's false-alarm draws
  const stats::finder_settings judge{.slow_pct = c.o.slow_pct,
                                     .expect_bps = c.expect_floor_bps,
                                     .counted = c.o.duration_mode(),
                                     .alpha = c.o.false_alarm_pct / 100,
                                     .max_quantum = plan::cq_mod_for(c.o, r.size, c.window),
                                     .min_pair_s = 0.1};
  if (c.me != 0) {
    if (!retest.plan) shared_draws(c, base, judge, nullptr);
    return;
  }
  r.host = host;
  r.bw = stats::assemble(rows, c.n, r.size, receiver_sees_messages(c.o.op));
  if (retest.plan) {  // a few pairs alone: their verdicts, not outliers among themselves
    r.retest_of = retest.index;
    const auto alone_host =
        stats::pair_host_figures(r.bw->round, host_rounds, static_cast<std::uint32_t>(acc.host_rounds.size()));
    // a pair that moved nothing alone reads half a message over its round
    const double floor_bps = 0.5 * static_cast<double>(r.size) / std::max(retest.seconds, 1e-3);
    r.retest =
        stats::judge_retest(*retest.plan, *retest.before, r.bw->tx_bw, c.o.slow_pct, c.classes, floor_bps, &alone_host);
    r.retest_controls = retest.plan->controls.size();
    r.retest_controls_pct = stats::control_pcts(*retest.plan, r.bw->tx_bw, c.classes);
    if (retest.model) {  // the model's parts, their pairs alone that their host held back left out
      stats::pair_list held;
      for (const auto& v : r.retest)
        if (v.starved) held.emplace_back(v.src, v.dst);
      const auto settings = model_settings_of(c.o);
      r.retest_parts =
          stats::judge_model_retest(*retest.model, r.bw->tx_bw, c.classes, settings, floor_bps, held, r.retest);
      r.retest_alpha = settings.alpha;
      r.retest_alpha_runs = c.o.retested_runs();
    }
  } else {
    r.outliers = stats::find_outliers(*r.bw, r.size, c.node_of, judge, c.uplinks, c.nics);
    const auto model = stats::model_for_draws(*r.bw, r.size, c.node_of, judge, c.uplinks, c.nics, *r.outliers);
    r.false_alarms = shared_draws(c, base, judge, &model);
    r.outlier_text = io::outlier_lines(r, c.ranks, c.uplink_names);
  }
}

void gather_latency(const context& c, const engine::core& base, rank_run& acc, io::run_record& r) {
  const auto rows = guarded(c, base, "gathering latencies",
                            [&] { return c.w.gather(std::span<const stats::latency_summary>(acc.latencies)); });
  const auto failed = guarded(c, base, "gathering failures",
                              [&] { return c.w.gather(std::span<const std::uint64_t>(acc.lat_failed)); });
  const auto counts = guarded(c, base, "summing histograms", [&] { return c.w.reduce_sum(acc.lat_all.counts()); });
  struct moments {
    std::uint64_t count, min, max;
    double mean, m2;
  };
  const moments mine{acc.lat_all.count(), acc.lat_all.min(), acc.lat_all.max(), acc.lat_all.mean(), acc.lat_all.m2()};
  const auto all_moments =
      guarded(c, base, "gathering moments", [&] { return c.w.gather(std::span<const moments>(&mine, 1)); });
  if (c.me != 0) return;
  r.lat = stats::assemble_latency(rows, c.n);
  r.lat_all.add_counts(counts);
  for (const auto& m : all_moments) r.lat_all.merge_moments(m.count, m.min, m.max, m.mean, m.m2);
  r.lat_flags = stats::square<std::uint8_t>(c.n, 0);
  // a failed flow taints the pair in both directions: either end may have seen it
  for (std::uint32_t a = 0; a < c.n; ++a) {
    for (std::uint32_t b = 0; b < c.n; ++b) {
      if (failed[std::size_t{a} * c.n + b] != 0) r.lat_flags.at(a, b) = r.lat_flags.at(b, a) = 1;
    }
  }
}

}  // namespace

bool rank_run::clean() const {
  bool ok = events.empty();
  for (const auto& p : counters) ok = ok && p.flags == 0 && p.verify_errors == 0;
  for (auto f : lat_failed) ok = ok && f == 0;
  return ok;
}

io::run_record assemble(const context& c, const engine::core& base, const plan::subset_schedule& sched,
                        std::uint64_t size, std::uint32_t active_per_node, std::uint32_t index, bool stopped,
                        rank_run& acc, const retest_of& retest) {
  auto events =
      split_lines(guarded(c, base, "collecting events", [&] { return c.w.allgather_strings(join_lines(acc.events)); }));
  const auto ports = guarded(c, base, "collecting port counters", [&] { return c.w.allgather_strings(acc.port_text); });
  io::run_record r;
  r.index = index;
  for (std::size_t k = 0; k < ports.size(); ++k) {
    if (auto p = fabric::port_reading::from_text(static_cast<std::int32_t>(k), ports[k])) r.ports.push_back(*p);
  }
  r.pattern = sched.pattern();
  r.size = size;
  r.rounds = sched.rounds();
  r.rounds_done = acc.rounds_done;
  if (retest.plan && retest.seconds > 0) r.round_s = retest.seconds;
  r.interrupted = stopped;
  r.active_per_node = active_per_node;
  if (active_per_node > 0) {
    r.active.assign(c.n, 0);
    for (auto m : sched.members()) r.active[m] = 1;
  }
  if (c.o.connect == connect_kind::round) {
    r.round_connect_s = guarded(c, base, "gathering connect times", [&] { return c.w.max(acc.connect_s); });
  }
  r.cq_mod = plan::cq_mod_for(c.o, size, c.window);
  r.inline_size = (c.o.op != op_kind::read && size <= c.inline_size) ? c.inline_size : 0;
  r.events = std::move(events);
  if (c.o.mode == mode_kind::bw) {
    gather_bandwidth(c, base, acc, retest, r);
  } else {
    gather_latency(c, base, acc, r);
  }
  return r;
}

void publish(const context& c, io::run_record r) {
  print(io::format_run(c.o, r));
  for (const auto& line : io::window_lines(c.o, r, c.ranks)) print(line + "\n");
  for (std::size_t i = 0; i < r.outlier_text.size(); ++i) {
    // failed pairs have their own "# failed pairs:" line already
    if (r.outliers->found[i].kind != stats::outlier_kind::failed) print(r.outlier_text[i] + "\n");
  }
  if (r.outliers) print(io::judged_line(*r.outliers) + "\n");
  if (const auto line = io::false_alarm_line(r.false_alarms); !line.empty()) print(line + "\n");
  if (const auto line = io::host_line(r); !line.empty()) print(line + "\n");
  for (const auto& line : io::port_lines(r, c.ranks)) print(line + "\n");
  for (const auto& line : io::retest_lines(r, c.ranks, c.o.slow_pct)) print(line + "\n");
  for (const auto& line : io::retest_part_lines(r, c.ranks, c.o.slow_pct, c.uplink_names)) print(line + "\n");
  print(io::format_scaling(r, c.node_of, c.nodes));
  c.book.add(std::move(r));
}

}  // namespace rdmamesh::app
