// Console formatting with fmt. Bandwidths in Gb/s (10^9 bit/s), rates in millions of
// messages per second, latencies in microseconds, sizes in bytes.
#include "rdmamesh/io/report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rdmamesh/stats/median.hpp"
#include "rdmamesh/util/units.hpp"
#include "rdmamesh/version.hpp"

namespace rdmamesh::io {
namespace {

std::string where(const fabric::rank_info& r) {
  std::string s = fmt::format("{} port {} ({})", fabric::text(r.device), r.port, r.ethernet ? "RoCE" : "IB");
  if (r.gid_index >= 0) s += fmt::format(" gid_index {} {}", r.gid_index, fabric::text(r.gid));
  return s + fmt::format(" mtu {}", r.mtu);
}

std::string num(double v, int decimals) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : "-";
}
std::string gbps(double bytes_per_s) {
  return num(to_gbps(bytes_per_s), 3);
}
std::string us(double ns) {
  return num(ns * 1e-3, 2);
}

template <class T>
bool any_nonzero(const stats::square<T>& m) {
  return std::any_of(m.v.begin(), m.v.end(), [](T x) { return x != 0; });
}

template <class T>
std::vector<std::string> nonzero_pairs(const stats::square<T>& m) {
  std::vector<std::string> out;
  for (std::uint32_t s = 0; s < m.n; ++s) {
    for (std::uint32_t d = 0; d < m.n; ++d) {
      if (m.at(s, d) != 0) out.push_back(fmt::format("{}->{}", s, d));
    }
  }
  return out;
}

}  // namespace

std::string format_placement(std::size_t rank, const fabric::rank_info& r, bool with_device) {
  const auto source = static_cast<fabric::bound_by>(r.bound);
  std::string out = fmt::format("# rank {:<3} {}  local {}  ", rank, fabric::text(r.host), r.local_rank);
  if (source == fabric::bound_by::none) {
    out += "not bound";
  } else {
    out += fmt::format("{}  cpus {}  bound by {}", r.core >= 0 ? fmt::format("core {}", r.core) : "cores -",
                       fabric::text(r.cpus), fabric::to_string(source));
  }
  out += r.numa >= 0 ? fmt::format("  numa {}{}", r.numa, r.mem_on_numa ? "" : " (memory not bound)") : "";
  if (with_device) out += fmt::format("  device {}", where(r));
  // several NICs on the node: which rail, and why this one
  if (r.nics > 1) {
    out +=
        fmt::format("  rail {} of {} ({})", r.rail, r.nics, fabric::to_string(static_cast<fabric::nic_how>(r.nic_how)));
  }
  return out + "\n";
}

