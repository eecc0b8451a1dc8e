// Console formatting with fmt. Bandwidths in Gb/s (10^9 bit/s), sizes in binary units.
#include "rdmamesh/io/report.hpp"

#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rdmamesh/util/units.hpp"
#include "rdmamesh/version.hpp"

namespace rdmamesh::io {
namespace {

std::string where(const fabric::rank_info& r) {
  std::string s = fmt::format("{} port {} ({})", fabric::text(r.device), r.port, r.ethernet ? "RoCE" : "IB");
  if (r.gid_index >= 0) s += fmt::format(" gid_index {} {}", r.gid_index, fabric::text(r.gid));
  return s + fmt::format(" mtu {}", r.mtu);
}

std::string gbps(double bytes_per_s) {
  return std::isfinite(bytes_per_s) ? fmt::format("{:.3f}", to_gbps(bytes_per_s)) : "-";
}

std::string summary_line(const char* what, const stats::square<double>& m) {
  const stats::summary s = stats::summarize(m);
  if (s.pairs == 0) return fmt::format("# {} [Gb/s]: no pair measured\n", what);
  return fmt::format("# {} [Gb/s]: min {}  median {}  max {}  over {} pairs; aggregate {}\n", what, gbps(s.min),
                     gbps(s.median), gbps(s.max), s.pairs, gbps(s.aggregate));
}

}  // namespace

std::string format_header(const options& o, std::span<const fabric::rank_info> ranks) {
  std::string out = fmt::format("# rdmamesh {}\n", tool_version);
  std::map<std::string, std::vector<std::size_t>> by_host;
  for (std::size_t i = 0; i < ranks.size(); ++i) by_host[std::string(fabric::text(ranks[i].host))].push_back(i);
  std::vector<std::string> hosts;
  for (const auto& [h, rs] : by_host) hosts.push_back(fmt::format("{} ({} ranks)", h, rs.size()));
  out += fmt::format("# ranks {}  hosts {}: {}\n", ranks.size(), by_host.size(), fmt::join(hosts, ", "));

  std::set<std::string> places;
  for (const auto& r : ranks) places.insert(where(r));
  if (places.size() == 1) {
    out += fmt::format("# device {}\n", *places.begin());
  } else {
    for (std::size_t i = 0; i < ranks.size(); ++i) out += fmt::format("# rank {} device {}\n", i, where(ranks[i]));
  }
  out +=
      fmt::format("# op {}  size {} ({} B)  tx_depth {}  ", to_string(o.op), format_size(o.size), o.size, o.tx_depth);
  if (o.duration_mode()) {
    out += fmt::format("duration {:g} s after {:g} s warm-up", o.duration_s, o.warmup_s);
  } else {
    out += fmt::format("iters {} per pair", o.iters);
  }
  out += fmt::format("  verify {}\n", o.verify ? "on" : "off");
  return out;
}

std::string format_matrix(const stats::square<double>& bw, const std::string& title) {
  if (bw.n > max_printed_matrix) {
    return fmt::format("# {}: {} x {} matrix not printed (more than {} ranks); see the HDF5 file\n", title, bw.n, bw.n,
                       max_printed_matrix);
  }
  std::string out = fmt::format("# {} [Gb/s], row = source rank, column = destination rank\n", title);
  out += fmt::format("{:>8}", "src\\dst");
  for (std::uint32_t c = 0; c < bw.n; ++c) out += fmt::format(" {:>9}", c);
  out += '\n';
  for (std::uint32_t r = 0; r < bw.n; ++r) {
    out += fmt::format("{:>8}", r);
    for (std::uint32_t c = 0; c < bw.n; ++c) out += fmt::format(" {:>9}", r == c ? "-" : gbps(bw.at(r, c)));
    out += '\n';
  }
  return out;
}

std::string format_results(const options& o, const stats::run_matrices& m, const std::vector<std::string>& events) {
  std::string out = summary_line("send bandwidth per pair", m.tx_bw);
  if (receiver_sees_messages(o.op)) {
    out += summary_line("receive bandwidth per pair", m.rx_bw);
  } else {
    out += fmt::format("# receive bandwidth: not measurable with --op {} (the receiver sees no completion)\n",
                       to_string(o.op));
  }
  std::uint64_t tx = 0, rx = 0, tx_total = 0, rx_total = 0, bad = 0;
  std::vector<std::string> failed;
  for (std::uint32_t s = 0; s < m.tx_msgs.n; ++s) {
    for (std::uint32_t d = 0; d < m.tx_msgs.n; ++d) {
      tx += m.tx_msgs.at(s, d);
      rx += m.rx_msgs.at(s, d);
      tx_total += m.tx_total.at(s, d);
      rx_total += m.rx_total.at(s, d);
      bad += m.verify_errors.at(s, d);
      if (m.flags.at(s, d) != 0) failed.push_back(fmt::format("{}->{}", s, d));
    }
  }
  out += fmt::format("# messages in the measured interval: {} sent, {}\n", tx,
                     receiver_sees_messages(o.op) ? fmt::format("{} received", rx) : std::string("receives not seen"));
  if (o.verify) {
    out += bad == 0 ? fmt::format("# verify: ok, {} messages checked end to end\n",
                                  receiver_sees_messages(o.op) ? rx_total : tx_total)
                    : fmt::format("# verify: FAILED, {} mismatching messages\n", bad);
  }
  if (!failed.empty()) out += fmt::format("# failed pairs: {}\n", fmt::join(failed, " "));
  for (const auto& e : events) out += fmt::format("# event: {}\n", e);
  return out;
}

}  // namespace rdmamesh::io
