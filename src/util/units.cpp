// Size parsing: strict (no fractions, no negatives, no overflow) because sizes size buffers.
#include "rdmamesh/util/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "rdmamesh/util/error.hpp"

namespace rdmamesh {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

std::uint64_t parse_size(std::string_view text, std::string_view what) {
  auto bad = [&] {
    return usage_error(
        fmt::format("invalid {} '{}': expected a whole number of bytes with an optional unit "
                    "K, M, G or T (powers of 1024), e.g. 64K or 1MiB",
                    what, printable(text)));
  };
  std::uint64_t value = 0;
  const auto* first = text.data();
  const auto* last = text.data() + text.size();
  if (first == last || !std::isdigit(static_cast<unsigned char>(*first))) throw bad();
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range) {
    throw usage_error(fmt::format("invalid {} '{}': too large", what, printable(text)));
  }
  if (ec != std::errc()) throw bad();

  static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 13> units{{
      {"", 1},
      {"b", 1},
      {"k", KiB},
      {"kb", KiB},
      {"kib", KiB},
      {"m", MiB},
      {"mb", MiB},
      {"mib", MiB},
      {"g", GiB},
      {"gb", GiB},
      {"gib", GiB},
      {"t", GiB * KiB},
      {"tib", GiB * KiB},
  }};
  const std::string unit = lower(std::string_view(ptr, static_cast<std::size_t>(last - ptr)));
  for (const auto& [name, scale] : units) {
    if (unit != name) continue;
    if (value > std::numeric_limits<std::uint64_t>::max() / scale) {
      throw usage_error(fmt::format("invalid {} '{}': too large", what, printable(text)));
    }
    return value * scale;
  }
  throw bad();
}

rate_or_percent parse_rate(std::string_view text, std::string_view what) {
  auto bad = [&] {
    return usage_error(fmt::format(
        "invalid {} '{}': expected a rate such as 180Gb/s, 25GB/s, 800Mb/s (decimal units, b = bits, B = bytes) or "
        "a percentage of the port's rate such as 80%",
        what, printable(text)));
  };
  double value = 0;
  const auto* first = text.data();
  const auto* last = text.data() + text.size();
  if (first == last || !std::isdigit(static_cast<unsigned char>(*first))) throw bad();
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || !(value > 0) || !std::isfinite(value)) throw bad();
  const std::string_view unit(ptr, static_cast<std::size_t>(last - ptr));
  if (unit == "%") {
    if (value > 100)
      throw usage_error(fmt::format("invalid {} '{}': a percentage is at most 100%", what, printable(text)));
    return {value, true};
  }
  // the case of b/B matters (bits or bytes); the prefix's does not
  static constexpr std::array<std::pair<char, double>, 4> prefixes{{{'k', 1e3}, {'m', 1e6}, {'g', 1e9}, {'t', 1e12}}};
  std::string_view rest = unit;
  double scale = 1;
  if (!rest.empty()) {
    const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(rest.front())));
    for (const auto& [name, s] : prefixes) {
      if (p == name) {
        scale = s;
        rest.remove_prefix(1);
        break;
      }
    }
  }
  double per_byte = 0;
  if (rest == "b/s" || rest == "bps" || rest == "bit/s") per_byte = 1.0 / 8;
  if (rest == "B/s" || rest == "Bps") per_byte = 1;
  if (per_byte == 0) throw bad();
  return {value * scale * per_byte, false};
}

std::string format_rate(double bytes_per_s) {
  const double bits = bytes_per_s * 8;
  if (bits >= 1e9) return fmt::format("{:.4g} Gb/s", bits / 1e9);
  if (bits >= 1e6) return fmt::format("{:.4g} Mb/s", bits / 1e6);
  return fmt::format("{:.4g} Kb/s", bits / 1e3);
}

std::string format_size(std::uint64_t bytes) {
  static constexpr std::array<std::pair<char, std::uint64_t>, 4> units{
      {{'T', GiB * KiB}, {'G', GiB}, {'M', MiB}, {'K', KiB}}};
  for (const auto& [suffix, scale] : units) {
    if (bytes >= scale && bytes % scale == 0) return fmt::format("{}{}", bytes / scale, suffix);
  }
  return fmt::format("{}", bytes);
}

}  // namespace rdmamesh
