// The --verify payload: reproducible per (src, dst, seq) and every corrupted byte found.
#include <doctest/doctest.h>

#include <vector>

#include "rdmamesh/util/pattern.hpp"

using namespace rdmamesh;

TEST_CASE("a filled payload checks clean for every length, aligned or not") {
  for (std::size_t len : {1UL, 2UL, 7UL, 8UL, 9UL, 63UL, 64UL, 100UL, 4099UL, 65536UL}) {
    std::vector<std::byte> buf(len + 1);
    fill_pattern(buf.data() + 1, len, {1, 2, 42});  // +1: misaligned start
    CHECK_FALSE(check_pattern(buf.data() + 1, len, {1, 2, 42}).has_value());
  }
}

TEST_CASE("the pattern depends on src, dst and seq") {
  std::vector<std::byte> buf(256);
  fill_pattern(buf.data(), buf.size(), {1, 2, 42});
  CHECK(check_pattern(buf.data(), buf.size(), {2, 1, 42}).has_value());
  CHECK(check_pattern(buf.data(), buf.size(), {1, 2, 43}).has_value());
  CHECK(check_pattern(buf.data(), buf.size(), {1, 3, 42}).has_value());
  CHECK(check_pattern(buf.data(), buf.size(), {1, 2, 42 + (1ULL << 32)}).has_value());  // not just the low 32 bits
}

TEST_CASE("a single flipped byte is reported at its offset with both values") {
  std::vector<std::byte> buf(1000);
  for (std::size_t off : {0UL, 1UL, 7UL, 8UL, 500UL, 999UL}) {
    fill_pattern(buf.data(), buf.size(), {3, 0, 7});
    const auto good = static_cast<std::uint8_t>(buf[off]);
    buf[off] = static_cast<std::byte>(good ^ 0x5a);
    const auto bad = check_pattern(buf.data(), buf.size(), {3, 0, 7});
    REQUIRE(bad.has_value());
    CHECK(bad->offset == off);
    CHECK(bad->expected == good);
    CHECK(bad->actual == (good ^ 0x5a));
  }
}

TEST_CASE("an all-zero buffer (nothing arrived) is a mismatch") {
  std::vector<std::byte> buf(64);
  CHECK(check_pattern(buf.data(), buf.size(), {0, 1, 0}).has_value());
}