std::string format_header(const options& o, std::span<const fabric::rank_info> ranks, std::uint32_t inline_size) {
  std::string out = fmt::format("# rdmamesh {}\n", tool_version);
  std::map<std::string, std::vector<std::size_t>> by_host;
  for (std::size_t i = 0; i < ranks.size(); ++i) by_host[std::string(fabric::text(ranks[i].host))].push_back(i);
  std::vector<std::string> hosts;
  for (const auto& [h, rs] : by_host) hosts.push_back(fmt::format("{} ({} ranks)", h, rs.size()));
  out += fmt::format("# ranks {}  hosts {}: {}\n", ranks.size(), by_host.size(), fmt::join(hosts, ", "));

  std::set<std::string> places;
  for (const auto& r : ranks) places.insert(where(r));
  const bool one_device = places.size() == 1;
  if (one_device) out += fmt::format("# device {}\n", *places.begin());
  if (ranks.size() <= max_printed_matrix) {
    for (std::size_t i = 0; i < ranks.size(); ++i) out += format_placement(i, ranks[i], !one_device);
  } else {
    std::map<std::string, std::size_t> sources;
    for (const auto& r : ranks) ++sources[fabric::to_string(static_cast<fabric::bound_by>(r.bound))];
    std::vector<std::string> parts;
    for (const auto& [s, c] : sources) parts.push_back(fmt::format("{} by {}", c, s));
    out += fmt::format("# placement: ranks bound {} (every rank's core, NUMA node and device: /ranks in the file)\n",
                       fmt::join(parts, ", "));
  }
  std::vector<std::string_view> patterns;
  for (auto p : o.patterns) patterns.push_back(to_string(p));
  out += fmt::format("# mode {}  op {}  pattern {}{}{}{}  qps/peer {}\n", to_string(o.mode), to_string(o.op),
                     fmt::join(patterns, ","), o.bidirectional ? " (bidirectional)" : "",
                     o.target >= 0 ? fmt::format(" (target {})", o.target) : "",
                     o.rails == rails_kind::aligned ? " (rails aligned: same-rail pairs only)" : "", o.qps);
  out += fmt::format("# tx_depth {}  rx_depth {}  post_list {}  cq_mod {}  inline up to {} B\n", o.tx_depth,
                     o.rx_depth ? fmt::format("{}", o.rx_depth) : std::string("auto"), o.post_list,
                     o.cq_mod ? fmt::format("{}", o.cq_mod) : std::string("auto (100, 1 above 8K)"), inline_size);
  std::vector<std::string> sizes;
  for (auto s : o.sizes) sizes.push_back(format_size(s));
  out += fmt::format("# sizes {}  ", fmt::join(sizes, ","));
  if (o.duration_mode()) {
    out += fmt::format("duration {:g} s per round after {:g} s warm-up", o.duration_s, o.warmup_s);
  } else {
    out += fmt::format("iters {} per pair", o.iters);
  }
  out += fmt::format("  verify {}\n", o.verify ? "on" : "off");
  if (o.mode == mode_kind::lat) {
    out += o.op == op_kind::read ? "# latency = the time a READ takes to complete (a full round trip)\n"
                                 : "# latency = half the ping-pong round trip, as perftest's *_lat\n";
  }
  return out;
}

std::string format_table_header(const options& o) {
  if (o.mode == mode_kind::lat) {
    return fmt::format("#{:>7} {:>9} {:>6} {:>6} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>8} {:>8}\n", "pattern",
                       "size[B]", "rounds", "pairs", "samples", "min[us]", "p50", "p90", "p99", "p99.9", "max", "mean",
                       "stddev");
  }
  return fmt::format("#{:>7} {:>9} {:>6} {:>6} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11} {:>8}\n", "pattern", "size[B]",
                     "rounds", "pairs", "min[Gb/s]", "median", "max", "aggregate", "rx_aggr", "Mmsg/s", "fairness");
}

