// The node's hardware as hwloc sees it (RAII over hwloc_topology_t), reduced to the plain
// topo_desc that placement decides from; and the two things placement then asks of hwloc:
// bind this process, allocate memory on a NUMA node.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <hwloc.h>

namespace rdmamesh::fabric {

// Keeps hwloc from loading its display and OpenCL plugins (and the graphics and ICU libraries
// they pull in) in this process, unless the user chose plugins: placement needs cores, NUMA
// nodes and PCI devices only, and those plugins cost a rank's start more than its whole
// topology. Call before MPI_Init, which loads hwloc too.
void skip_unused_hwloc_plugins();

struct core_desc {
  int core = 0;          // logical index
  std::vector<int> pus;  // OS indexes of its hardware threads
  int numa = -1;         // OS index of its NUMA node
  int package = -1;      // logical index of its package
};

struct nic_desc {
  std::string name;
  std::vector<int> pus;  // OS indexes of the PUs the device is attached close to
  int numa = -1;
};

struct topo_desc {
  std::vector<core_desc> cores;  // in topology order
  std::vector<nic_desc> nics;    // the usable devices, in the order given
  std::vector<int> allowed_pus;  // what this process may run on (cgroups, Slurm allocation)
  std::vector<int> bound_pus;    // what it is bound to now (the launcher's doing, if narrower)
};

class topology {
 public:
  topology();  // this machine, I/O devices included
  // A synthetic machine, e.g. "package:2 numa:2 core:8 pu:2" (tests).
  static std::shared_ptr<topology> synthetic(const std::string& description);

  hwloc_topology_t get() const { return topo_.get(); }
  // Cores, the locality of each named RDMA device (the whole machine when hwloc cannot place
  // it, e.g. SoftRoCE), and this process's allowed and current CPU sets.
  topo_desc describe(const std::vector<std::string>& devices) const;

  void bind_process(int pu) const;  // to one PU (OS index)
  std::vector<int> current_binding() const;
  // `bytes` on NUMA node `numa` (OS index), pages touched; plain memory when numa < 0 or when
  // the system refuses (the buffer then says so). Free with free_memory.
  void* allocate(std::size_t bytes, int numa, bool* on_node) const;
  void free_memory(void* p, std::size_t bytes) const;
  std::uint64_t total_memory() const;  // bytes of RAM on this machine, all NUMA nodes

 private:
  struct deleter {
    void operator()(hwloc_topology* t) const noexcept { hwloc_topology_destroy(t); }
  };
  explicit topology(std::unique_ptr<hwloc_topology, deleter> t) : topo_(std::move(t)) {}
  std::unique_ptr<hwloc_topology, deleter> topo_;
};

using topology_ptr = std::shared_ptr<topology>;

// The hwloc library's version at run time, "2.9.0".
std::string hwloc_version();

// "0-3,8" for a list of OS indexes.
std::string cpu_list(const std::vector<int>& pus);

}  // namespace rdmamesh::fabric
