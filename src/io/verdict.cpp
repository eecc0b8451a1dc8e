// The verdict's console lines, drain list and JSON (nlohmann-json).
#include "rdmamesh/io/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <string_view>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "rdmamesh/io/h5.hpp"
#include "rdmamesh/io/report.hpp"
#include "rdmamesh/stats/why.hpp"
#include "rdmamesh/util/units.hpp"

namespace rdmamesh::io {
namespace {

using json = nlohmann::json;

// 31 %, 31–35 %; two figures below 10 % (a floor far above a fabric: 0.06 %)
std::string one_pct(double v) {
  return v >= 10 || v == 0 ? fmt::format("{:.0f}", v) : fmt::format("{:.2g}", v);
}
std::string span_pct(double lo, double hi) {
  const std::string a = one_pct(lo), b = one_pct(hi);
  return a == b ? fmt::format("{} %", a) : fmt::format("{}–{} %", a, b);
}

std::string host_of_node(std::int32_t node, std::span<const fabric::rank_info> ranks) {
  const auto on = fabric::ranks_of_node(node, ranks);
  return on.empty() ? fmt::format("node{}", node) : std::string(fabric::text(ranks[on.front()].host));
}

std::string rank_name(std::int32_t r, std::span<const fabric::rank_info> ranks) {
  if (r < 0 || static_cast<std::size_t>(r) >= ranks.size()) return fmt::format("rank {}", r);
  const auto& x = ranks[static_cast<std::size_t>(r)];
  return fmt::format("rank {} ({}, {})", r, fabric::text(x.host), fabric::text(x.device));
}

std::string subject(const stats::folded_cause& c, std::span<const fabric::rank_info> ranks,
                    std::span<const std::string> uplinks) {
  switch (c.kind) {
    case stats::outlier_kind::uplink: return fmt::format("uplink {}", uplink_subject(c.node, c.peer, uplinks));
    case stats::outlier_kind::fabric: return "the whole fabric";
    case stats::outlier_kind::node:
      return fmt::format("node {} (ranks {})", host_of_node(c.node, ranks),
                         fmt::join(fabric::ranks_of_node(c.node, ranks), ","));
    case stats::outlier_kind::rank: return rank_name(c.rank, ranks);
    case stats::outlier_kind::nic: return nic_subject(c.node, c.peer, ranks);
    case stats::outlier_kind::link:
      return fmt::format("link {} -> {}", rank_name(c.rank, ranks), rank_name(c.peer, ranks));
    case stats::outlier_kind::failed:
      return fmt::format("pair {} -> {}", rank_name(c.rank, ranks), rank_name(c.peer, ranks));
  }
  return "?";
}

// "its sends at 31–35 % of the median", the sides it was named for
std::string figures(const stats::folded_cause& c, double expect_bps) {
  const std::string of = c.basis == stats::outlier_basis::expect   ? fmt::format("of {}", format_rate(expect_bps))
                         : c.basis == stats::outlier_basis::retest ? std::string("of the control pairs")
                                                                   : std::string("of the median");
  if (c.kind == stats::outlier_kind::failed) return "failed";
  if (c.kind == stats::outlier_kind::fabric)
    return fmt::format("the median pair at {} {}", span_pct(c.send_lo, c.send_hi), of);
  if (c.kind == stats::outlier_kind::link) return fmt::format("at {} {}", span_pct(c.send_lo, c.send_hi), of);
  // an uplink's sends go up it (out of its switch), its receives come down it
  const bool up = c.kind == stats::outlier_kind::uplink;
  std::vector<std::string> parts;
  if (!std::isnan(c.send_lo))
    parts.push_back(fmt::format("{} at {}", up ? "up" : "its sends", span_pct(c.send_lo, c.send_hi)));
  if (!std::isnan(c.recv_lo))
    parts.push_back(fmt::format("{} at {}", up ? "down" : "its receives", span_pct(c.recv_lo, c.recv_hi)));
  return fmt::format("{} {}", fmt::join(parts, " and "), of);
}

std::string in_runs(const stats::folded_cause& c, const stats::job_verdict& v) {
  std::vector<std::string> labels(c.labels.begin(), c.labels.begin() + std::min<std::ptrdiff_t>(c.labels.size(), 4));
  if (c.labels.size() > 4) labels.push_back(fmt::format("{} more", c.labels.size() - 4));
  if (c.by_pool) {  // each run's noise hid it; their fits pooled did not
    return fmt::format("over {} runs pooled ({}), named by none alone", c.runs.size(), fmt::join(labels, ", "));
  }
  if (c.basis == stats::outlier_basis::retest) {  // the runs' noise hid it; their retests did not
    return fmt::format("alone in the retest of {} of {} runs ({})", c.runs.size(), v.runs_judged,
                       fmt::join(labels, ", "));
  }
  return fmt::format("in {} of {} runs ({})", c.runs.size(),
                     c.kind == stats::outlier_kind::failed ? v.runs : v.runs_judged, fmt::join(labels, ", "));
}

// Every cause in the JSON carries the same keys, whatever found it (a run or the NICs' settings)
json cause_json(std::string_view kind, std::string_view basis, bool counted, std::string text) {
  return {{"kind", kind},
          {"basis", basis},
          {"counted", counted},
          {"cleared", false},
          {"narrowed", false},
          {"within", false},
          {"undecided", false},
          {"explained", false},
          {"alone", nullptr},
          {"pooled", nullptr},
          {"text", std::move(text)},
          {"runs", json::array()},
          {"run_labels", json::array()},
          {"pairs", 0},
          {"fine", 0},
          {"ranks", json::array()},
          {"nodes", json::array()},
          {"devices", json::array()},
          {"send_pct", nullptr},
          {"recv_pct", nullptr},
          {"category", "unknown"},
          {"evidence", nullptr}};
}

// What the category rests on: the counters of the cause's ports beside the other ports' median,
// and its ranks' share of a CPU beside the median rank's (null: not known)
json evidence_json(const stats::explanation& e) {
  json mine = json::object(), others = json::object();
  for (const auto& [name, v] : e.counters) mine[name] = v;
  for (const auto& [name, v] : e.others) others[name] = v;
  auto share = [](double x) { return x < 0 ? json(nullptr) : json(x); };
  return {{"counters", mine},
          {"others_median", others},
          {"cpu_share", share(e.cpu_share)},
          {"others_cpu_share", share(e.others_cpu_share)},
          {"text", e.text}};
}

}  // namespace

std::string cause_sentence(const stats::folded_cause& c, const stats::job_verdict& v,
                           std::span<const fabric::rank_info> ranks, double expect_bps,
                           std::span<const std::string> uplinks) {
  std::string s = fmt::format("{}: {} {}", subject(c, ranks, uplinks), figures(c, expect_bps), in_runs(c, v));
  if (c.basis == stats::outlier_basis::retest) {
    s += fmt::format("; {} of its {} pair(s) alone below --slow", c.pairs, c.pairs + c.fine);
  } else if (!c.by_pool && (c.kind == stats::outlier_kind::node || c.kind == stats::outlier_kind::rank ||
                            c.kind == stats::outlier_kind::uplink || c.kind == stats::outlier_kind::nic)) {
    s += fmt::format("; {} slow pair(s), {} fine", c.pairs, c.fine);
  }
  if (c.basis == stats::outlier_basis::expect) s += fmt::format(" (below --expect {})", format_rate(expect_bps));
  if (c.kind == stats::outlier_kind::failed) s += "; see the runs' events";
  return s;
}

namespace {

// Why a cause listed is not acted on ("" where it is)
std::string seen_as(const stats::folded_cause& c) {
  if (c.counted) return "";
  if (c.cleared) return "seen, cleared by the retest (fine alone): ";
  if (c.narrowed && c.kind == stats::outlier_kind::uplink)
    return "seen, narrowed by the retest to the node(s) under it slow alone (without their pairs it is fine alone): ";
  if (c.narrowed) return "seen, narrowed by the retest to its NIC (the others fine alone): ";
  if (c.within) return "seen, part of its node's counted cause: ";
  if (c.explained)
    return "seen, not counted by the retest (alone it is slow only toward a counted part of the other side: that "
           "part's evidence): ";
  if (c.undecided && !std::isnan(c.held_cpu)) {
    return fmt::format(
        "seen, undecided by the retest (alone its pairs were held back by their host, {:.0f} % of a CPU against the "
        "controls' {:.0f} %: a test of its CPU, not of its network): ",
        100 * c.held_cpu, 100 * c.held_controls_cpu);
  }
  if (c.undecided && std::isnan(c.alone_pct))
    return "seen, undecided by the retest (none of its pairs measured alone): ";
  if (c.undecided) return "seen, undecided by the retest (alone, neither shown below --slow nor cleared above it): ";
  if (c.pool_runs > 0) return fmt::format("seen, not counted on its {} runs pooled: ", c.pool_runs);
  return "seen, not counted: ";
}

// ", each at a false-alarm level of 0.1 %": the chance a run of a healthy fabric names a part
// ("" where not set)
std::string at_level(const verdict_context& ctx) {
  return ctx.false_alarm_pct > 0 ? fmt::format(", each at a false-alarm level of {:g} %", ctx.false_alarm_pct) : "";
}

}  // namespace

std::vector<std::string> verdict_lines(const stats::job_verdict& v, std::span<const fabric::rank_info> ranks,
                                       const verdict_context& ctx) {
  std::vector<std::string> out;
  std::size_t counted = v.config.size();
  for (const auto& c : v.causes) counted += c.counted;
  if (v.status == stats::health::unjudged) {
    out.push_back(fmt::format(
        "# verdict: unjudged: none of the {} bandwidth run(s) could be judged (too few pairs, messages or seconds: "
        "each run's '# not judged' line says which); more ranks, a longer -D or larger messages give a verdict",
        v.runs));
  } else if (v.status == stats::health::healthy && v.runs == 0) {
    out.push_back("# verdict: healthy (no bandwidth run; the NICs' settings agree)");
  } else if (v.status == stats::health::healthy) {
    out.push_back(fmt::format("# verdict: healthy ({} of {} bandwidth run(s) judged{}; no cause beyond their noise)",
                              v.runs_judged, v.runs, at_level(ctx)));
  } else if (v.runs == 0) {  // --preflight: the NICs' settings were the whole check
    out.push_back(fmt::format("# verdict: {} ({} cause(s) in the NICs' settings; no bandwidth run)",
                              to_string(v.status), counted));
  } else {
    out.push_back(fmt::format("# verdict: {} ({} cause(s) over {} judged bandwidth run(s){}{})", to_string(v.status),
                              counted, v.runs_judged, v.config.empty() ? "" : " and the NICs' settings",
                              at_level(ctx)));
  }
  for (const auto& f : v.config) out.push_back(fmt::format("#   {}", config_sentence(f)));
  if (v.parts_retested > 0) {
    out.push_back(fmt::format(
        "#   retest: {} part(s) measured alone, each counted only below --slow beyond chance at a false-alarm level "
        "of {:g} % (the chance of counting any healthy rank, NIC, node or uplink in this job{})",
        v.parts_retested, 100 * v.false_alarm,
        v.false_alarm_runs > 1 ? fmt::format("; {:g} % in each of its {} runs that go to the retest",
                                             100 * v.false_alarm / v.false_alarm_runs, v.false_alarm_runs)
                               : ""));
  }
  for (const auto& c : v.causes) {
    out.push_back(fmt::format("#   {}{}", seen_as(c), cause_sentence(c, v, ranks, ctx.expect_bps, ctx.uplinks)));
    if (c.pool_runs > 0) {
      out.push_back(fmt::format("#     pooled: its {} runs as one fit: {:.0f} % of the median, p {:.2g}", c.pool_runs,
                                c.pool_pct, c.pool_p));
    }
    if (!std::isnan(c.alone_pct)) {
      out.push_back(fmt::format("#     alone: {:.0f} % of the controls ({:.0f}–{:.0f} %), {} pair(s), p {:.2g}",
                                c.alone_pct, c.alone_lo, c.alone_hi, c.alone_pairs, c.alone_p));
    }
    // what it is, from the hosts' and the ports' evidence, under each cause acted on
    if (c.counted && c.why.cat != stats::category::unknown) {
      out.push_back(fmt::format("#     why: {}: {}", to_string(c.why.cat), c.why.text));
    }
  }
  return out;
}

std::string config_sentence(const stats::config_finding& f) {
  return fmt::format("config: NIC {} of {}: {}", f.device, f.host, f.what);
}

std::vector<drain> drains(const stats::job_verdict& v, std::span<const fabric::rank_info> ranks, double expect_bps) {
  std::vector<drain> out;
  for (const auto& f : v.config) {  // a node is drained once, for the first thing found on it
    if (std::ranges::any_of(out, [&](const drain& d) { return d.node == f.host; })) continue;
    out.push_back({f.host, fmt::format("rdmamesh: {}", config_sentence(f))});
  }
  for (const auto& c : v.causes) {
    // a NIC's node is drained: Slurm drains nodes, and the reason names the NIC to replace
    if (!c.counted || (c.kind != stats::outlier_kind::node && c.kind != stats::outlier_kind::rank &&
                       c.kind != stats::outlier_kind::nic))
      continue;
    const std::string node = host_of_node(c.node, ranks);
    if (std::any_of(out.begin(), out.end(), [&](const drain& d) { return d.node == node; })) continue;
    std::string who = c.kind == stats::outlier_kind::rank ? fmt::format("rank {}: ", c.rank) : "";
    if (c.kind == stats::outlier_kind::nic) {
      const auto on = fabric::ranks_of_nic(c.node, c.peer, ranks);
      who = fmt::format("NIC {} (rail {}): ", on.empty() ? "?" : std::string(fabric::text(ranks[on.front()].device)),
                        c.peer);
    }
    // the category first, a fixed word an operator can filter `sinfo -R` on
    const std::string why = c.why.cat == stats::category::unknown ? "" : fmt::format("{}: ", to_string(c.why.cat));
    const std::string brief = c.why.brief.empty() ? "" : fmt::format(" ({})", c.why.brief);
    out.push_back({node, fmt::format("rdmamesh: {}{}{} {}{}", why, who, figures(c, expect_bps), in_runs(c, v), brief)});
  }
  return out;
}

namespace {

// One counted or seen cause of a run, with its members, figures and retest
json run_cause_json(const stats::folded_cause& c, const stats::job_verdict& v, std::span<const fabric::rank_info> ranks,
                    const verdict_context& ctx) {
  json j = cause_json(stats::to_string(c.kind), stats::to_string(c.basis), c.counted,
                      cause_sentence(c, v, ranks, ctx.expect_bps, ctx.uplinks));
  j["cleared"] = c.cleared;
  j["narrowed"] = c.narrowed;
  j["within"] = c.within;
  j["undecided"] = c.undecided;
  j["explained"] = c.explained;
  j["runs"] = c.runs;
  j["run_labels"] = c.labels;
  j["pairs"] = c.pairs;
  j["fine"] = c.fine;
  j["category"] = to_string(c.why.cat);
  j["evidence"] = evidence_json(c.why);
  std::vector<std::size_t> members;
  if (c.kind == stats::outlier_kind::node) members = fabric::ranks_of_node(c.node, ranks);
  if (c.kind == stats::outlier_kind::nic) members = fabric::ranks_of_nic(c.node, c.peer, ranks);
  // an uplink's peer is a switch, a NIC's its rail
  const bool pair = c.kind != stats::outlier_kind::uplink && c.kind != stats::outlier_kind::nic;
  if (c.rank >= 0) members.push_back(static_cast<std::size_t>(c.rank));
  if (pair && c.peer >= 0) members.push_back(static_cast<std::size_t>(c.peer));
  json nodes = json::array(), devices = json::array();
  for (auto r : members) {
    if (r >= ranks.size()) continue;
    const std::string host(fabric::text(ranks[r].host)), dev(fabric::text(ranks[r].device));
    if (std::find(nodes.begin(), nodes.end(), host) == nodes.end()) nodes.push_back(host);
    if (std::find(devices.begin(), devices.end(), dev) == devices.end()) devices.push_back(dev);
  }
  if (c.kind == stats::outlier_kind::uplink) j["uplink"] = uplink_subject(c.node, c.peer, ctx.uplinks);
  if (c.kind == stats::outlier_kind::nic) j["rail"] = c.peer;
  j["ranks"] = members;
  j["nodes"] = nodes;
  j["devices"] = devices;
  auto pct = [](double lo, double hi) { return std::isnan(lo) ? json(nullptr) : json::array({lo, hi}); };
  j["send_pct"] = pct(c.send_lo, c.send_hi);
  j["recv_pct"] = pct(c.recv_lo, c.recv_hi);
  // the model's retest of it: its pairs alone as % of the controls, the 95 % interval, the
  // chance of reading that slow were it at --slow % (null: not retested)
  j["alone"] = std::isnan(c.alone_pct) ? json(nullptr)
                                       : json{{"pct", c.alone_pct},
                                              {"interval_pct", json::array({c.alone_lo, c.alone_hi})},
                                              {"p_slow", c.alone_p},
                                              {"pairs", c.alone_pairs}};
  // the job's fitted runs pooled as one fit (null: fewer than two): its effect there, the chance
  // of one that slow in a healthy part before the correction, and whether no run alone named it
  j["pooled"] = c.pool_runs == 0
                    ? json(nullptr)
                    : json{{"runs", c.pool_runs}, {"pct", c.pool_pct}, {"p", c.pool_p}, {"only", c.by_pool}};
  return j;
}

}  // namespace

std::string verdict_json(const stats::job_verdict& v, std::span<const fabric::rank_info> ranks,
                         const verdict_context& ctx) {
  // the NICs' settings first: counted causes come first, and these need no run
  json causes = json::array();
  for (const auto& f : v.config) {
    json j = cause_json("config", "config", true, config_sentence(f));
    j["category"] = "config";
    j["ranks"] = json::array({f.rank});
    j["nodes"] = json::array({f.host});
    j["devices"] = json::array({f.device});
    causes.push_back(std::move(j));
  }
  for (const auto& c : v.causes) causes.push_back(run_cause_json(c, v, ranks, ctx));
  json drain_list = json::array();
  for (const auto& d : drains(v, ranks, ctx.expect_bps)) drain_list.push_back({{"node", d.node}, {"reason", d.reason}});
  // every node the job tested, named or not: a node's latest word is the newest verdict that lists it
  json tested = json::array();
  for (const auto& r : ranks) {
    const std::string host(fabric::text(r.host));
    if (std::find(tested.begin(), tested.end(), host) == tested.end()) tested.push_back(host);
  }
  json doc{{"schema", "rdmamesh-verdict/2"},
           {"written", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)))},
           {"nodes_tested", tested},
           {"status", stats::to_string(v.status)},
           {"complete", ctx.complete},
           {"ended", ctx.ended},
           {"results", ctx.results},
           {"command_line", ctx.command_line},
           {"job_id", ctx.job_id},
           {"runs", {{"bandwidth", v.runs}, {"judged", v.runs_judged}}},
           {"false_alarm_pct", ctx.false_alarm_pct > 0 ? json(ctx.false_alarm_pct) : json(nullptr)},
           {"causes", causes},
           {"drain", drain_list}};
  doc["false_alarms"] =
      v.stated.drawn > 0
          ? json{{"run", v.stated_run}, {"drawn", v.stated.drawn}, {"named", v.stated.named}, {"pct", v.stated.pct()}}
          : json(nullptr);
  doc["retest"] = v.parts_retested > 0 ? json{{"parts_retested", v.parts_retested},
                                              {"false_alarm_pct", 100 * v.false_alarm},
                                              {"runs_sharing", v.false_alarm_runs}}
                                       : json(nullptr);
  doc["expect"] = ctx.expect_bps > 0 ? json{{"bytes_per_s", ctx.expect_bps}, {"how", ctx.expect_how}} : json(nullptr);
  if (const char* job = std::getenv("SLURM_JOB_ID")) doc["slurm_job_id"] = job;
  return doc.dump(2) + "\n";
}

void write_text_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw h5::io_error(fmt::format("writing {} failed", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw h5::io_error(fmt::format("rename({}, {}) failed", tmp, path));
  }
}

}  // namespace rdmamesh::io
