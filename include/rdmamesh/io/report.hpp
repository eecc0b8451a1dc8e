// The console report rank 0 prints: `#` header lines a person reads and a script can skip,
// then the send-bandwidth matrix in aligned columns and one-line summaries.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/stats/matrix.hpp"

namespace rdmamesh::io {

// Header: version, ranks and hosts, device/port/GID/MTU (per rank when they differ), options.
std::string format_header(const options& o, std::span<const fabric::rank_info> ranks);

// An N x N matrix of bytes/s printed in Gb/s; "-" on the diagonal and for NaN.
std::string format_matrix(const stats::square<double>& bw, const std::string& title);

// Summaries, verify outcome, failed pairs and events.
std::string format_results(const options& o, const stats::run_matrices& m, const std::vector<std::string>& events);

// Largest N whose matrix is printed; bigger meshes are summarized (the file has the matrix).
inline constexpr std::uint32_t max_printed_matrix = 32;

}  // namespace rdmamesh::io
