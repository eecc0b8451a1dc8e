// How the process's heap treats large blocks.
#pragma once

namespace rdmamesh {

// Keep freed blocks for reuse instead of handing them back to the kernel. The finder allocates
// and frees several N x N arrays per candidate it tests; glibc returns blocks that large to the
// kernel, which zeroes fresh pages for the next: at thousands of ranks that costs more than
// the arithmetic.
void reuse_freed_memory();

}  // namespace rdmamesh
