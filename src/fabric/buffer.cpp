// Page-aligned allocation, touched up front so page faults never land in the measured interval.
#include "rdmamesh/fabric/buffer.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

namespace rdmamesh::fabric {

host_buffer::host_buffer(std::size_t bytes) : size_(bytes) {
  void* p = nullptr;
  if (int rc = posix_memalign(&p, 4096, bytes ? bytes : 1); rc != 0) {
    throw std::system_error(rc, std::generic_category(), fmt::format("posix_memalign(align=4096, size={})", bytes));
  }
  std::memset(p, 0, bytes);
  data_.reset(static_cast<std::byte*>(p));
}

void host_buffer::deleter::operator()(std::byte* p) const noexcept {
  std::free(p);
}

}  // namespace rdmamesh::fabric
