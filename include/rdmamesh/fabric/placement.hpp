// Where a rank runs and which NIC it uses: a pure function of the node's topology, the rank's
// place among the ranks of its node, and the flags, so every rule is unit-tested on synthetic
// machines. The driver then applies it (bind, allocate) through fabric::topology.
//
//   --bind nic   cores near the rank's NIC first (NICs taken in turn when a node has several),
//                then the other cores; local rank i takes the i-th core of that order
//   --bind core  cores in topology order
//   --bind none  no binding
// A binding the launcher already made (srun --cpu-bind, mpirun --bind-to core) is kept.
#pragma once

#include <string>
#include <vector>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/fabric/topology.hpp"

namespace rdmamesh::fabric {

enum class bound_by : std::uint8_t { none, rdmamesh, launcher };
const char* to_string(bound_by b);

// How a rank's NIC was chosen: the node's only candidate, the one nearest its core, one of
// several equally near (taken in turn by local rank), or --nic-map's entry.
enum class nic_how : std::uint8_t { only, nearest, spread, map };
const char* to_string(nic_how h);

struct placement {
  bound_by source = bound_by::none;
  int core = -1;          // logical index; -1 when the binding spans several cores or none
  int pu = -1;            // OS index of the PU bound to; -1 unless one PU
  int numa = -1;          // OS index of the node for the buffers; -1: no single node
  std::vector<int> cpus;  // OS indexes the rank may run on after placement
  std::string device;     // the NIC to use (-d, or the closest one)
  int rail = -1;          // its index among the node's candidate NICs (rail k: the k-th)
  int nics = 0;           // how many candidate NICs the node has
  nic_how how = nic_how::only;
  bool more_ranks_than_cores = false;  // rdmamesh binding had to reuse a core
};

// `topo.nics` are the node's candidate NICs in rail order (fabric::nic_candidates); the rank
// takes the nearest, spread over equally near ones, or --nic-map's entry for its local rank (a
// rail number or a device name; throws usage_error for one the node does not have).
placement place(const topo_desc& topo, int local_rank, int local_size, bind_kind bind,
                const std::vector<std::string>& nic_map = {});

// The order in which --bind nic / core hand out cores (logical indexes), for local ranks 0, 1, ...
std::vector<int> core_order(const topo_desc& topo, bind_kind bind);

}  // namespace rdmamesh::fabric