std::string format_run(const options& o, const run_record& r) {
  std::string out;
  const bool single_size = o.sizes.size() == 1;
  if (r.bw) {
    const stats::run_matrices& m = *r.bw;
    const stats::summary tx = stats::summarize(m.tx_bw, m.round);
    const stats::summary rx = stats::summarize(m.rx_bw, m.round);
    const stats::summary rate = stats::summarize(m.tx_rate, m.round);
    std::string fairness = "-";
    if (r.pattern == pattern_kind::incast) {
      const auto fair = stats::column_fairness(receiver_sees_messages(o.op) ? m.rx_bw : m.tx_bw);
      double worst = INFINITY;  // the least fair target
      for (double f : fair) {
        if (std::isfinite(f)) worst = std::min(worst, f);
      }
      fairness = num(worst, 3);
    }
    const std::string label = r.retest_of >= 0 ? "retest" : std::string(to_string(r.pattern));
    out += fmt::format(" {:>7} {:>9} {:>6} {:>6} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11} {:>8}\n", label, r.size,
                       r.rounds, tx.pairs, tx.pairs ? gbps(tx.min) : "-", tx.pairs ? gbps(tx.median) : "-",
                       tx.pairs ? gbps(tx.max) : "-", tx.pairs ? gbps(tx.aggregate) : "-",
                       rx.pairs ? gbps(rx.aggregate) : "-",
                       rate.pairs ? fmt::format("{:#.4g}", rate.aggregate / 1e6) : "-", fairness);
    if (single_size) out += format_matrix(m.tx_bw, fmt::format("{} send bandwidth", label));
    if (r.pattern == pattern_kind::incast && single_size) {
      out += format_values(stats::shares(receiver_sees_messages(o.op) ? m.rx_bw : m.tx_bw),
                           "incast share of each target's bandwidth per sender", 3);
    }
    if (o.verify) {
      std::uint64_t bad = 0, checked = 0;
      for (auto v : m.verify_errors.v) bad += v;
      for (auto v : (receiver_sees_messages(o.op) ? m.rx_total.v : m.tx_total.v)) checked += v;
      out += bad == 0 ? fmt::format("# verify: ok, {} messages checked end to end\n", checked)
                      : fmt::format("# verify: FAILED, {} mismatching messages\n", bad);
    }
    if (any_nonzero(m.flags)) out += fmt::format("# failed pairs: {}\n", fmt::join(nonzero_pairs(m.flags), " "));
  }
  if (r.lat) {
    const stats::histogram& h = r.lat_all;
    std::size_t pairs = 0;
    for (auto c : r.lat->count.v) pairs += c > 0 ? 1 : 0;
    out += fmt::format(" {:>7} {:>9} {:>6} {:>6} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>8} {:>8}\n",
                       to_string(r.pattern), r.size, r.rounds, pairs, h.count(), us(static_cast<double>(h.min())),
                       us(static_cast<double>(h.percentile(50))), us(static_cast<double>(h.percentile(90))),
                       us(static_cast<double>(h.percentile(99))), us(static_cast<double>(h.percentile(99.9))),
                       us(static_cast<double>(h.max())), us(h.mean()), us(h.stddev()));
    if (single_size) out += format_values(r.lat->p50, fmt::format("{} p50 latency [us]", to_string(r.pattern)), 2);
    if (any_nonzero(r.lat_flags))
      out += fmt::format("# failed pairs: {}\n", fmt::join(nonzero_pairs(r.lat_flags), " "));
  }
  if (r.interrupted) {
    out += fmt::format("# interrupted: round {} of {} was cut short by a stop request; later rounds did not run\n",
                       r.rounds_done, r.rounds);
  }
  if (r.round_connect_s >= 0 && r.rounds_done > 0) {
    out += fmt::format(
        "# connect round: {:.3g} ms a round to re-target the QPs (slowest rank), outside the measured "
        "interval\n",
        1e3 * r.round_connect_s / r.rounds_done);
  }
  for (const auto& e : r.events) out += fmt::format("# event: {}\n", e);
  return out;
}

std::string format_matrix(const stats::square<double>& bw, const std::string& title) {
  stats::square<double> gb = bw;
  for (auto& v : gb.v) v = to_gbps(v);
  return format_values(gb, title + " [Gb/s]", 3);
}

std::string format_values(const stats::square<double>& m, const std::string& title, int decimals) {
  if (m.n > max_printed_matrix) {
    return fmt::format("# {}: {} x {} matrix not printed (more than {} ranks); see the HDF5 file\n", title, m.n, m.n,
                       max_printed_matrix);
  }
  std::string out = fmt::format("# {}, row = source rank, column = destination rank\n", title);
  out += fmt::format("{:>8}", "src\\dst");
  for (std::uint32_t c = 0; c < m.n; ++c) out += fmt::format(" {:>9}", c);
  out += '\n';
  for (std::uint32_t r = 0; r < m.n; ++r) {
    out += fmt::format("{:>8}", r);
    for (std::uint32_t c = 0; c < m.n; ++c) out += fmt::format(" {:>9}", r == c ? "-" : num(m.at(r, c), decimals));
    out += '\n';
  }
  return out;
}

