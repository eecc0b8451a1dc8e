// Buffer layout: slot rotation, non-overlapping regions, per-size data-path settings, and
// the rules that keep --verify sound.
#include <doctest/doctest.h>

#include "rdmamesh/plan/layout.hpp"
#include "rdmamesh/util/error.hpp"
#include "tally.hpp"

using namespace rdmamesh;

namespace {

options with_size(std::uint64_t size) {
  options o;
  o.sizes = {size};
  return o;
}

}  // namespace

TEST_CASE("peer_index and peer_rank are inverse and skip the rank itself") {
  test::tally t;
  for (std::uint32_t n = 2; n <= 64; ++n) {
    for (std::uint32_t me = 0; me < n; ++me) {
      for (std::uint32_t i = 0; i + 1 < n; ++i) {
        const std::uint32_t p = plan::peer_rank(me, i);
        t.expect(p != me && p < n && plan::peer_index(me, p) == i, "N {}: rank {}'s peer {} is rank {}", n, me, i, p);
      }
    }
  }
  CHECK_TALLY(t);
}

TEST_CASE("messages rotate through the receive slots of a session") {
  const plan::layout l = plan::make_layout(with_size(64), 4);
  REQUIRE(l.rx_slots > 1);
  CHECK(l.rx_slot_offset(0) == 0);
  CHECK(l.rx_slot_offset(1) == l.slot_stride);
  CHECK(l.rx_slot_offset(l.rx_slots) == 0);  // wraps
  CHECK(l.rx_slot_offset(l.rx_slots + 3) == 3 * l.slot_stride);
  for (std::uint64_t seq = 0; seq < 5000; ++seq) REQUIRE(l.rx_slot_offset(seq) + l.msg_size <= l.rx_region_bytes());
}

TEST_CASE("without --verify messages rotate within about a page, as perftest, over two slots at least") {
  CHECK(plan::make_layout(with_size(64), 4).rx_slots == 64);  // one 4 KiB page of 64 B slots
  CHECK(plan::make_layout(with_size(1000), 4).rx_slots == 4);
  CHECK(plan::make_layout(with_size(4096), 4).rx_slots == 2);
  CHECK(plan::make_layout(with_size(1 << 20), 4).rx_slots == 2);
  options o = with_size(8);
  o.tx_depth = 16;
  CHECK(plan::make_layout(o, 4).rx_slots == 16);  // never more than can be in flight
  o.verify = true;
  CHECK(plan::make_layout(o, 4).rx_slots > plan::make_layout(o, 4).srq_depth);  // --verify: its own rule
}

TEST_CASE("regions of different sessions never overlap and all fit in the buffer") {
  for (op_kind op : {op_kind::write_imm, op_kind::send}) {
    options o = with_size(1000);  // not a power of two: stride is rounded up
    o.verify = true;
    o.qps = 3;
    o.op = op;
    const plan::layout l = plan::make_layout(o, 5);
    CHECK(l.sessions() == 12);
    CHECK(l.slot_stride % 64 == 0);
    CHECK(l.slot_stride >= l.msg_size);
    const std::uint64_t rx_end = l.rx_region_bytes() * l.sessions();
    for (std::uint32_t s = 0; s < l.sessions(); ++s) {
      CHECK(l.rx_offset(s) + l.rx_region_bytes() <= rx_end);
      for (std::uint64_t seq = 0; seq < l.tx_slots * 2ULL; ++seq) {
        const std::uint64_t t = l.tx_offset(s, seq);
        CHECK(t >= rx_end);  // transmit slots after every receive region
        CHECK(t + l.msg_size <= l.pool_offset());
        if (s + 1 < l.sessions()) CHECK(t + l.msg_size <= l.tx_offset(s + 1, 0));
      }
    }
    for (std::uint32_t slot = 0; slot < l.pool_slots; ++slot)
      CHECK(l.pool_slot_offset(slot) + l.slot_stride <= l.total_bytes());
    CHECK((op == op_kind::send) == (l.pool_slots > 0));
  }
}

TEST_CASE("without --verify every session sends from one shared slot") {
  const plan::layout l = plan::make_layout(with_size(65536), 8);
  CHECK(l.tx_slots == 0);
  CHECK(l.tx_offset(0, 0) == l.tx_offset(6, 99));
  CHECK(l.tx_bytes() == l.slot_stride);
  CHECK(l.window == 128);
  CHECK(l.srq_depth == 7 * 128);  // a window for each of 7 sending QPs, more than 512
}

TEST_CASE("--verify: no slot is rewritten while it may still be checked") {
  for (std::uint64_t size : {8ULL, 4096ULL, 65536ULL, 1ULL << 20, 8ULL << 20}) {
    for (op_kind op : {op_kind::write_imm, op_kind::write, op_kind::send, op_kind::read}) {
      for (std::uint32_t qps : {1u, 4u}) {
        CAPTURE(size);
        CAPTURE(qps);
        options o = with_size(size);
        o.op = op;
        o.qps = qps;
        o.verify = true;
        const plan::layout l = plan::make_layout(o, 4);
        CHECK(l.window <= l.tx_slots);  // a tx slot is refilled only after its WR completed
        CHECK(l.window >= 1);
        if (op == op_kind::write_imm) CHECK(l.rx_slots > l.srq_depth);  // RECV-bounded run-ahead
        if (op == op_kind::send) CHECK(l.srq_depth == l.pool_slots);    // one buffer per posted receive
        if (!receiver_sees_messages(op)) CHECK(l.srq_depth == 0);
      }
    }
  }
}

