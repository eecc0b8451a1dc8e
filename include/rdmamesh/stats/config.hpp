// The job's NICs compared before any traffic: a NIC whose MTU, rate, firmware, link layer or
// PCIe link differs from most of the others, or whose PCIe link trained below what both its ends
// can do. A fact read from the NIC, not a measurement: it needs no noise model, and it counts.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rdmamesh/fabric/rank_info.hpp"

namespace rdmamesh::stats {

struct config_finding {
  std::int32_t rank = -1;  // the first rank on that NIC
  std::int32_t node = -1;
  std::string host, device;
  std::string what;  // "MTU 1024, where 5 of 6 NICs have 4096"
};

// One finding per NIC and setting that differs from a majority (more than half of the NICs that
// report it, two at least), and one per trained-down PCIe link.
std::vector<config_finding> compare_nics(std::span<const fabric::rank_info> ranks);

}  // namespace rdmamesh::stats
