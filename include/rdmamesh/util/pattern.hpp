// The --verify payload: bytes derived from (source rank, destination rank, sequence number),
// so a receiver can recompute what must have arrived and name the first byte that differs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace rdmamesh {

struct pattern_key {
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  std::uint64_t seq = 0;
  std::uint32_t lane = 0;  // which QP of the pair (or ping vs pong): two lanes never look alike
};

struct pattern_mismatch {
  std::size_t offset = 0;  // first differing byte
  std::uint8_t expected = 0;
  std::uint8_t actual = 0;
};

void fill_pattern(std::byte* dst, std::size_t len, pattern_key key);

// nullopt when all `len` bytes match the pattern of `key`.
std::optional<pattern_mismatch> check_pattern(const std::byte* data, std::size_t len, pattern_key key);

}  // namespace rdmamesh