TEST_CASE("the shared receive queue covers every sender's window: 512 at least, 16384 at most, -r wins") {
  options o;
  CHECK(plan::srq_depth_for(o, 1) == 512);
  CHECK(plan::srq_depth_for(o, 3) == 512);
  CHECK(plan::srq_depth_for(o, 63) == 63 * 128);
  CHECK(plan::srq_depth_for(o, 1000) == 16384);
  o.rx_depth = 64;
  CHECK(plan::srq_depth_for(o, 1000) == 64);
}

TEST_CASE("latency mode keeps a ping and a pong slot per session") {
  options o = with_size(8);
  o.mode = mode_kind::lat;
  const plan::layout l = plan::make_layout(o, 3);
  CHECK(l.rx_slots >= 2);
  CHECK(l.tx_slots == 2);
  CHECK(l.tx_offset(1, 1) - l.tx_offset(1, 0) == l.slot_stride);
}

TEST_CASE("memory per peer shrinks as the mesh grows, never below what a message needs") {
  CHECK(plan::default_peer_budget(3) == 16ULL << 20);
  CHECK(plan::default_peer_budget(1023) < plan::default_peer_budget(63));
  options o = with_size(8ULL << 20);
  o.verify = true;  // a region per peer
  const plan::layout big = plan::make_layout(o, 1024);
  CHECK(big.rx_slots == 2);  // 8 MiB messages to 1023 peers: --verify's two slots each
  CHECK(big.rx_region_bytes() >= 8ULL << 20);
  const plan::layout small = plan::make_layout(with_size(65536), 4);
  CHECK(small.rx_region_bytes() <= 16ULL << 20);
}

TEST_CASE("an explicit peer buffer too small for the run is a usage error naming --peer-buffer") {
  options o = with_size(1 << 20);
  o.peer_buffer = 1 << 20;
  o.verify = true;
  try {
    (void)plan::make_layout(o, 2);
    FAIL("accepted");
  } catch (const usage_error& e) {
    CHECK(std::string(e.what()).find("--peer-buffer") != std::string::npos);
  }
}

TEST_CASE("CQ moderation as perftest: 100, every WR above 8K, the post list, never above the window") {
  options o;
  CHECK(plan::cq_mod_for(o, 64, 128) == 100);
  CHECK(plan::cq_mod_for(o, 8192, 128) == 100);
  CHECK(plan::cq_mod_for(o, 8193, 128) == 1);
  CHECK(plan::cq_mod_for(o, 64, 16) == 16);
  o.post_list = 8;
  CHECK(plan::cq_mod_for(o, 64, 128) == 8);
  o.cq_mod = 32;
  CHECK(plan::cq_mod_for(o, 1 << 20, 128) == 32);  // asked for: kept even for large messages
  CHECK(plan::cq_mod_for(o, 64, 10) == 10);
}

TEST_CASE("inline threshold as perftest: none in bw; 220 for writes, 236 for SEND in lat; none for READ") {
  options o;
  CHECK(plan::inline_for(o, 1024) == 0);  // bw default
  o.inline_size = 64;
  CHECK(plan::inline_for(o, 1024) == 64);  // asked for
  o.mode = mode_kind::lat;
  o.inline_size = -1;
  CHECK(plan::inline_for(o, 1024) == 220);
  CHECK(plan::inline_for(o, 64) == 64);  // capped by the device
  o.op = op_kind::send;
  CHECK(plan::inline_for(o, 1024) == 236);
  o.op = op_kind::read;
  o.inline_size = 128;
  CHECK(plan::inline_for(o, 1024) == 0);
  o.op = op_kind::write;
  o.inline_size = 0;
  CHECK(plan::inline_for(o, 1024) == 0);
}

TEST_CASE("without --verify every session lands in one receive region: memory does not grow with N") {
  for (op_kind op : {op_kind::write, op_kind::write_imm, op_kind::read}) {
    for (std::uint64_t size : {64ULL, 4096ULL, 65536ULL}) {
      options o = with_size(size);
      o.op = op;
      const plan::layout small = plan::make_layout(o, 8), big = plan::make_layout(o, 64 * 1024);
      CHECK(small.shared_rx);
      CHECK(small.total_bytes() == big.total_bytes());
      CHECK(big.rx_offset(big.sessions() - 1) == 0);
      CHECK(big.tx_offset(3, 7) >= big.rx_bytes());  // the send slot after the shared region
    }
  }
  // --verify reads what lands: a region per session, so it grows with N
  options o = with_size(4096);
  o.verify = true;
  CHECK_FALSE(plan::make_layout(o, 8).shared_rx);
  CHECK(plan::make_layout(o, 64).total_bytes() > plan::make_layout(o, 8).total_bytes());
  // latency mode keeps a ping and a pong slot per session
  o.verify = false;
  o.mode = mode_kind::lat;
  CHECK_FALSE(plan::make_layout(o, 8).shared_rx);
}
