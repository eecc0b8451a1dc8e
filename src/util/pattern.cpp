// Word-at-a-time pattern: a splitmix64 seed per message, then a cheap per-word mix, so
// filling and checking run near memory speed and two different messages never look alike.
#include "rdmamesh/util/pattern.hpp"

#include <cstring>

namespace rdmamesh {
namespace {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

constexpr std::uint64_t seed_of(pattern_key k) {
  return splitmix64((static_cast<std::uint64_t>(k.src) << 40) ^ (static_cast<std::uint64_t>(k.dst) << 20) ^
                    splitmix64(k.seq ^ splitmix64(k.lane)));
}

constexpr std::uint64_t word_at(std::uint64_t seed, std::size_t i) {
  return seed ^ (static_cast<std::uint64_t>(i) * 0xD6E8FEB86659FD93ULL);
}

}  // namespace

void fill_pattern(std::byte* dst, std::size_t len, pattern_key key) {
  const std::uint64_t seed = seed_of(key);
  const std::size_t words = len / 8;
  for (std::size_t i = 0; i < words; ++i) {
    const std::uint64_t w = word_at(seed, i);
    std::memcpy(dst + i * 8, &w, 8);
  }
  if (const std::size_t tail = len % 8; tail != 0) {
    const std::uint64_t w = word_at(seed, words);
    std::memcpy(dst + words * 8, &w, tail);
  }
}

std::optional<pattern_mismatch> check_pattern(const std::byte* data, std::size_t len, pattern_key key) {
  const std::uint64_t seed = seed_of(key);
  const std::size_t words = (len + 7) / 8;
  for (std::size_t i = 0; i < words; ++i) {
    const std::uint64_t want = word_at(seed, i);
    const std::size_t n = (i * 8 + 8 <= len) ? 8 : len - i * 8;
    std::uint64_t got = 0;
    std::memcpy(&got, data + i * 8, n);
    if (std::memcmp(&got, &want, n) == 0) continue;
    for (std::size_t b = 0; b < n; ++b) {
      const auto* w = reinterpret_cast<const std::uint8_t*>(&want);
      const auto* g = reinterpret_cast<const std::uint8_t*>(&got);
      if (w[b] != g[b]) return pattern_mismatch{i * 8 + b, w[b], g[b]};
    }
  }
  return std::nullopt;
}

}  // namespace rdmamesh
