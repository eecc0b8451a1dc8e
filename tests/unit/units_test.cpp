// Size flags accept exactly the spellings users type and reject the rest with a fix.
#include <doctest/doctest.h>

#include "rdmamesh/util/error.hpp"
#include "rdmamesh/util/units.hpp"

using namespace rdmamesh;

TEST_CASE("parse_size accepts plain and binary-unit sizes") {
  CHECK(parse_size("1") == 1);
  CHECK(parse_size("7B") == 7);
  CHECK(parse_size("64K") == 65536);
  CHECK(parse_size("64k") == 65536);
  CHECK(parse_size("64KB") == 65536);
  CHECK(parse_size("64KiB") == 65536);
  CHECK(parse_size("1M") == 1048576);
  CHECK(parse_size("1MiB") == 1048576);
  CHECK(parse_size("8mb") == 8ULL << 20);
  CHECK(parse_size("2G") == 2ULL << 30);
  CHECK(parse_size("1T") == 1ULL << 40);
}

TEST_CASE("parse_size rejects malformed input with a message naming the flag and an example") {
  for (const char* bad : {"", "12Q", "K", "-1", "1.5K", " 64K", "64K ", "0x10", "64 K", "1e3", "+5"}) {
    CAPTURE(bad);
    try {
      parse_size(bad, "--size");
      FAIL("accepted");
    } catch (const usage_error& e) {
      const std::string msg = e.what();
      CHECK(msg.find("--size") != std::string::npos);
      CHECK(msg.find("64K") != std::string::npos);
    }
  }
}

TEST_CASE("parse_size rejects values that overflow 64 bits") {
  CHECK_THROWS_AS(parse_size("99999999999999999999"), usage_error);
  CHECK_THROWS_AS(parse_size("17179869184T"), usage_error);  // 2^34 TiB = 2^74 bytes
  CHECK(parse_size("16777215T") == 16777215ULL << 40);
}

TEST_CASE("format_size prints the shortest exact spelling and round-trips") {
  CHECK(format_size(0) == "0");
  CHECK(format_size(1000) == "1000");
  CHECK(format_size(65536) == "64K");
  CHECK(format_size(3 * MiB) == "3M");
  CHECK(format_size(1536) == "1536");
  for (std::uint64_t v : {1ULL, 2ULL, 4096ULL, 65536ULL, 8ULL << 20, 1ULL << 30, 12345ULL}) {
    CHECK(parse_size(format_size(v)) == v);
  }
}

TEST_CASE("to_gbps converts bytes per second to gigabits per second") {
  CHECK(to_gbps(125e6) == doctest::Approx(1.0));
  CHECK(to_gbps(12.5e9) == doctest::Approx(100.0));
}

TEST_CASE("a rejected size echoes control bytes escaped, keeping the error on one line") {
  try {
    (void)parse_size("\n:'", "--size");
    FAIL("accepted");
  } catch (const usage_error& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find("'\\x0a:''") != std::string::npos);
  }
  CHECK(printable("a\tb\x7f") == "a\\x09b\\x7f");
}
