// Deduplicated error printing: N ranks failing the same way print one line, not N.
#include "rdmamesh/app/agree.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace rdmamesh::app {

int agree(const mpi::world& w, int code, const std::string& message) {
  const auto all = w.allgather_strings(fmt::format("{}\t{}", code, message));
  int worst = exit_ok;
  std::vector<std::pair<std::string, std::vector<int>>> distinct;  // in order of first appearance
  for (std::size_t r = 0; r < all.size(); ++r) {
    const auto tab = all[r].find('\t');
    const int c = std::stoi(all[r].substr(0, tab));
    const std::string msg = all[r].substr(tab + 1);
    worst = std::max(worst, c);
    if (c == exit_ok || msg.empty()) continue;
    auto it = std::find_if(distinct.begin(), distinct.end(), [&](const auto& d) { return d.first == msg; });
    if (it == distinct.end()) {
      distinct.push_back({msg, {static_cast<int>(r)}});
    } else {
      it->second.push_back(static_cast<int>(r));
    }
  }
  if (w.rank() == 0) {
    for (const auto& [msg, ranks] : distinct) {
      const std::string who = static_cast<int>(ranks.size()) == w.size()
                                  ? std::string()
                                  : fmt::format(" [rank{} {}]", ranks.size() > 1 ? "s" : "", fmt::join(ranks, ","));
      fmt::print(stderr, "rdmamesh: error: {}{}\n", msg, who);
    }
    std::fflush(stderr);
  }
  return worst;
}

}  // namespace rdmamesh::app
