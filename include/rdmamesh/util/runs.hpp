// Sorted numbers written as runs, as hwloc prints a CPU set and Slurm a host list's brackets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace rdmamesh {

// {0, 1, 2, 5, 7, 8} -> "0-2,5,7-8"; each number zero-padded to `width` digits (0: none).
std::string number_runs(std::span<const std::uint64_t> sorted, std::size_t width = 0);

}  // namespace rdmamesh
