#include "rdmamesh/stats/config.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace rdmamesh::stats {
namespace {

struct nic {
  std::int32_t rank;
  const fabric::rank_info* info;
};

// the job's NICs, each once, in rank order of their first rank
std::vector<nic> nics_of(std::span<const fabric::rank_info> ranks) {
  std::vector<nic> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const auto& i = ranks[r];
    if (i.device[0] == '\0') continue;
    auto key = std::pair(std::string(fabric::text(i.host)), std::string(fabric::text(i.device)));
    if (seen.insert(std::move(key)).second) out.push_back({static_cast<std::int32_t>(r), &i});
  }
  return out;
}

std::string rate_text(double bps) {
  return bps > 0 ? fmt::format("{:g} Gb/s", bps / 1e9) : "";
}

}  // namespace

std::vector<config_finding> compare_nics(std::span<const fabric::rank_info> ranks) {
  const auto all = nics_of(ranks);
  using reader = std::function<std::string(const fabric::rank_info&)>;
  const std::vector<std::pair<const char*, reader>> settings{
      {"link layer", [](const auto& i) { return std::string(i.ethernet ? "Ethernet" : "InfiniBand"); }},
      {"MTU", [](const auto& i) { return i.mtu > 0 ? fmt::format("{}", i.mtu) : std::string(); }},
      {"rate", [](const auto& i) { return rate_text(i.line_rate_bps); }},
      {"PCIe", [](const auto& i) { return std::string(fabric::text(i.pcie)); }},
      {"firmware", [](const auto& i) { return std::string(fabric::text(i.fw_ver)); }},
  };
  std::vector<config_finding> out;
  const auto finding = [](const nic& n, std::string what) {
    return config_finding{n.rank, n.info->node, std::string(fabric::text(n.info->host)),
                          std::string(fabric::text(n.info->device)), std::move(what)};
  };
  for (const auto& [name, read] : settings) {
    std::map<std::string, std::size_t> count;
    std::size_t known = 0;
    for (const auto& n : all) {
      const std::string v = read(*n.info);
      if (v.empty()) continue;
      ++count[v];
      ++known;
    }
    if (count.size() < 2) continue;
    const auto most = std::ranges::max_element(count, {}, [](const auto& e) { return e.second; });
    if (most->second < 2 || 2 * most->second <= known) continue;  // no majority: nothing is the odd one
    for (const auto& n : all) {
      const std::string v = read(*n.info);
      if (v.empty() || v == most->first) continue;
      out.push_back(
          finding(n, fmt::format("{} {}, where {} of {} NICs have {}", name, v, most->second, known, most->first)));
    }
  }
  for (const auto& n : all) {
    const std::string down(fabric::text(n.info->pcie_down));
    if (!down.empty()) out.push_back(finding(n, fmt::format("PCIe link {}", down)));
  }
  std::ranges::stable_sort(out, {}, &config_finding::rank);
  return out;
}

}  // namespace rdmamesh::stats