std::string format_scaling(const run_record& r, std::span<const std::int32_t> node_of, std::uint32_t nodes) {
  if (!r.bw || r.active_per_node == 0) return {};
  const auto per_node = stats::node_throughput(r.bw->tx_bw, r.bw->round, node_of, nodes);
  const auto split = stats::node_throughput_split(r.bw->tx_bw, r.bw->round, node_of, nodes);
  const auto per_rank = stats::rank_throughput(r.bw->tx_bw, r.bw->round);
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    int c = 0;
    for (double x : v) {
      if (std::isfinite(x)) {
        s += x;
        ++c;
      }
    }
    return c ? s / c : NAN;
  };
  // one node has no port-side traffic: its figure is the loopback
  const std::string where = nodes > 1 ? fmt::format(" ({} through its port, {} within the node)",
                                                    gbps(mean(split.port)), gbps(mean(split.loopback)))
                                      : std::string(" (within the node: one node, nothing crosses a port)");
  return fmt::format("# scaling: {} rank(s) per node active: per node {} Gb/s{}, per rank {} Gb/s (means)\n",
                     r.active_per_node, gbps(mean(per_node)), where, gbps(mean(per_rank)));
}

std::string format_contention(const run_record& mesh) {
  if (!mesh.contention) return {};
  const stats::summary s = stats::summarize(*mesh.contention);
  if (s.pairs == 0) return {};
  return fmt::format(
      "# contention at {} B: mesh / {} bandwidth per pair: min {:.3f}  median {:.3f}  max {:.3f} over "
      "{} pairs\n",
      mesh.size, to_string(mesh.contention_vs), s.min, s.median, s.max, s.pairs);
}

std::string format_setup(const stats::setup_summary& s, const stats::resource_peaks& held,
                         std::span<const fabric::rank_info> ranks, bool shared_rx) {
  std::vector<std::string> parts;
  for (std::size_t p = 0; p < stats::setup_phases; ++p) {
    parts.push_back(fmt::format("{} {:.3g}/{:.3g}", stats::setup_phase_names[p], s.phases[p].median, s.phases[p].max));
  }
  std::string slowest = fmt::format("rank {}", s.total.slowest);
  if (s.total.slowest < ranks.size()) slowest += fmt::format(" ({})", fabric::text(ranks[s.total.slowest].host));
  auto held_text = [](const stats::setup_resources& r) {
    return fmt::format("{} QPs, {} CQ entries, {} bytes registered", r.qps, r.cq_entries,
                       format_size(r.registered_bytes));
  };
  return fmt::format(
      "# setup [s] median/max over ranks: {}; slowest {}, {:.3g} s of work\n"
      "# resources: per rank up to {}; per node up to {}{}\n",
      fmt::join(parts, "  "), slowest, s.total.max, held_text(held.rank), held_text(held.node),
      shared_rx ? "; one receive region shared by every peer (the same at any N)" : "; a receive region per peer");
}

