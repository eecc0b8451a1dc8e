// hwloc queries. Bitmaps are converted to plain sorted vectors at this boundary.
#include "rdmamesh/fabric/topology.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <hwloc/openfabrics-verbs.h>

#include "rdmamesh/util/runs.hpp"

namespace rdmamesh::fabric {
namespace {

struct bitmap {
  hwloc_bitmap_t b = hwloc_bitmap_alloc();
  bitmap() = default;
  ~bitmap() { hwloc_bitmap_free(b); }
  bitmap(const bitmap&) = delete;
  bitmap& operator=(const bitmap&) = delete;
};

std::vector<int> to_vector(hwloc_const_bitmap_t b) {
  std::vector<int> out;
  int i = -1;
  hwloc_bitmap_foreach_begin(i, b) out.push_back(i);
  hwloc_bitmap_foreach_end();
  return out;
}

int first_numa(hwloc_topology_t t, hwloc_const_nodeset_t nodeset) {
  const int n = hwloc_bitmap_first(nodeset);
  return (n >= 0 && hwloc_get_numanode_obj_by_os_index(t, static_cast<unsigned>(n)) != nullptr) ? n : -1;
}

void check(int rc, const char* call) {
  if (rc != 0) throw std::runtime_error(fmt::format("{} failed: {}", call, std::strerror(errno)));
}

}  // namespace

void skip_unused_hwloc_plugins() {
  ::setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_gl,hwloc_opencl,hwloc_xml_libxml", 0);  // 0: the user's wins
}

topology::topology() {
  hwloc_topology_t t = nullptr;
  check(hwloc_topology_init(&t), "hwloc_topology_init");
  topo_.reset(t);
  // RDMA devices are OS devices under PCI: keep them to learn which cores sit near each NIC
  check(hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT), "hwloc_topology_set_io_types_filter");
  check(hwloc_topology_load(t), "hwloc_topology_load");
}

std::shared_ptr<topology> topology::synthetic(const std::string& description) {
  hwloc_topology_t t = nullptr;
  check(hwloc_topology_init(&t), "hwloc_topology_init");
  std::unique_ptr<hwloc_topology, deleter> owned(t);
  if (hwloc_topology_set_synthetic(t, description.c_str()) != 0) {
    throw std::invalid_argument(fmt::format("hwloc_topology_set_synthetic({}) failed", description));
  }
  check(hwloc_topology_load(t), "hwloc_topology_load(synthetic)");
  return std::shared_ptr<topology>(new topology(std::move(owned)));
}

std::uint64_t topology::total_memory() const {
  return hwloc_get_root_obj(topo_.get())->total_memory;
}

topo_desc topology::describe(const std::vector<std::string>& devices) const {
  hwloc_topology_t t = topo_.get();
  topo_desc d;
  const int ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  for (int i = 0; i < ncores; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
    core_desc c;
    c.core = static_cast<int>(core->logical_index);
    c.pus = to_vector(core->cpuset);
    c.numa = first_numa(t, core->nodeset);
    if (hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, core)) {
      c.package = static_cast<int>(pkg->logical_index);
    }
    d.cores.push_back(std::move(c));
  }
  const hwloc_const_cpuset_t whole = hwloc_topology_get_topology_cpuset(t);
  for (const auto& name : devices) {
    nic_desc n;
    n.name = name;
    hwloc_obj_t osdev = hwloc_ibv_get_device_osdev_by_name(t, name.c_str());
    hwloc_obj_t near = osdev != nullptr ? hwloc_get_non_io_ancestor_obj(t, osdev) : nullptr;
    n.pus = to_vector(near != nullptr ? near->cpuset : whole);
    n.numa = near != nullptr ? first_numa(t, near->nodeset) : -1;
    d.nics.push_back(std::move(n));
  }
  d.allowed_pus = to_vector(hwloc_topology_get_allowed_cpuset(t));
  d.bound_pus = current_binding();
  if (d.bound_pus.empty()) d.bound_pus = d.allowed_pus;
  return d;
}

void topology::bind_process(int pu) const {
  bitmap set;
  hwloc_bitmap_only(set.b, static_cast<unsigned>(pu));
  if (hwloc_set_cpubind(topo_.get(), set.b, HWLOC_CPUBIND_PROCESS) != 0) {
    throw std::runtime_error(fmt::format("hwloc_set_cpubind(pu={}, PROCESS) failed: {}", pu, std::strerror(errno)));
  }
}

std::vector<int> topology::current_binding() const {
  bitmap set;
  if (hwloc_get_cpubind(topo_.get(), set.b, HWLOC_CPUBIND_PROCESS) != 0) return {};
  return to_vector(set.b);
}

void* topology::allocate(std::size_t bytes, int numa, bool* on_node) const {
  *on_node = false;
  if (numa >= 0) {
    bitmap nodes;
    hwloc_bitmap_only(nodes.b, static_cast<unsigned>(numa));
    void* p = hwloc_alloc_membind(topo_.get(), bytes, nodes.b, HWLOC_MEMBIND_BIND,
                                  HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT);
    if (p != nullptr) {
      *on_node = true;
      return p;
    }
  }
  return hwloc_alloc(topo_.get(), bytes);  // page-aligned
}

void topology::free_memory(void* p, std::size_t bytes) const {
  hwloc_free(topo_.get(), p, bytes);
}

std::string hwloc_version() {
  const unsigned v = hwloc_get_api_version();
  return fmt::format("{}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff);
}

std::string cpu_list(const std::vector<int>& pus) {
  return number_runs(std::vector<std::uint64_t>(pus.begin(), pus.end()));
}

}  // namespace rdmamesh::fabric
