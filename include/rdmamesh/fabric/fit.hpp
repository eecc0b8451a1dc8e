// Does the job fit the device? What every rank of a node needs from its NIC, against what
// ibv_query_device allows, checked before any PD, CQ, MR or QP exists.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rdmamesh::fabric {

// The per-device limits that rdmamesh's resources count against (ibv_device_attr's names).
struct device_caps {
  std::uint64_t max_qp = 0;
  std::uint64_t max_cq = 0;
  std::uint64_t max_mr = 0;
  std::uint64_t max_pd = 0;
  std::uint64_t max_srq = 0;
};

// What one rank creates; `ranks_on_device` ranks of this node share the device.
struct rank_needs {
  std::uint32_t peers = 0;
  std::uint32_t qps_per_peer = 1;
  bool srq = false;
  std::uint32_t ranks_on_device = 1;
  bool per_round = false;  // --connect round: `peers` is the most partners of one round
  bool pairwise = false;   // every pattern is shift, pairs or incast: --connect round would fit
};

// One line naming the first limit the job exceeds, by how much, and the cheapest fix; nothing
// when it fits. `dev` and `host` name the device and node in the message.
std::optional<std::string> misfit(const rank_needs& need, const device_caps& caps, const std::string& dev,
                                  const std::string& host);

// RDMAMESH_TEST_MAX_QP (test only, documented as such): a smaller max_qp than the device's, so
// the limit check can be exercised on a device whose real limit needs more memory to reach.
device_caps with_test_overrides(device_caps caps);

}  // namespace rdmamesh::fabric
