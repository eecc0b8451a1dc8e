#include "rdmamesh/util/runs.hpp"

#include <fmt/format.h>

namespace rdmamesh {

std::string number_runs(std::span<const std::uint64_t> sorted, std::size_t width) {
  const auto num = [&](std::uint64_t v) { return fmt::format("{:0{}}", v, width); };
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j > i ? num(sorted[i]) + "-" + num(sorted[j]) : num(sorted[i]);
    i = j + 1;
  }
  return out;
}

}  // namespace rdmamesh