namespace {

// "rank 5 (node07, mlx5_1)", or "rank 5" when the rank's facts are not at hand
std::string rank_name(std::size_t rank, std::span<const fabric::rank_info> ranks) {
  if (rank >= ranks.size()) return fmt::format("rank {}", rank);
  return fmt::format("rank {} ({}, {})", rank, fabric::text(ranks[rank].host), fabric::text(ranks[rank].device));
}

// "node2", "node2's mlx5_1", "rank 5 (node07, mlx5_1)": the part the model measured alone
std::string part_name(const stats::model_cause& p, std::span<const fabric::rank_info> ranks,
                      std::span<const std::string> uplink_names) {
  if (p.kind == stats::outlier_kind::uplink)
    return p.node >= 0 && static_cast<std::size_t>(p.node) < uplink_names.size()
               ? "uplink " + uplink_names[static_cast<std::size_t>(p.node)]
               : fmt::format("uplink of switch {}", p.node);
  const auto r = p.members.empty() ? ranks.size() : std::size_t{p.members.front()};
  if (p.kind == stats::outlier_kind::rank || r >= ranks.size())
    return rank_name(static_cast<std::size_t>(p.rank), ranks);
  if (p.kind == stats::outlier_kind::nic)
    return fmt::format("{}'s {}", fabric::text(ranks[r].host), fabric::text(ranks[r].device));
  return std::string(fabric::text(ranks[r].host));
}

std::string part_reading(const stats::lasting_effect& l, double slow_pct) {
  if (l.held_back)
    return fmt::format("undecided (its host held back {} of its {} pairs alone: a test of its CPU, not its network)",
                       l.held, l.held + l.pairs);
  if (l.counted && l.within) return "counted, as part of a larger part counted alone";
  if (l.counted && l.narrowed) return "counted, but a part inside it stands for it (its other parts are fine)";
  if (l.counted) return "counted";
  if (l.explained)
    return "not counted: alone it is slow only toward a counted part of the other side (that part's evidence)";
  if (l.cleared) return fmt::format("cleared (above {:g} % alone)", slow_pct);
  if (l.pairs == 0) return "undecided (no pair of it measured alone beside controls)";
  // its 95 % interval can lie below --slow while the test, at the job's far smaller level, is not beyond it
  if (l.hi < std::log(slow_pct / 100))
    return fmt::format("undecided (below {:g} % at 95 %, not at the job's false-alarm level)", slow_pct);
  return fmt::format("undecided (its interval spans {:g} %)", slow_pct);
}

}  // namespace

std::vector<std::string> retest_part_lines(const run_record& r, std::span<const fabric::rank_info> ranks,
                                           double slow_pct, std::span<const std::string> uplink_names) {
  std::vector<std::string> lines;
  for (const auto& l : r.retest_parts) {
    const std::string figures = std::isnan(l.effect)
                                    ? std::string("not measured alone")
                                    : fmt::format(
                                          "alone at {:.0f} % of the controls ({:.0f}–{:.0f} %; {} pair(s), {} "
                                          "control(s)), p {:.2g} were it at {:g} %",
                                          100 * std::exp(l.effect), 100 * std::exp(l.lo), 100 * std::exp(l.hi), l.pairs,
                                          l.controls, l.p_slow, slow_pct);
    const bool up = l.part.kind == stats::outlier_kind::uplink;
    const char* side = l.part.sends ? (up ? "its way up" : "its sends") : (up ? "its way down" : "its receives");
    lines.push_back(fmt::format("# retest of run {}, by part: {}: {} {}: {}", r.retest_of,
                                part_name(l.part, ranks, uplink_names), side, figures, part_reading(l, slow_pct)));
  }
  return lines;
}

std::vector<std::string> retest_lines(const run_record& r, std::span<const fabric::rank_info> ranks, double slow_pct) {
  std::vector<std::string> lines;
  auto who = [&](std::uint32_t rank) { return rank_name(rank, ranks); };
  for (const auto& v : r.retest) {
    const std::string before = std::isnan(v.before) ? std::string("a fresh partner, not met in the run")
                                                    : fmt::format("{:.3f} in the run", to_gbps(v.before));
    const std::string figures =
        std::isnan(v.pct)
            ? fmt::format("alone ({:.3f} Gb/s, {}), no control of its path measured", to_gbps(v.alone), before)
            : fmt::format(
                  "alone at {:.0f} % of its controls ({:.0f}–{:.0f} %; {} control(s); {:.3f} Gb/s, {}), "
                  "p {:.2g} were it at {:g} %",
                  v.pct, v.lo_pct, v.hi_pct, v.controls, to_gbps(v.alone), before, v.p_slow, slow_pct);
    // a cause is what a run named and the job's test counted: a pair the run read slow only as
    // part of something else (a rank's, a node's sends) names no link, whatever it reads alone
    const std::string reading =
        v.counted   ? std::string("still slow alone (its link or NIC)")
        : v.starved ? fmt::format(
                          "undecided alone (its ranks had {:.0f} % of a CPU, its controls' {:.0f} %: its host held it "
                          "back, not its link: nothing decided on it)",
                          100 * v.cpu_share, 100 * v.controls_cpu_share)
        : v.still_slow && v.named
            ? std::string("still slow alone, not at the job's false-alarm level: nothing counted on it")
        : v.still_slow ? std::string("still slow alone (the run named no link here: its part's retest decides)")
        : v.fine       ? std::string("fine alone (contention)")
        : std::isnan(v.pct)
            ? std::string("undecided alone (nothing to read it against: nothing decided on it)")
            : fmt::format("undecided alone (its interval spans {:g} %: nothing decided on it)", slow_pct);
    lines.push_back(
        fmt::format("# retest of run {}: {} -> {} {}: {}", r.retest_of, who(v.src), who(v.dst), figures, reading));
  }
  return lines;
}

