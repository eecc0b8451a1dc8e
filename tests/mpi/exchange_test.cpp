// Multi-rank tests of the bootstrap: the conn_info all-to-all routes each pair's record to
// the right peer, non-blocking collectives complete while polled, setup errors are agreed on
// by all ranks, and differing options are caught before anything connects.
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <infiniband/verbs.h>

#include "rdmamesh/app/agree.hpp"
#include "rdmamesh/app/same_options.hpp"
#include "rdmamesh/fabric/conn_info.hpp"
#include "rdmamesh/mpi/world.hpp"
#include "rdmamesh/util/error.hpp"

using namespace rdmamesh;

namespace {

// The record rank `from` prepares for rank `to`: every field derived from the pair.
fabric::conn_info info_for(std::uint32_t from, std::uint32_t to) {
  fabric::conn_info c;
  c.magic = fabric::conn_info_magic;
  c.qp_num = 1000 * from + to;
  c.psn = (from << 12) | to;
  c.rkey = 0xabc00000u + from;
  c.addr = 0x10000000ULL * (from + 1) + 0x1000ULL * to;
  c.length = 4096 * 8;
  c.slot_stride = 4096;
  c.slots = 8;
  c.lid = static_cast<std::uint16_t>(from + 1);
  c.mtu = IBV_MTU_1024;
  c.ethernet = 1;
  c.gid[15] = static_cast<std::uint8_t>(from);
  c.use_grh = 1;
  return c;
}

}  // namespace

TEST_CASE("conn_info all-to-all delivers to each rank exactly what each peer prepared for it") {
  const mpi::world w;
  REQUIRE(w.size() >= 2);
  const auto me = static_cast<std::uint32_t>(w.rank());
  std::vector<fabric::conn_info> mine(static_cast<std::size_t>(w.size()));
  for (std::uint32_t to = 0; to < mine.size(); ++to) {
    if (to != me) mine[to] = info_for(me, to);
  }
  const auto got = w.alltoall(std::span<const fabric::conn_info>(mine), 1);
  REQUIRE(got.size() == mine.size());
  for (std::uint32_t from = 0; from < got.size(); ++from) {
    if (from == me) continue;
    const fabric::conn_info want = info_for(from, me);
    CAPTURE(from);
    CHECK(got[from].qp_num == want.qp_num);
    CHECK(got[from].psn == want.psn);
    CHECK(got[from].rkey == want.rkey);
    CHECK(got[from].addr == want.addr);
    CHECK(got[from].lid == want.lid);
    CHECK(got[from].gid == want.gid);
    CHECK(fabric::validate(got[from], static_cast<int>(from), true).empty());
  }
}

TEST_CASE("validate names a peer built from another conn_info format or link layer") {
  fabric::conn_info c = info_for(1, 0);
  CHECK(fabric::validate(c, 1, false).find("RoCE") != std::string::npos);
  c.magic = 0x1234;
  CHECK(fabric::validate(c, 1, true).find("same rdmamesh build") != std::string::npos);
}

TEST_CASE("ialltoall completes while the caller keeps polling") {
  const mpi::world w;
  std::vector<std::uint64_t> sent(static_cast<std::size_t>(w.size()));
  for (std::size_t to = 0; to < sent.size(); ++to) sent[to] = 100 * static_cast<std::uint64_t>(w.rank()) + to;
  std::vector<std::uint64_t> got(sent.size(), 0);
  mpi::request req = w.ialltoall(std::span<const std::uint64_t>(sent), std::span<std::uint64_t>(got), 1);
  long polls = 0;
  while (!req.test()) ++polls;
  for (std::size_t from = 0; from < got.size(); ++from) CHECK(got[from] == 100 * from + w.rank());
}

