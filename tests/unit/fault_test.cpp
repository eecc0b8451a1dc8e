// The fault-injection switch is strict: CI relies on it doing exactly what it says, and a typo
// must not silently run a clean test that then "passes".
#include <doctest/doctest.h>

#include "rdmamesh/util/error.hpp"
#include "rdmamesh/util/fault.hpp"
#include "rdmamesh/util/stop.hpp"

using namespace rdmamesh;

TEST_CASE("parse_fault reads each kind with its defaults") {
  CHECK_FALSE(parse_fault("", 4).has_value());

  const auto rkey = parse_fault("rkey:1:3", 4);
  REQUIRE(rkey);
  CHECK(rkey->what == fault::kind::rkey);
  CHECK(rkey->hits(1, 3));
  CHECK_FALSE(rkey->hits(3, 1));

  const auto corrupt = parse_fault("corrupt:0:2", 4);
  REQUIRE(corrupt);
  CHECK(corrupt->what == fault::kind::corrupt);
  CHECK(corrupt->message == 5);
  CHECK(parse_fault("corrupt:0:2:77", 4)->message == 77);

  const auto kill = parse_fault("kill:2", 4);
  REQUIRE(kill);
  CHECK(kill->what == fault::kind::kill);
  CHECK(kill->src == 2);
  CHECK(kill->seconds == doctest::Approx(2.0));
  CHECK(parse_fault("kill:3:0.5", 4)->seconds == doctest::Approx(0.5));
  CHECK(kill->run == 0);
  CHECK(parse_fault("kill:3:1:2", 4)->run == 2);
  const auto term = parse_fault("term:1.5:1", 4);
  REQUIRE(term);
  CHECK(term->what == fault::kind::term);
  CHECK(term->seconds == doctest::Approx(1.5));
  CHECK(term->run == 1);
  CHECK(parse_fault("term", 4)->run == 0);
  const auto slow = parse_fault("slow:1:3:30", 4);
  CHECK(slow->what == fault::kind::slow);
  CHECK(slow->pct == doctest::Approx(30));
  CHECK(slow->hits(1, 3));
  CHECK_FALSE(slow->hits(1, 2));
  const auto any = parse_fault("slow:2:*", 4);
  CHECK(any->pct == doctest::Approx(50));
  CHECK(any->hits(2, 0));
  CHECK(any->hits(2, 3));
  CHECK_FALSE(any->hits(3, 2));
  const auto stall = parse_fault("stall:3", 4);
  REQUIRE(stall);
  CHECK(stall->what == fault::kind::stall);
  CHECK(stall->src == 3);
  CHECK(stall->run == 0);
  CHECK(parse_fault("stall:1:2", 4)->run == 2);
}

TEST_CASE("parse_fault rejects typos with the accepted forms") {
  for (const char* spec : {"rkey",       "rkey:1",       "rkey:1:2:3",    "rkey:1:1",        "rkey:1:4",
                           "rkey:-1:2",  "rkey:a:2",     "corrupt:0:1:x", "corrupt:0:1:2:3", "kill",
                           "kill:9",     "kill:1:soon",  "kill:1:-2",     "kill:1:2:x",      "kill:1:2:3:4",
                           "term:x",     "term:1:y",     "term:1:2:3",    "flip:0:1",        ":",
                           "slow:1",     "slow:1:1",     "slow:1:2:0",    "slow:1:2:100",    "slow:1:2:x",
                           "slow:*:2",   "slow:1:2:3:4", "stall",         "stall:4",         "stall:1:x",
                           "stall:1:2:3"}) {
    CAPTURE(spec);
    try {
      (void)parse_fault(spec, 4);
      FAIL("accepted");
    } catch (const usage_error& e) {
      const std::string msg = e.what();
      CHECK(msg.find("RDMAMESH_FAULT") != std::string::npos);
      CHECK(msg.find("rkey:SRC:DST") != std::string::npos);
      CHECK(msg.find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("a stop request is remembered with its signal") {
  CHECK_FALSE(stop_requested());
  request_stop(15);
  CHECK(stop_requested());
  CHECK(stop_signal() == 15);
  request_stop(0);  // tests share the process: leave it as found
  CHECK_FALSE(stop_requested());
}