std::vector<std::string> window_lines(const options& o, const run_record& r, std::span<const fabric::rank_info> ranks) {
  std::vector<std::string> lines;
  // a stop request cuts every window short, and the "# interrupted:" line already says why
  if (!r.bw || !o.duration_mode() || r.interrupted) return lines;
  const auto windows = stats::rank_windows(*r.bw);
  for (std::size_t rank = 0; rank < windows.size(); ++rank) {
    const double w = windows[rank];
    const double planned = r.round_seconds(o);
    if (!(w < 0.9 * planned)) continue;  // NaN: it measured no pair
    lines.push_back(fmt::format(
        "# short window: {} measured {:.3g} s of the {:.3g} s interval (no CPU when it opened: an oversubscribed node "
        "or a stopped rank); {}",
        rank_name(rank, ranks), w, planned, w > 0 ? "its figures cover what it measured" : "its figures are NaN"));
  }
  return lines;
}

namespace {

std::string pct(double v) {
  return v >= 10 || v == 0 ? fmt::format("{:.0f} %", v) : fmt::format("{:.2g} %", v);
}

// "its sends at 41 % and its receives at 43 % of the median", leaving out a side not named
std::string sides(const stats::outlier& o, const char* whose, const std::string& of) {
  std::vector<std::string> parts;
  if (std::isfinite(o.send_pct)) parts.push_back(fmt::format("{} sends at {}", whose, pct(o.send_pct)));
  if (std::isfinite(o.recv_pct)) parts.push_back(fmt::format("{} receives at {}", whose, pct(o.recv_pct)));
  return fmt::format("{} {}", fmt::join(parts, " and "), of);
}

std::string node_name(std::int32_t node, std::span<const fabric::rank_info> ranks) {
  const auto members = fabric::ranks_of_node(node, ranks);
  if (members.empty()) return fmt::format("node {}", node);
  return fmt::format("node {} (ranks {})", fabric::text(ranks[members.front()].host), fmt::join(members, ","));
}

}  // namespace

std::string nic_subject(std::int32_t node, std::int32_t rail, std::span<const fabric::rank_info> ranks) {
  const auto on = fabric::ranks_of_nic(node, rail, ranks);
  if (on.empty()) return fmt::format("NIC of rail {} of node {}", rail, node);
  const auto& r = ranks[on.front()];
  return fmt::format("NIC {} (rail {}) of {} (rank{} {})", fabric::text(r.device), rail, fabric::text(r.host),
                     on.size() > 1 ? "s" : "", fmt::join(on, ","));
}

std::string uplink_subject(std::int32_t sw, std::int32_t same, std::span<const std::string> uplinks) {
  const auto name = [&](std::int32_t s) {
    return s >= 0 && static_cast<std::size_t>(s) < uplinks.size() ? uplinks[static_cast<std::size_t>(s)]
                                                                  : fmt::format("switch {}", s);
  };
  return same < 0 ? name(sw) : fmt::format("{} (or {}, the same pairs the other way)", name(sw), name(same));
}

