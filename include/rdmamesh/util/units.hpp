// Parsing and printing of sizes ("64K", "1MiB") and rates, shared by the CLI and the reports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rdmamesh {

inline constexpr std::uint64_t KiB = 1024;
inline constexpr std::uint64_t MiB = 1024 * KiB;
inline constexpr std::uint64_t GiB = 1024 * MiB;

// A byte count with an optional binary unit: B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB
// (case-insensitive, all powers of 1024 as in perftest). Throws usage_error naming `what`.
std::uint64_t parse_size(std::string_view text, std::string_view what = "size");

// The shortest exact spelling: 65536 -> "64K", 1000 -> "1000", 3 MiB -> "3M".
std::string format_size(std::uint64_t bytes);

// An --expect floor: a rate with a unit, decimal as networks count, bits or bytes per second
// (b/s, Kb/s, Mb/s, Gb/s, Tb/s; B/s, KB/s, MB/s, GB/s, TB/s; "bps" and "Gbps" too), e.g. 180Gb/s,
// 22.5GB/s; or a percentage, "80%" (of the port's rate, resolved later). Returns bytes/s, or
// the percentage with `percent` set. Throws usage_error naming `what` and the spellings.
struct rate_or_percent {
  double value = 0;
  bool percent = false;
};
rate_or_percent parse_rate(std::string_view text, std::string_view what);

// Bytes/s as the --expect spelling people read: 22.5e9 -> "180 Gb/s".
std::string format_rate(double bytes_per_s);

// User input as it may appear in a one-line message: control bytes become \xNN.
std::string printable(std::string_view text);

// Bytes per second as gigabits per second (10^9 bit/s), the unit of the console matrix.
constexpr double to_gbps(double bytes_per_s) {
  return bytes_per_s * 8.0 / 1e9;
}

}  // namespace rdmamesh
