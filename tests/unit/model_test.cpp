// The effects model (issue 42's first step): the fit recovers each rank's send and receive
// effects from the pairs, whatever the pattern; the test names a node far off and nothing on a
// quiet healthy run; the t tail it refers to is the textbook one.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "rdmamesh/stats/model.hpp"

using namespace rdmamesh;

namespace {

// a mesh whose log rates are exactly 20 + send[a] + recv[b] (+ noise of sd `sd`)
stats::run_matrices additive_mesh(const std::vector<double>& send, const std::vector<double>& recv, double sd,
                                  std::uint64_t seed) {
  const auto n = static_cast<std::uint32_t>(send.size());
  std::mt19937_64 g(seed);
  std::normal_distribution<double> e(0, sd);
  stats::run_matrices m;
  m.tx_bw = stats::square<double>(n, NAN);
  m.flags = stats::square<std::uint8_t>(n, 0);
  for (std::uint32_t a = 0; a < n; ++a)
    for (std::uint32_t b = 0; b < n; ++b)
      if (a != b) m.tx_bw.at(a, b) = std::exp(20 + send[a] + recv[b] + (sd > 0 ? e(g) : 0));
  return m;
}

}  // namespace

TEST_CASE("model: Student's t tail") {
  CHECK(stats::t_upper(0, 5) == doctest::Approx(0.5));
  CHECK(stats::t_upper(2.015, 5) == doctest::Approx(0.05).epsilon(0.01));
  CHECK(stats::t_upper(-2.015, 5) == doctest::Approx(0.95).epsilon(0.001));
  CHECK(stats::t_upper(1.96, 1e6) == doctest::Approx(0.025).epsilon(0.01));
  CHECK(stats::t_upper(12.92, 3) == doctest::Approx(0.0005).epsilon(0.02));
}

TEST_CASE("model: the fit recovers every rank's send and receive effects from the pairs") {
  const std::vector<double> send{0.1, -0.2, 0, 0.05, -0.05, 0.3}, recv{0, 0.02, -0.1, 0.04, 0.1, -0.03};
  const std::vector<std::int32_t> node_of{0, 1, 2, 3, 4, 5};
  const auto f = stats::fit_effects(additive_mesh(send, recv, 0, 1), node_of);
  // effects are told apart up to a common shift: compare each with the median rank's
  for (std::size_t a = 0; a < send.size(); ++a) {
    CHECK(f.send[a] - f.send[2] == doctest::Approx(send[a] - send[2]).epsilon(1e-6));
    CHECK(f.recv[a] - f.recv[0] == doctest::Approx(recv[a] - recv[0]).epsilon(1e-6));
  }
  CHECK(f.noise < 1e-6);
}

TEST_CASE("model: a node at half is named, a quiet healthy run names nothing") {
  std::vector<double> send(32), recv(32);
  std::mt19937_64 g(7);
  std::normal_distribution<double> spread(0, 0.01);
  for (auto& s : send) s = spread(g);
  for (auto& r : recv) r = spread(g);
  std::vector<std::int32_t> node_of;
  for (std::int32_t r = 0; r < 32; ++r) node_of.push_back(r);
  // each part's p against Holm's smallest bound over the run's parts (64: 32 nodes each way)
  const auto parts_of = [&](std::uint64_t seed) {
    return stats::model_parts(stats::fit_effects(additive_mesh(send, recv, 0.01, seed), node_of), node_of, {}, {});
  };
  const auto quiet = parts_of(2);
  REQUIRE(quiet.size() == 64);
  CHECK(std::ranges::none_of(quiet, [](const stats::model_cause& c) { return c.p < 1e-3 / 64; }));
  send[9] += std::log(0.5);
  const auto sick = parts_of(3);
  std::vector<stats::model_cause> beyond;
  for (const auto& c : sick)
    if (c.p < 1e-3 / 64) beyond.push_back(c);
  REQUIRE(beyond.size() == 1);
  CHECK(beyond[0].kind == stats::outlier_kind::node);
  CHECK(beyond[0].node == 9);
  CHECK(beyond[0].sends);
  CHECK(std::exp(beyond[0].effect) == doctest::Approx(0.5).epsilon(0.05));
}