std::string cause_line(const stats::outlier& o, const stats::outlier_report& rep,
                       std::span<const fabric::rank_info> ranks, std::span<const std::string> uplinks) {
  auto who = [&](std::int32_t rank) { return rank_name(static_cast<std::size_t>(rank), ranks); };
  const bool expect = o.basis == stats::outlier_basis::expect;
  const std::string prefix = expect ? "# below --expect:" : "# slow:";
  const std::string of = expect ? fmt::format("of {}", format_rate(rep.expect_bps)) : "of the median";
  const std::string count = fmt::format("{} slow pair(s){}", o.pairs, o.fine ? fmt::format(", {} fine", o.fine) : "");
  switch (o.kind) {
    case stats::outlier_kind::fabric:
      return fmt::format("{} the whole fabric: the median pair at {} {}; {} of {} pairs below", prefix, pct(o.send_pct),
                         of, o.pairs, o.pairs + o.fine);
    case stats::outlier_kind::node:
      return fmt::format("{} {}: {}; {}", prefix, node_name(o.node, ranks), sides(o, "its", of), count);
    case stats::outlier_kind::uplink: {
      // its sends go up the uplink (out of the switch), its receives come down it
      std::vector<std::string> parts;
      if (std::isfinite(o.send_pct)) parts.push_back(fmt::format("up at {}", pct(o.send_pct)));
      if (std::isfinite(o.recv_pct)) parts.push_back(fmt::format("down at {}", pct(o.recv_pct)));
      return fmt::format("{} uplink {}: {} {}; {}", prefix, uplink_subject(o.node, o.peer, uplinks),
                         fmt::join(parts, " and "), of, count);
    }
    case stats::outlier_kind::nic:
      return fmt::format("{} {}: {}; {}", prefix, nic_subject(o.node, o.peer, ranks), sides(o, "its", of), count);
    case stats::outlier_kind::rank:
      return fmt::format("{} {}: {}; {}", prefix, who(o.rank), sides(o, "its", of), count);
    case stats::outlier_kind::link:
      return fmt::format("{} link {} -> {} at {} {}", stats::is_suspect(o.kind, o.basis) ? "# suspect:" : prefix,
                         who(o.rank), who(o.peer), pct(o.send_pct), of);
    case stats::outlier_kind::failed: return fmt::format("# failed: {} -> {}", who(o.rank), who(o.peer));
  }
  return "";
}

std::vector<std::string> outlier_lines(const run_record& r, std::span<const fabric::rank_info> ranks,
                                       std::span<const std::string> uplinks) {
  std::vector<std::string> lines;
  if (!r.outliers) return lines;
  for (const auto& o : r.outliers->found) lines.push_back(cause_line(o, *r.outliers, ranks, uplinks));
  return lines;
}

std::string host_line(const run_record& r) {
  // a tenth of the interval: more than a daemon's tick or an interrupt storm's share, so a line
  // means the host's scheduling, not only the network, set the rates
  constexpr double noticeable = 0.1;
  std::vector<double> shares;
  std::vector<std::uint32_t> waited;
  for (std::uint32_t k = 0; k < r.host.size(); ++k) {
    const auto& h = r.host[k];
    if (!h.known || !(h.wall_s > 0)) continue;
    shares.push_back(h.wait_s / h.wall_s);
    if (shares.back() >= noticeable) waited.push_back(k);
  }
  if (waited.empty()) return {};
  const auto [lo, hi] = std::minmax_element(shares.begin(), shares.end());
  const std::string who =
      waited.size() == shares.size() ? std::string("every rank") : fmt::format("rank(s) {}", fmt::join(waited, ","));
  return fmt::format(
      "# host: {} waited for a CPU while runnable: {:.0f}-{:.0f} % of the measured time (median {:.0f} %)", who,
      100 * *lo, 100 * *hi, 100 * stats::median_of(shares));
}

