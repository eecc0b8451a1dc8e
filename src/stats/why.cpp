// A cause's category from the host's and the NICs' evidence over the runs that named it.
#include "rdmamesh/stats/why.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rdmamesh/stats/verdict.hpp"

namespace rdmamesh::stats {
namespace {

// A counter sets a port apart when it counted at least this many over the cause's runs...
constexpr std::uint64_t min_count = 10;
// ... and this many times the median of the job's other ports (emulated rxe retransmits on
// every port alike; a real healthy link counts near zero)
constexpr double apart_factor = 4;

// a port: (node, device, port number)
using port_key = std::tuple<std::int32_t, std::string, std::int32_t>;

port_key port_of(const fabric::rank_info& r) {
  return {r.node, std::string(fabric::text(r.device)), r.port};
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The ranks whose host and ports stand for the cause: a node's, a NIC's, a rank, a pair's ends.
std::vector<std::size_t> members(const folded_cause& c, std::span<const fabric::rank_info> ranks) {
  const auto valid = [&](std::int32_t r) { return r >= 0 && static_cast<std::size_t>(r) < ranks.size(); };
  std::vector<std::size_t> out;
  switch (c.kind) {
    case outlier_kind::node: return fabric::ranks_of_node(c.node, ranks);
    case outlier_kind::nic: return fabric::ranks_of_nic(c.node, c.peer, ranks);
    case outlier_kind::link:
    case outlier_kind::failed:
      if (valid(c.peer)) out.push_back(static_cast<std::size_t>(c.peer));
      [[fallthrough]];
    case outlier_kind::rank:
      if (valid(c.rank)) out.insert(out.begin(), static_cast<std::size_t>(c.rank));
      break;
    case outlier_kind::uplink:
    case outlier_kind::fabric: break;
  }
  return out;
}

bool named_in(const folded_cause& c, std::uint32_t run) {
  return std::find(c.runs.begin(), c.runs.end(), run) != c.runs.end();
}

// Each counter of the kinds that say something went wrong: the most one of the cause's ports
// counted, and the median of the other ports, each summed over the cause's runs.
struct counted {
  std::map<std::string, std::uint64_t> mine, others;
};

counted count_ports(const folded_cause& c, const std::set<port_key>& mine, std::span<const run_evidence> runs,
                    std::span<const fabric::rank_info> ranks) {
  std::map<std::string, double> mine_sum, others_sum;
  for (const auto& run : runs) {
    if (!named_in(c, run.index)) continue;
    std::map<std::string, std::uint64_t> most;
    std::map<std::string, std::vector<double>> rest;
    std::size_t n_rest = 0;
    for (const auto& p : run.ports) {
      if (p.rank < 0 || static_cast<std::size_t>(p.rank) >= ranks.size()) continue;
      const bool is_mine = mine.contains({ranks[static_cast<std::size_t>(p.rank)].node, p.device, p.port});
      n_rest += !is_mine;
      for (const auto& [name, v] : p.delta) {
        if (fabric::kind_of(name) == fabric::counter_kind::other) continue;
        if (is_mine) {
          most[name] = std::max(most[name], v);
        } else {
          rest[name].push_back(static_cast<double>(v));
        }
      }
    }
    for (const auto& [name, v] : most) mine_sum[name] += static_cast<double>(v);
    for (auto& [name, vs] : rest) {
      vs.resize(n_rest, 0.0);  // a port without the counter counted none of it
      others_sum[name] += median(vs);
    }
  }
  counted out;
  for (const auto& [name, v] : mine_sum) out.mine[name] = static_cast<std::uint64_t>(v);
  for (const auto& [name, v] : others_sum) out.others[name] = static_cast<std::uint64_t>(std::llround(v));
  return out;
}

// The counters of `kind` that set the cause's ports apart, most first.
std::vector<std::pair<std::string, std::uint64_t>> apart(const counted& k, fabric::counter_kind kind) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (const auto& [name, v] : k.mine) {
    if (fabric::kind_of(name) != kind) continue;
    const auto o = k.others.find(name);
    const double base = o == k.others.end() ? 0.0 : static_cast<double>(o->second);
    if (v >= min_count && static_cast<double>(v) >= apart_factor * base) out.emplace_back(name, v);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

// Its ranks' share of a CPU while measured, and the median rank's, over its runs (-1: unknown).
std::pair<double, double> cpu_shares(const folded_cause& c, const std::vector<std::size_t>& who,
                                     std::span<const run_evidence> runs) {
  std::vector<double> mine, others;
  for (const auto& run : runs) {
    if (!named_in(c, run.index)) continue;
    std::vector<double> rest;
    for (std::size_t r = 0; r < run.host.size(); ++r) {
      const auto& h = run.host[r];
      if (!h.known || h.wall_s <= 0) continue;
      const double share = h.cpu_s / h.wall_s;
      (std::find(who.begin(), who.end(), r) != who.end() ? mine : rest).push_back(share);
    }
    if (!rest.empty()) others.push_back(median(rest));
  }
  if (mine.empty() || others.empty()) return {-1, -1};
  double sum = 0;
  for (double m : mine) sum += m;
  return {sum / static_cast<double>(mine.size()), median(others)};
}

// The cause's rate as a share of its cohort's: its slowest named side, mid-range over its runs.
double rate_share(const folded_cause& c) {
  double out = 1;
  if (!std::isnan(c.send_lo)) out = std::min(out, (c.send_lo + c.send_hi) / 200);
  if (!std::isnan(c.recv_lo)) out = std::min(out, (c.recv_lo + c.recv_hi) / 200);
  return out;
}

std::string counter_text(const std::vector<std::pair<std::string, std::uint64_t>>& found, const counted& k,
                         const std::set<port_key>& mine) {
  std::vector<std::string> parts, base;
  for (const auto& [name, v] : found) {
    parts.push_back(fmt::format("{} +{}", name, v));
    const auto o = k.others.find(name);
    base.push_back(fmt::format("{}", o == k.others.end() ? 0 : o->second));
  }
  std::vector<std::string> devices;
  for (const auto& p : mine) {
    if (std::find(devices.begin(), devices.end(), std::get<1>(p)) == devices.end()) devices.push_back(std::get<1>(p));
  }
  return fmt::format("{} on {} (the other ports' median: {})", fmt::join(parts, ", "), fmt::join(devices, ","),
                     fmt::join(base, ", "));
}

explanation explain_one(const folded_cause& c, std::span<const run_evidence> runs,
                        std::span<const fabric::rank_info> ranks) {
  explanation e;
  const auto who = members(c, ranks);
  std::set<port_key> mine;
  for (auto r : who) mine.insert(port_of(ranks[r]));
  const counted k = count_ports(c, mine, runs, ranks);
  for (const auto& [name, v] : k.mine) {
    if (v == 0) continue;
    e.counters.emplace_back(name, v);
    const auto o = k.others.find(name);
    e.others.emplace_back(name, o == k.others.end() ? 0 : o->second);
  }
  auto errors = apart(k, fabric::counter_kind::link);
  const bool physical = !errors.empty();
  const auto transport = apart(k, fabric::counter_kind::transport);
  errors.insert(errors.end(), transport.begin(), transport.end());
  const auto congestion = apart(k, fabric::counter_kind::congestion);
  std::tie(e.cpu_share, e.others_cpu_share) = cpu_shares(c, who, runs);
  const bool by_host = e.cpu_share >= 0 && host_explains(e.cpu_share, e.others_cpu_share, rate_share(c));
  // An RNR NAK sends its requester back to the refused message, and what it had in flight
  // behind it reaches the port again or out of sequence. Where the cause's own ports refused
  // messages for want of a posted receive (its host fell behind) and its CPU deficit explains
  // the shortfall, retransmits with no physical error beside them are the host's, not a cable's.
  std::vector<std::pair<std::string, std::uint64_t>> refused;
  for (const auto& r : apart(k, fabric::counter_kind::receiver)) {
    if (fabric::refused_for_want_of_receive(r.first)) refused.push_back(r);
  }
  const bool host_paced = by_host && !physical && !refused.empty() && c.kind != outlier_kind::failed;
  // the retest ran its pairs alone: fine, or held back by their host, none slowed by the network
  const bool held = !std::isnan(c.held_cpu) && !physical && c.kind != outlier_kind::failed;
  const std::string cpu = e.cpu_share < 0 ? std::string("no CPU figures")
                                          : fmt::format(
                                                "its ranks had {:.0f} % of a CPU while measured, the median "
                                                "rank {:.0f} %",
                                                100 * e.cpu_share, 100 * e.others_cpu_share);
  if (held) {
    e.cat = category::host;
    e.cpu_share = c.held_cpu;
    e.others_cpu_share = c.held_controls_cpu;
    e.text = fmt::format(
        "alone, its pairs read fine or were held back by their host ({:.0f} % of a CPU, the controls' "
        "{:.0f} %): the host, not the network",
        100 * c.held_cpu, 100 * c.held_controls_cpu);
    e.brief =
        fmt::format("{:.0f} % of a CPU alone, the controls {:.0f} %", 100 * c.held_cpu, 100 * c.held_controls_cpu);
  } else if (!errors.empty() && !host_paced) {
    e.cat = category::link;
    e.text = counter_text(errors, k, mine);
    e.brief = fmt::format("{} +{}", errors.front().first, errors.front().second);
  } else if (!congestion.empty()) {
    e.cat = category::congestion;
    e.text = counter_text(congestion, k, mine) + ", no error counter apart";
    e.brief = fmt::format("{} +{}", congestion.front().first, congestion.front().second);
  } else if (c.kind == outlier_kind::failed) {
    e.text = mine.empty() ? "" : "no error counter apart on its ports";
  } else if (by_host) {
    e.cat = category::host;
    e.text = refused.empty() ? cpu + ": the host, not the network"
                             : fmt::format(
                                   "{}; it refused messages for want of a posted receive ({}), and the "
                                   "resends behind them count as retransmits: the host, not the network",
                                   cpu, counter_text(refused, k, mine));
    e.brief = fmt::format("{:.0f} % of a CPU, the median rank {:.0f} %", 100 * e.cpu_share, 100 * e.others_cpu_share);
  } else if (c.kind == outlier_kind::uplink) {
    e.cat = category::fabric_switch;
    e.text = "the pairs through it, whatever their ends";
  } else {
    e.cat = category::rate;
    const bool read = std::any_of(runs.begin(), runs.end(),
                                  [&](const run_evidence& r) { return named_in(c, r.index) && !r.ports.empty(); });
    e.text = fmt::format("no error or congestion counter apart{}; {}", read ? "" : " (no counters read)", cpu);
  }
  return e;
}

}  // namespace

bool host_explains(double cpu_share, double others_cpu_share, double rate_share) {
  const double rate_deficit = 1 - rate_share;
  const double cpu_deficit = others_cpu_share > 0 ? 1 - cpu_share / others_cpu_share : 0;
  return rate_deficit > 0 && cpu_deficit >= 0.5 * rate_deficit;  // NaN figures explain nothing
}

const char* to_string(category c) {
  switch (c) {
    case category::unknown: return "unknown";
    case category::link: return "link";
    case category::congestion: return "congestion";
    case category::rate: return "rate";
    case category::host: return "host";
    case category::fabric_switch: return "switch";
  }
  return "?";
}

void explain(job_verdict& v, std::span<const run_evidence> runs, std::span<const fabric::rank_info> ranks) {
  for (auto& c : v.causes) c.why = explain_one(c, runs, ranks);
}

}  // namespace rdmamesh::stats
