// The text records of tools/export-runs: a header line, then one line per matrix, row-major.
#include "rdmamesh/sim/replay.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace rdmamesh::sim {
namespace {

template <class T>
std::vector<T> values(std::istringstream& line, const std::string& want, std::size_t count, std::size_t at) {
  std::string key;
  line >> key;
  if (key != want) throw std::runtime_error(fmt::format("runs line {}: wanted '{}', read '{}'", at, want, key));
  std::vector<T> out;
  // strtod, not >>: a stream does not read "nan", which marks the diagonal and pairs not measured
  for (std::string token; line >> token;) {
    const double x = std::strtod(token.c_str(), nullptr);
    out.push_back(std::is_floating_point_v<T> || std::isfinite(x) ? static_cast<T>(x) : T{});
  }
  if (out.size() != count)
    throw std::runtime_error(fmt::format("runs line {}: '{}' holds {} values, wanted {}", at, want, out.size(), count));
  return out;
}

}  // namespace

std::vector<recorded_run> read_runs(std::istream& in) {
  std::vector<recorded_run> out;
  std::string text;
  std::size_t at = 0;
  const auto next = [&] {
    if (!std::getline(in, text)) throw std::runtime_error(fmt::format("runs line {}: the record ends early", at + 1));
    ++at;
    return std::istringstream(text);
  };
  while (std::getline(in, text)) {
    ++at;
    if (text.empty()) continue;
    std::istringstream head(text);
    recorded_run r;
    std::string key;
    std::uint32_t n = 0;
    int counted = 1;
    head >> key >> r.label >> n >> r.size >> counted >> r.cq_mod >> r.slow_pct >> r.recorded;
    if (key != "run" || !head || n == 0) throw std::runtime_error(fmt::format("runs line {}: not a run header", at));
    r.counted = counted != 0;
    // each line in its order: its key, then its values (n per rank, n*n per matrix, row-major)
    const auto line = [&]<class T>(const char* name, std::size_t count, T) {
      auto l = next();
      return values<T>(l, name, count, at);
    };
    const auto matrix = [&]<class T>(stats::square<T>& m, const char* name) {
      m = stats::square<T>(n, T{});
      m.v = line(name, std::size_t{n} * n, T{});
    };
    r.node_of = line("node", n, std::int32_t{});
    r.rail_of = line("rail", n, std::int32_t{});
    matrix(r.m.tx_bw, "tx_bw");
    matrix(r.m.tx_msgs, "tx_msgs");
    matrix(r.m.tx_s, "tx_s");
    matrix(r.m.flags, "flags");
    matrix(r.m.round, "round");
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace rdmamesh::sim