std::vector<std::string> port_lines(const run_record& r, std::span<const fabric::rank_info> ranks) {
  std::vector<std::string> out;
  for (const auto& p : r.ports) {
    const std::string moved = fabric::moved_line(p.delta);
    if (moved.empty()) continue;
    const std::string host = p.rank >= 0 && static_cast<std::size_t>(p.rank) < ranks.size()
                                 ? std::string(ranks[static_cast<std::size_t>(p.rank)].host.data())
                                 : std::string("?");
    out.push_back(fmt::format("# port: {} port {} of {}: {} during the run", p.device, p.port, host, moved));
  }
  return out;
}

std::string judged_line(const stats::outlier_report& rep) {
  const bool named = std::ranges::any_of(rep.found, stats::names_a_cause);
  if (rep.measured == 0) return "# not judged: no pair measured a window";
  if (rep.too_few_msgs) {
    return fmt::format(
        "# not judged: the median pair counted {:.0f} message(s), too few to tell a slow pair from "
        "scheduling (20 needed: a longer -D or a smaller -s)",
        rep.median_msgs);
  }
  if (rep.too_short) {
    return fmt::format(
        "# not judged: the median pair took {:.2g} s, too short to tell a slow pair from waiting for a CPU "
        "(0.1 s needed: a larger -n, or -D)",
        rep.median_s);
  }
  if (!std::isfinite(rep.threshold_pct)) {
    return fmt::format(
        "# not judged: {} pair(s) are too few to measure the run's noise (more than the run's model has "
        "effects are needed: more ranks, or a mesh)",
        rep.measured);
  }
  // and each kind of part's own bound, its sides apart where they differ ("55 % for a rank",
  // "2.7 % for a rank's sends and 60 % for its receives"): a bound below --slow says a part at
  // --slow goes unnamed by this run
  std::string parts;
  for (const auto& b : rep.part_bound_pct) {
    const std::string word = b.kind == stats::outlier_kind::nic      ? "a NIC"
                             : b.kind == stats::outlier_kind::uplink ? "an uplink"
                                                                     : fmt::format("a {}", stats::to_string(b.kind));
    parts += pct(b.sends_pct) == pct(b.recvs_pct)
                 ? fmt::format(", {} for {}", pct(b.sends_pct), word)
                 : fmt::format(", {} for {}'s sends and {} for its receives", pct(b.sends_pct), word, pct(b.recvs_pct));
  }
  const std::string noise = fmt::format(
      "{} of {} pairs judged by the run's model (class, sender, receiver); noise ±{:.0f} %: slow below {} for a "
      "pair of typical count{}",
      rep.judged, rep.measured, std::expm1(rep.noise) * 100, pct(rep.threshold_pct), parts);
  const auto suspects = std::count_if(rep.found.begin(), rep.found.end(),
                                      [](const stats::outlier& o) { return stats::is_suspect(o.kind, o.basis); });
  if (named) return fmt::format("# judged: {}", noise);
  if (suspects == 0) return fmt::format("# healthy: no pair beyond the run's noise ({})", noise);
  return fmt::format("# healthy: no node or rank beyond the run's noise, {} suspect pair(s) for --retest ({})",
                     suspects, noise);
}

std::string false_alarm_line(const stats::false_alarms& fa) {
  if (fa.drawn == 0) return {};
  constexpr const char* what = "a healthy fabric as noisy as this run has a cause named in";
  if (fa.named == 0) {
    // none seen in n draws: 3 / n bounds the rate at 95 % (the rule of three)
    return fmt::format("# false alarms: {} none of {} runs drawn like it and judged alike (under {:.2g} % at 95 %)",
                       what, fa.drawn, 300.0 / fa.drawn);
  }
  return fmt::format("# false alarms: {} {:.2g} % of runs ({} of {} drawn like it and judged alike)", what, fa.pct(),
                     fa.named, fa.drawn);
}

}  // namespace rdmamesh::io
