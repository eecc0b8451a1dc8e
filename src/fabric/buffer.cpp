// Allocation through hwloc (bound to a NUMA node when asked), touched up front so page faults
// never land in the measured interval and first-touch cannot move the pages.
#include "rdmamesh/fabric/buffer.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

namespace rdmamesh::fabric {

host_buffer::host_buffer(std::size_t bytes, topology_ptr topo, int numa) : topo_(std::move(topo)), size_(bytes) {
  const std::size_t n = bytes ? bytes : 1;
  void* p = nullptr;
  if (topo_) {
    p = topo_->allocate(n, numa, &on_node_);
  } else if (int rc = posix_memalign(&p, 4096, n); rc != 0) {
    p = nullptr;
    errno = rc;
  }
  if (p == nullptr) {
    throw std::system_error(errno, std::generic_category(), fmt::format("allocating {} bytes (numa={})", bytes, numa));
  }
  std::memset(p, 0, n);
  data_ = static_cast<std::byte*>(p);
}

host_buffer::~host_buffer() {
  if (topo_) {
    topo_->free_memory(data_, size_ ? size_ : 1);
  } else {
    std::free(data_);
  }
}

}  // namespace rdmamesh::fabric
