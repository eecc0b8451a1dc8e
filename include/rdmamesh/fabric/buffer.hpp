// The one page-aligned, pre-touched host buffer a rank registers (one MR for all QPs), on the
// NUMA node of the rank's core when placement names one.
#pragma once

#include <cstddef>
#include <memory>

#include "rdmamesh/fabric/topology.hpp"

namespace rdmamesh::fabric {

class host_buffer {
 public:
  // `topo` may be null (plain memory); `numa` < 0: no node preference.
  host_buffer(std::size_t bytes, topology_ptr topo = nullptr, int numa = -1);
  ~host_buffer();
  host_buffer(const host_buffer&) = delete;
  host_buffer& operator=(const host_buffer&) = delete;

  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool on_numa_node() const { return on_node_; }  // bound to the requested node

 private:
  topology_ptr topo_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool on_node_ = false;
};

}  // namespace rdmamesh::fabric