TEST_CASE("a partner exchange delivers each partner's records in the partner's place, while polled") {
  // --connect round: each rank swaps with its two ring neighbours only, two records each
  const mpi::world w;
  const auto n = static_cast<std::uint32_t>(w.size());
  const auto me = static_cast<std::uint32_t>(w.rank());
  std::vector<std::uint32_t> partners = {(me + 1) % n, (me + n - 1) % n};
  if (partners[0] == partners[1]) partners.pop_back();  // two ranks: one neighbour
  std::vector<fabric::conn_info> mine;
  for (std::uint32_t p : partners) {
    mine.push_back(info_for(me, p));
    mine.push_back(info_for(me, p + n));  // a second QP's record
  }
  auto x = w.iexchange_with(std::span<const std::uint32_t>(partners), std::span<const fabric::conn_info>(mine), 2);
  while (!x.done.test()) {
  }
  REQUIRE(x.received.size() == mine.size());
  for (std::size_t i = 0; i < partners.size(); ++i) {
    CAPTURE(partners[i]);
    CHECK(x.received[2 * i].qp_num == info_for(partners[i], me).qp_num);
    CHECK(x.received[2 * i + 1].qp_num == info_for(partners[i], me + n).qp_num);
  }
}

TEST_CASE("ibcast brings rank 0's bytes to every rank and ireduce_sum adds every rank's counts on rank 0") {
  // how rank 0 hands out the false-alarm draws and collects their counts, polled meanwhile
  const mpi::world w;
  std::vector<std::byte> buf(300, std::byte{0});
  if (w.rank() == 0)
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<std::byte>(i * 7);
  mpi::request b = w.ibcast(buf);
  while (!b.test()) {
  }
  for (std::size_t i = 0; i < buf.size(); ++i) CHECK(buf[i] == static_cast<std::byte>(i * 7));
  const std::array<std::uint64_t, 2> mine{1, static_cast<std::uint64_t>(w.rank())};
  std::array<std::uint64_t, 2> sum{99, 99};
  mpi::request r = w.ireduce_sum(mine, sum);
  while (!r.test()) {
  }
  const auto n = static_cast<std::uint64_t>(w.size());
  if (w.rank() == 0) {
    CHECK(sum[0] == n);
    CHECK(sum[1] == n * (n - 1) / 2);
  } else {
    CHECK(sum[0] == 99);  // only rank 0's is written
  }
}

TEST_CASE("strings of different lengths gather in rank order") {
  const mpi::world w;
  const auto all =
      w.allgather_strings(std::string(static_cast<std::size_t>(w.rank()), 'x') + "|" + std::to_string(w.rank()));
  REQUIRE(all.size() == static_cast<std::size_t>(w.size()));
  for (int r = 0; r < w.size(); ++r)
    CHECK(all[r] == std::string(static_cast<std::size_t>(r), 'x') + "|" + std::to_string(r));
}

TEST_CASE("a setup error on one rank stops every rank with the same exit code") {
  const mpi::world w;
  const int code = app::step(w, [&] {
    if (w.rank() == w.size() - 1) throw usage_error("bad thing on the last rank");
  });
  CHECK(code == exit_usage);
  CHECK(app::step(w, [] {}) == exit_ok);
  const int sys = app::step(w, [&] {
    if (w.rank() == 0) throw std::runtime_error("ibv_open_device failed");
  });
  CHECK(sys == exit_system);
}

TEST_CASE("identical options pass; a differing option is named on the rank that differs") {
  const mpi::world w;
  options o;
  CHECK_NOTHROW(app::check_same_options(w, o));
  options odd = o;
  if (w.rank() == 1) odd.sizes = {4096};
  if (w.rank() == 1) {
    try {
      app::check_same_options(w, odd);
      FAIL("no error on the differing rank");
    } catch (const usage_error& e) {
      const std::string msg = e.what();
      CHECK(msg.find("--size ") != std::string::npos);
      CHECK(msg.find("'4K'") != std::string::npos);
      CHECK(msg.find("'64K' on rank 0") != std::string::npos);
    }
  } else {
    CHECK_NOTHROW(app::check_same_options(w, odd));
  }
}
