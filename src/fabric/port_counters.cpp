// Reading a port's sysfs counters and sorting them into what they say about the port.
#include "rdmamesh/fabric/port_counters.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <span>
#include <sstream>

#include <fmt/format.h>

namespace rdmamesh::fabric {
namespace {

// Names across mlx5 (counters/ and hw_counters/), the IB standard set and rxe.
constexpr std::array<std::string_view, 13> link_names = {"symbol_error",
                                                         "link_error_recovery",
                                                         "link_downed",
                                                         "port_rcv_errors",
                                                         "port_rcv_remote_physical_errors",
                                                         "port_rcv_switch_relay_errors",
                                                         "port_xmit_discards",
                                                         "port_xmit_constraint_errors",
                                                         "port_rcv_constraint_errors",
                                                         "local_link_integrity_errors",
                                                         "excessive_buffer_overrun_errors",
                                                         "VL15_dropped",
                                                         "rx_icrc_encapsulated"};
constexpr std::array<std::string_view, 13> transport_names = {
    "out_of_sequence",           "packet_seq_err", "local_ack_timeout_err", "implied_nak_seq_err",
    "duplicate_request",         "req_cqe_error",  "resp_cqe_error",        "req_remote_access_errors",
    "resp_remote_access_errors", "rcvd_seq_err",   "completer_retry_err",   "retry_exceeded_err",
    "out_of_seq_request"};
// receiver not ready: a message arrived before its receive was posted (the host's pace, not the wire's)
constexpr std::array<std::string_view, 5> receiver_names = {"rnr_nak_retry_err", "out_of_buffer", "send_rnr_err",
                                                            "rcvd_rnr_err", "retry_rnr_exceeded_err"};
constexpr std::array<std::string_view, 6> congestion_names = {
    "np_cnp_sent",    "rp_cnp_handled", "np_ecn_marked_roce_packets",
    "rp_cnp_ignored", "port_xmit_wait", "ecn_marked_roce_packets"};

bool listed(std::string_view name, std::span<const std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

counter_set read_port_counters(const std::filesystem::path& device_dir, int port) {
  std::map<std::string, std::uint64_t> found;
  const auto port_dir = device_dir / "ports" / std::to_string(port);
  for (const char* sub : {"counters", "hw_counters"}) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(port_dir / sub, ec)) {
      const std::string name = e.path().filename().string();
      // hw_counters/lifespan is how long the driver caches them, a setting, not a count
      if (name == "lifespan" || found.contains(name)) continue;
      std::ifstream in(e.path());
      std::uint64_t v = 0;
      if (in >> v) found.emplace(name, v);  // some need privileges or a mode: skipped, not fatal
    }
  }
  return {found.begin(), found.end()};
}

std::chrono::milliseconds counters_lifespan(const std::filesystem::path& device_dir, int port) {
  std::ifstream in(device_dir / "ports" / std::to_string(port) / "hw_counters" / "lifespan");
  long ms = 0;
  return std::chrono::milliseconds(in >> ms && ms > 0 ? ms : 0);
}

counter_set counter_delta(const counter_set& before, const counter_set& after) {
  counter_set out;
  auto b = before.begin();
  for (const auto& [name, v] : after) {
    while (b != before.end() && b->first < name) ++b;
    if (b == before.end() || b->first != name) continue;
    out.emplace_back(name, v >= b->second ? v - b->second : 0);
  }
  return out;
}

bool refused_for_want_of_receive(std::string_view name) {
  // rxe counts the RNR NAKs it sends; mlx5 the messages that found no receive posted
  return name == "send_rnr_err" || name == "out_of_buffer";
}

counter_kind kind_of(std::string_view name) {
  if (listed(name, link_names)) return counter_kind::link;
  if (listed(name, transport_names)) return counter_kind::transport;
  if (listed(name, congestion_names)) return counter_kind::congestion;
  if (listed(name, receiver_names)) return counter_kind::receiver;
  return counter_kind::other;
}

const char* to_string(counter_kind k) {
  switch (k) {
    case counter_kind::link: return "link";
    case counter_kind::transport: return "transport";
    case counter_kind::congestion: return "congestion";
    case counter_kind::receiver: return "receiver";
    case counter_kind::other: return "other";
  }
  return "?";
}

std::string moved_line(const counter_set& delta) {
  counter_set moved;
  for (const auto& [name, v] : delta) {
    if (v > 0 && kind_of(name) != counter_kind::other) moved.emplace_back(name, v);
  }
  std::stable_sort(moved.begin(), moved.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [name, v] : moved) out += fmt::format("{}{} +{}", out.empty() ? "" : ", ", name, v);
  return out;
}

std::string port_reading::to_text() const {
  std::string out = fmt::format("{} {}\n", device, port);
  for (const auto& [name, v] : delta) out += fmt::format("{} {}\n", name, v);
  return out;
}

std::optional<port_reading> port_reading::from_text(std::int32_t rank, const std::string& text) {
  std::istringstream in(text);
  port_reading r;
  r.rank = rank;
  if (!(in >> r.device >> r.port)) return std::nullopt;
  std::string name;
  std::uint64_t v = 0;
  while (in >> name >> v) r.delta.emplace_back(name, v);
  return r;
}

}  // namespace rdmamesh::fabric
