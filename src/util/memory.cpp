#include "rdmamesh/util/memory.hpp"

#include <malloc.h>

namespace rdmamesh {

void reuse_freed_memory() {
  // the largest mmap threshold glibc takes on 64-bit (32 MiB); freed memory stays in the heap
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace rdmamesh
