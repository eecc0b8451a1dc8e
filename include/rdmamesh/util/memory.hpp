// How the process's heap treats large blocks.
#pragma once

namespace rdmamesh {

// Keep freed blocks for reuse instead of handing them back to the kernel. The finder allocates
// and frees several N x N arrays per candidate it tests; glibc returns blocks that large to the
// kernel, which zeroes fresh pages for the next (40 % of judging a 4 096-rank run went there).
void reuse_freed_memory();

}  // namespace rdmamesh
