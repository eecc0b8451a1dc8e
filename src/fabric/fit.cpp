#include "rdmamesh/fabric/fit.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "rdmamesh/util/units.hpp"

namespace rdmamesh::fabric {

std::optional<std::string> misfit(const rank_needs& need, const device_caps& caps, const std::string& dev,
                                  const std::string& host) {
  const std::uint64_t k = need.ranks_on_device;
  const std::uint64_t qps = std::uint64_t{need.peers} * need.qps_per_peer;
  const std::string sharing =
      k > 1 ? fmt::format("{} ranks on {} share {}, ", k, host, dev) : fmt::format("the rank on {} ", host);
  if (qps * k > caps.max_qp) {
    // the cheapest fix first: fewer QPs per peer keeps every rank and every pair
    std::string fix;
    const std::uint64_t q_fits = need.peers == 0 ? 0 : caps.max_qp / (std::uint64_t{need.peers} * k);
    if (need.pairwise && !need.per_round) {
      fix = "use --connect round (this job's patterns need only a round's partners connected at once)";
    } else if (need.qps_per_peer > 1 && q_fits >= 1) {
      fix = fmt::format("lower -q to {}", q_fits);
    } else {
      const std::uint64_t ranks_fit = qps == 0 ? 0 : caps.max_qp / qps;
      fix = ranks_fit >= 1
                ? fmt::format("run at most {} ranks per node on {}", ranks_fit, dev)
                : fmt::format("run fewer ranks: {} peers x -q {} alone exceed it", need.peers, need.qps_per_peer);
    }
    return fmt::format("the job needs {} RC QPs on {} ({}{} {} x -q {} each) but {}'s max_qp is {} ({} too many); {}",
                       qps * k, dev, sharing, need.peers, need.per_round ? "partners a round" : "peers",
                       need.qps_per_peer, dev, caps.max_qp, qps * k - caps.max_qp, fix);
  }
  auto per_rank = [&](std::uint64_t each, std::uint64_t max, const char* what,
                      const char* field) -> std::optional<std::string> {
    if (each * k <= max) return std::nullopt;
    return fmt::format("the job needs {} {} on {} ({}{} each) but {}'s {} is {}; run at most {} ranks per node on {}",
                       each * k, what, dev, sharing, each, dev, field, max, max / each, dev);
  };
  if (auto e = per_rank(2, caps.max_cq, "CQs", "max_cq")) return e;
  if (auto e = per_rank(1, caps.max_mr, "MRs", "max_mr")) return e;
  if (auto e = per_rank(1, caps.max_pd, "PDs", "max_pd")) return e;
  if (need.srq) {
    if (auto e = per_rank(1, caps.max_srq, "SRQs", "max_srq")) return e;
  }
  return std::nullopt;
}

device_caps with_test_overrides(device_caps caps) {
  if (const char* v = std::getenv("RDMAMESH_TEST_MAX_QP")) {
    caps.max_qp = parse_size(v, "RDMAMESH_TEST_MAX_QP");
  }
  return caps;
}

}  // namespace rdmamesh::fabric
