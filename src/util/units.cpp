// Size parsing: strict (no fractions, no negatives, no overflow) because sizes size buffers.
#include "rdmamesh/util/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
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

std::string format_size(std::uint64_t bytes) {
  static constexpr std::array<std::pair<char, std::uint64_t>, 4> units{
      {{'T', GiB * KiB}, {'G', GiB}, {'M', MiB}, {'K', KiB}}};
  for (const auto& [suffix, scale] : units) {
    if (bytes >= scale && bytes % scale == 0) return fmt::format("{}{}", bytes / scale, suffix);
  }
  return fmt::format("{}", bytes);
}

}  // namespace rdmamesh
