// Test runs as the judge reads them: every pair of a mesh in round 0 over one second.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>

#include "rdmamesh/stats/matrix.hpp"

namespace rdmamesh::test {

// n ranks, every pair `msgs` messages of `size` bytes in 1 s, times factor(a, b) and a draw
// within +-`spread` (seeded; drawn pair by pair, sender-major, whatever the factor)
inline stats::run_matrices jittered_mesh(std::uint32_t n, double msgs, double spread, unsigned seed, std::uint64_t size,
                                         const std::function<double(std::uint32_t, std::uint32_t)>& factor) {
  auto m = stats::unmeasured_run(n);
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(1 - spread, 1 + spread);
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = 0; b < n; ++b) {
      if (a == b) continue;
      m.tx_msgs.at(a, b) = static_cast<std::uint64_t>(std::llround(msgs * factor(a, b) * d(g)));
      m.tx_s.at(a, b) = 1;
      m.tx_bw.at(a, b) = static_cast<double>(m.tx_msgs.at(a, b)) * static_cast<double>(size);
      m.round.at(a, b) = 0;
    }
  }
  return m;
}

}  // namespace rdmamesh::test
