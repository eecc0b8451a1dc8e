// The PCIe links between a NIC and its root port, read from sysfs: a link that trained below
// what both its ends can do (a x16 card running x8, a Gen4 slot running Gen3) halves a NIC's
// rate while every counter stays clean.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmamesh::fabric {

struct pcie_end {
  std::string device;            // its PCI address, e.g. 0000:3b:00.0
  double gts = 0, max_gts = 0;   // current and capable speed, GT/s (0: unknown)
  int width = 0, max_width = 0;  // lanes (0: unknown)
};

// From a NIC's PCI device folder (/sys/class/infiniband/DEV/device) up to its root port: every
// device on the way that reports a link. Empty where there is none (SoftRoCE, a VM's NIC).
std::vector<pcie_end> read_pcie_path(const std::filesystem::path& device_dir);

// "16.0 GT/s PCIe" -> 16; 0 for "Unknown" or anything else
double parse_gts(std::string_view text);

// The NIC's own link, "16 GT/s x16" ("" when unknown).
std::string link_text(const pcie_end& e);

// The first physical link on the path running below the lower of its two ends' capabilities,
// as one phrase ("0000:3b:00.0: 8 GT/s x8, where both ends can 16 GT/s x16"); "" when none.
// Walking up from the NIC, links alternate with a switch's internal hops (a downstream port
// under its upstream port), so ends pair up as (0,1), (2,3), ...: a Gen4 NIC under a Gen5 switch
// port is judged against the Gen4 it can do, not the switch's Gen5.
std::string trained_down(std::span<const pcie_end> path);

}  // namespace rdmamesh::fabric
