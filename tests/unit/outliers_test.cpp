// Outlier classification: the smallest cause that explains the slow pairs of a run.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "rdmamesh/stats/outliers.hpp"

using namespace rdmamesh::stats;

namespace {

struct run {
  square<double> bw;
  square<std::uint8_t> flags;
  square<std::int32_t> round;
  explicit run(std::uint32_t n) : bw(n, 100.0), flags(n, 0), round(n, 0) {
    for (std::uint32_t r = 0; r < n; ++r) {
      bw.at(r, r) = NAN;
      round.at(r, r) = -1;
    }
  }
};

std::vector<std::int32_t> one_node(std::uint32_t n) {
  return std::vector<std::int32_t>(n, 0);
}

}  // namespace

TEST_CASE("a healthy mesh has no outliers") {
  run m(6);
  m.bw.at(1, 4) = 95;  // within 90 % of the median
  const auto rep = find_outliers(m.bw, m.flags, m.round, one_node(6), 90);
  CHECK(rep.median == doctest::Approx(100));
  CHECK(rep.found.empty());
}

TEST_CASE("one slow pair is named as a link") {
  run m(4);
  m.bw.at(1, 3) = 30;
  const auto rep = find_outliers(m.bw, m.flags, m.round, one_node(4), 90);
  REQUIRE(rep.found.size() == 1);
  CHECK(rep.found[0].kind == outlier_kind::link);
  CHECK(rep.found[0].rank == 1);
  CHECK(rep.found[0].peer == 3);
  CHECK(rep.found[0].send_pct == doctest::Approx(30));
}

TEST_CASE("a rank whose sends are all slow is named as the rank, not as its pairs") {
  run m(5);
  for (std::uint32_t p = 0; p < 5; ++p) {
    if (p != 2) m.bw.at(2, p) = 40 + p;  // 40, 41, 43, 44: median 42
  }
  const auto rep = find_outliers(m.bw, m.flags, m.round, one_node(5), 90);
  REQUIRE(rep.found.size() == 1);
  const auto& o = rep.found[0];
  CHECK(o.kind == outlier_kind::rank);
  CHECK(o.rank == 2);
  CHECK(o.send_pct == doctest::Approx(42));
  CHECK(std::isnan(o.recv_pct));  // its receives are fine
  CHECK(o.pairs == 4);
}

TEST_CASE("a rank slow both ways is one outlier covering 2(N-1) pairs") {
  run m(6);
  for (std::uint32_t p = 0; p < 6; ++p) {
    if (p == 3) continue;
    m.bw.at(3, p) = 41;
    m.bw.at(p, 3) = 43;
  }
  const auto rep = find_outliers(m.bw, m.flags, m.round, one_node(6), 90);
  REQUIRE(rep.found.size() == 1);
  CHECK(rep.found[0].kind == outlier_kind::rank);
  CHECK(rep.found[0].send_pct == doctest::Approx(41));
  CHECK(rep.found[0].recv_pct == doctest::Approx(43));
  CHECK(rep.found[0].pairs == 10);
}

TEST_CASE("every rank of one node slow: the node is named") {
  run m(8);
  const std::vector<std::int32_t> node_of{0, 0, 1, 1, 2, 2, 3, 3};
  for (std::uint32_t r : {2u, 3u}) {
    for (std::uint32_t p = 0; p < 8; ++p) {
      if (p == r) continue;
      m.bw.at(r, p) = 50;
      m.bw.at(p, r) = 50;
    }
  }
  const auto rep = find_outliers(m.bw, m.flags, m.round, node_of, 90);
  REQUIRE(rep.found.size() == 1);
  CHECK(rep.found[0].kind == outlier_kind::node);
  CHECK(rep.found[0].node == 1);
  CHECK(rep.found[0].pairs == 26);  // 2 ranks x 2 ways x 7 peers, less the 2 pairs between them counted twice
  CHECK(rep.found[0].send_pct == doctest::Approx(50));
}

TEST_CASE("a failed pair is its own cause and does not drag the median") {
  run m(3);
  m.flags.at(0, 1) = 1;
  m.bw.at(0, 1) = 0;
  const auto rep = find_outliers(m.bw, m.flags, m.round, one_node(3), 90);
  CHECK(rep.median == doctest::Approx(100));
  REQUIRE(rep.found.size() == 1);
  CHECK(rep.found[0].kind == outlier_kind::failed);
  CHECK(rep.found[0].rank == 0);
  CHECK(rep.found[0].peer == 1);
}

TEST_CASE("with two ranks a slow direction is a link: one pair cannot tell a rank from its link") {
  run m(2);
  m.bw.at(1, 0) = 20;
  const auto rep = find_outliers(m.bw, m.flags, m.round, one_node(2), 90);
  // the median of two pairs is their mean, 60: the fast pair is not slow against it
  REQUIRE(rep.found.size() == 1);
  CHECK(rep.found[0].kind == outlier_kind::link);
  CHECK(rep.found[0].rank == 1);
}

TEST_CASE("pairs that did not take part are not judged") {
  run m(4);
  m.round.at(0, 1) = -1;
  m.bw.at(0, 1) = NAN;
  CHECK(find_outliers(m.bw, m.flags, m.round, one_node(4), 90).found.empty());
}

TEST_CASE("a rank with most of its sends slow is the cause; its one fine pair is not counted") {
  run m(4);
  m.bw.at(2, 0) = 47;
  m.bw.at(2, 1) = 59;
  m.bw.at(2, 3) = 95;  // within the limit
  const auto rep = find_outliers(m.bw, m.flags, m.round, one_node(4), 60);
  REQUIRE(rep.found.size() == 1);
  CHECK(rep.found[0].kind == outlier_kind::rank);
  CHECK(rep.found[0].send_pct == doctest::Approx(59));
  CHECK(rep.found[0].pairs == 2);
}

TEST_CASE("half of a rank's pairs slow is not yet the rank: its links are named") {
  run m(3);
  m.bw.at(1, 2) = 30;  // one of rank 1's two sends, one of rank 2's two receives
  const auto rep = find_outliers(m.bw, m.flags, m.round, one_node(3), 90);
  REQUIRE(rep.found.size() == 1);
  CHECK(rep.found[0].kind == outlier_kind::link);
}
