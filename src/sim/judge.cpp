// Per-pair figures from another tool, judged by rank 0's finder (see the header).
#include "rdmamesh/sim/judge.hpp"

#include <cmath>
#include <istream>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "rdmamesh/stats/outliers.hpp"

namespace rdmamesh::sim {
namespace {

template <class T>
std::vector<T> array_of(const nlohmann::json& j, const char* key, std::size_t count) {
  if (!j.contains(key)) throw std::runtime_error(fmt::format("judge: no '{}' in the input", key));
  auto v = j.at(key).get<std::vector<T>>();
  if (v.size() != count)
    throw std::runtime_error(fmt::format("judge: '{}' holds {} values, wanted {}", key, v.size(), count));
  return v;
}

nlohmann::json pct(double v) {
  return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
}

}  // namespace

void judge_json(std::istream& in, std::ostream& out) {
  nlohmann::json doc;
  try {
    in >> doc;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("judge: the input is not JSON: {}", e.what()));
  }
  const auto n = doc.at("ranks").get<std::uint32_t>();
  if (n == 0) throw std::runtime_error("judge: 'ranks' is 0");
  const auto node_of = array_of<std::int32_t>(doc, "node", n);
  const auto rail_of = doc.contains("rail") ? array_of<std::int32_t>(doc, "rail", n) : std::vector<std::int32_t>(n, -1);
  std::vector<stats::switch_group> uplinks;
  for (const auto& u : doc.value("uplinks", nlohmann::json::array())) {
    stats::switch_group g{u.at(0).get<std::int32_t>(), std::vector<std::uint8_t>(n, 0)};
    for (auto r : u.at(1).get<std::vector<std::uint32_t>>()) {
      if (r >= n) throw std::runtime_error(fmt::format("judge: uplink {} holds rank {} of {}", g.sw, r, n));
      g.members[r] = 1;
    }
    uplinks.push_back(std::move(g));
  }
  const auto nics = stats::nic_groups(node_of, rail_of);
  // exact counts, no floor on a pair's time: the figures are another tool's, not a window's count
  const stats::finder_settings s{.slow_pct = doc.value("slow_pct", 90.0), .counted = false};
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : doc.at("runs")) {
    stats::run_matrices m;
    m.tx_bw = stats::square<double>(n, 0.0);
    m.tx_bw.v = array_of<double>(r, "value", std::size_t{n} * n);
    m.round = stats::square<std::int32_t>(n, -1);
    m.round.v = array_of<std::int32_t>(r, "round", std::size_t{n} * n);
    m.tx_s = stats::square<double>(n, 1.0);
    m.tx_msgs = stats::square<std::uint64_t>(n, 1);
    m.flags = stats::square<std::uint8_t>(n, 0);
    for (std::size_t i = 0; i < m.tx_bw.v.size(); ++i) {
      if (!(m.tx_bw.v[i] > 0)) m.round.v[i] = -1;  // nothing to take a log of: not judged
    }
    const auto report = stats::find_outliers(m, 1, node_of, s, uplinks, nics);
    nlohmann::json causes = nlohmann::json::array();
    for (const auto& o : report.found) {
      causes.push_back({{"kind", stats::to_string(o.kind)},
                        {"basis", stats::to_string(o.basis)},
                        {"node", o.node},
                        {"rank", o.rank},
                        {"peer", o.peer},
                        {"send_pct", pct(o.send_pct)},
                        {"recv_pct", pct(o.recv_pct)},
                        {"pairs", o.pairs},
                        {"fine", o.fine}});
    }
    runs.push_back({{"label", r.value("label", "")}, {"noise", pct(report.noise)}, {"causes", std::move(causes)}});
  }
  out << nlohmann::json{{"runs", std::move(runs)}}.dump() << '\n';
}

}  // namespace rdmamesh::sim
