// Buffer layout: slot rotation, non-overlapping regions, and the rules that keep --verify sound.
#include <doctest/doctest.h>

#include "rdmamesh/plan/layout.hpp"
#include "rdmamesh/util/error.hpp"

using namespace rdmamesh;

TEST_CASE("peer_index and peer_rank are inverse and skip the rank itself") {
  for (std::uint32_t n = 2; n <= 64; ++n) {
    for (std::uint32_t me = 0; me < n; ++me) {
      for (std::uint32_t i = 0; i + 1 < n; ++i) {
        const std::uint32_t p = plan::peer_rank(me, i);
        CHECK(p != me);
        CHECK(p < n);
        CHECK(plan::peer_index(me, p) == i);
      }
    }
  }
}

TEST_CASE("messages rotate through the receive slots of a pair") {
  options o;
  o.size = 4096;
  const plan::layout l = plan::make_layout(o, 4);
  REQUIRE(l.rx_slots > 1);
  CHECK(l.rx_slot_offset(0) == 0);
  CHECK(l.rx_slot_offset(1) == l.slot_stride);
  CHECK(l.rx_slot_offset(l.rx_slots - 1) == l.slot_stride * (l.rx_slots - 1));
  CHECK(l.rx_slot_offset(l.rx_slots) == 0);  // wraps
  CHECK(l.rx_slot_offset(l.rx_slots + 3) == 3 * l.slot_stride);
  for (std::uint64_t seq = 0; seq < 5000; ++seq) CHECK(l.rx_slot_offset(seq) + l.msg_size <= l.rx_region_bytes());
}

TEST_CASE("regions of different peers never overlap and all fit in the buffer") {
  options o;
  o.size = 1000;  // not a power of two: stride is rounded up
  o.verify = true;
  const plan::layout l = plan::make_layout(o, 5);
  CHECK(l.slot_stride % 64 == 0);
  CHECK(l.slot_stride >= l.msg_size);
  for (std::uint32_t i = 0; i < l.n_peers; ++i) {
    CHECK(l.rx_offset(i) + l.rx_region_bytes() <= l.rx_offset(0) + l.rx_region_bytes() * l.n_peers);
    for (std::uint64_t seq = 0; seq < l.tx_slots * 2ULL; ++seq) {
      const std::uint64_t t = l.tx_offset(i, seq);
      CHECK(t >= l.rx_region_bytes() * l.n_peers);  // transmit slots sit after every receive region
      CHECK(t + l.msg_size <= l.total_bytes());
      if (i + 1 < l.n_peers) CHECK(t + l.msg_size <= l.tx_offset(i + 1, 0));
    }
  }
}

TEST_CASE("without --verify one transmit slot serves a pair and the window is the tx depth") {
  options o;
  const plan::layout l = plan::make_layout(o, 3);
  CHECK(l.tx_slots == 1);
  CHECK(l.window == o.tx_depth);
  CHECK(l.rx_depth == o.rx_depth);
}

TEST_CASE("--verify: no slot is rewritten while it may still be checked") {
  for (std::uint64_t size : {8ULL, 4096ULL, 65536ULL, 1ULL << 20, 8ULL << 20}) {
    for (op_kind op : {op_kind::write_imm, op_kind::write}) {
      CAPTURE(size);
      options o;
      o.size = size;
      o.op = op;
      o.verify = true;
      const plan::layout l = plan::make_layout(o, 4);
      CHECK(l.window <= l.tx_slots);  // a tx slot is refilled only after its WR completed
      CHECK(l.window >= 1);
      if (receiver_sees_messages(op)) CHECK(l.rx_slots > l.rx_depth);  // RECV-bounded run-ahead
      CHECK(l.rx_region_bytes() <= std::max<std::uint64_t>(plan::default_peer_buffer, 2 * l.slot_stride));
    }
  }
}

TEST_CASE("large messages get fewer slots, never fewer than one") {
  options o;
  o.size = 8ULL << 20;
  const plan::layout l = plan::make_layout(o, 2);
  CHECK(l.rx_slots == 2);  // default peer buffer 16M holds two 8M slots
  o.size = 32ULL << 20;
  const plan::layout big = plan::make_layout(o, 2);
  CHECK(big.rx_slots >= 1);
  CHECK(big.rx_region_bytes() >= o.size);
}

TEST_CASE("--verify with a peer buffer of one slot is a usage error naming --peer-buffer") {
  options o;
  o.size = 1 << 20;
  o.peer_buffer = 1 << 20;
  o.verify = true;
  try {
    (void)plan::make_layout(o, 2);
    FAIL("accepted");
  } catch (const usage_error& e) {
    CHECK(std::string(e.what()).find("--peer-buffer") != std::string::npos);
  }
}
