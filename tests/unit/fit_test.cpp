// The job-fits-the-device check: which limit, by how much, the cheapest fix, before anything exists.
#include <doctest/doctest.h>

#include "text.hpp"

#include <cstdlib>
#include <string>

#include "rdmamesh/fabric/fit.hpp"
#include "rdmamesh/util/error.hpp"

using namespace rdmamesh;

namespace {
const fabric::device_caps roomy{.max_qp = 1000, .max_cq = 100, .max_mr = 100, .max_pd = 100, .max_srq = 100};
}  // namespace

TEST_CASE("a job within every limit fits") {
  CHECK_FALSE(
      fabric::misfit({.peers = 99, .qps_per_peer = 2, .srq = true, .ranks_on_device = 4}, roomy, "mlx5_0", "n1"));
}

TEST_CASE("QPs: the node's ranks share max_qp; with -q above 1 the fix is a smaller -q") {
  const auto e =
      fabric::misfit({.peers = 99, .qps_per_peer = 4, .srq = false, .ranks_on_device = 4}, roomy, "mlx5_0", "n1");
  REQUIRE(e);
  CHECK(has(*e, "needs 1584 RC QPs on mlx5_0 (4 ranks on n1 share mlx5_0, 99 peers x -q 4 each)"));
  CHECK(has(*e, "max_qp is 1000 (584 too many)"));
  CHECK(has(*e, "lower -q to 2"));
  CHECK(e->find('\n') == std::string::npos);
}

TEST_CASE("QPs: at -q 1 the fix is fewer ranks per node, or fewer ranks when one alone is too many") {
  auto e = fabric::misfit({.peers = 399, .qps_per_peer = 1, .srq = false, .ranks_on_device = 4}, roomy, "rxe0", "n1");
  REQUIRE(e);
  CHECK(has(*e, "run at most 2 ranks per node on rxe0"));
  e = fabric::misfit({.peers = 1999, .qps_per_peer = 1, .srq = false, .ranks_on_device = 1}, roomy, "rxe0", "n1");
  REQUIRE(e);
  CHECK(has(*e, "the rank on n1 1999 peers"));
  CHECK(has(*e, "run fewer ranks: 1999 peers x -q 1 alone exceed it"));
}

TEST_CASE("CQs, MRs, PDs and SRQs count per rank against the device") {
  fabric::device_caps c = roomy;
  c.max_cq = 7;  // two CQs a rank: 4 ranks need 8
  auto e = fabric::misfit({.peers = 3, .qps_per_peer = 1, .srq = true, .ranks_on_device = 4}, c, "rxe0", "n1");
  REQUIRE(e);
  CHECK(has(*e, "needs 8 CQs on rxe0"));
  CHECK(has(*e, "max_cq is 7; run at most 3 ranks per node on rxe0"));
  c = roomy;
  c.max_srq = 3;
  e = fabric::misfit({.peers = 3, .qps_per_peer = 1, .srq = true, .ranks_on_device = 4}, c, "rxe0", "n1");
  REQUIRE(e);
  CHECK(has(*e, "max_srq is 3"));
  CHECK_FALSE(fabric::misfit({.peers = 3, .qps_per_peer = 1, .srq = false, .ranks_on_device = 4}, c, "rxe0", "n1"));
}

TEST_CASE("RDMAMESH_TEST_MAX_QP lowers max_qp, and a bad value is a usage error naming it") {
  ::setenv("RDMAMESH_TEST_MAX_QP", "5", 1);
  CHECK(fabric::with_test_overrides(roomy).max_qp == 5);
  ::setenv("RDMAMESH_TEST_MAX_QP", "five", 1);
  CHECK_THROWS_WITH_AS(fabric::with_test_overrides(roomy), doctest::Contains("RDMAMESH_TEST_MAX_QP"), usage_error);
  ::unsetenv("RDMAMESH_TEST_MAX_QP");
  CHECK(fabric::with_test_overrides(roomy).max_qp == 1000);
}

TEST_CASE("QPs: a pairwise job connected to every peer is told --connect round first; per round it counts partners") {
  auto e = fabric::misfit(
      {.peers = 399, .qps_per_peer = 2, .srq = false, .ranks_on_device = 4, .per_round = false, .pairwise = true},
      roomy, "rxe0", "n1");
  REQUIRE(e);
  CHECK(has(*e, "399 peers x -q 2 each"));
  CHECK(has(*e, "use --connect round"));
  CHECK_FALSE(fabric::misfit(
      {.peers = 2, .qps_per_peer = 2, .srq = false, .ranks_on_device = 4, .per_round = true, .pairwise = true}, roomy,
      "rxe0", "n1"));
  e = fabric::misfit(
      {.peers = 2, .qps_per_peer = 200, .srq = false, .ranks_on_device = 4, .per_round = true, .pairwise = true}, roomy,
      "rxe0", "n1");
  REQUIRE(e);
  CHECK(has(*e, "2 partners a round x -q 200 each"));
  CHECK(has(*e, "lower -q to 125"));
}
