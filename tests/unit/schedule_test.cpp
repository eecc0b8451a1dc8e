// Schedules are pure functions of (pattern, N): every ordered pair exactly once, the pairwise
// patterns never use a rank twice in a round, and planning stays O(1) per partner at N = 100 000.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "rdmamesh/plan/schedule.hpp"
#include "rdmamesh/util/error.hpp"
#include "tally.hpp"

using namespace rdmamesh;
using plan::schedule;

namespace {

// Every (src, dst) of every round, checked for consistency between the two ends' roles.
std::vector<std::set<std::pair<std::uint32_t, std::uint32_t>>> rounds_of(const schedule& s) {
  std::vector<std::set<std::pair<std::uint32_t, std::uint32_t>>> out(s.rounds());
  const std::uint32_t n = s.ranks();
  test::tally t;
  for (std::uint32_t k = 0; k < s.rounds(); ++k) {
    std::vector<plan::round_role> roles;
    for (std::uint32_t r = 0; r < n; ++r) roles.push_back(s.role(k, r));
    for (std::uint32_t r = 0; r < n; ++r) {
      for (std::uint32_t d : roles[r].send_to) {
        if (!t.expect(d < n && d != r, "round {}: rank {} sends to {}", k, r, d)) continue;
        out[k].insert({r, d});
        // the destination expects exactly this sender in this round
        const auto& from = roles[d].recv_from;
        t.expect(std::ranges::find(from, r) != from.end(), "round {}: {} does not expect {}", k, d, r);
      }
      for (std::uint32_t src : roles[r].recv_from) {
        t.expect(src < n && std::ranges::count(roles[src].send_to, r) == 1,
                 "round {}: {} expects {}, who does not send", k, r, src);
      }
    }
  }
  CHECK_TALLY(t);
  return out;
}

void check_every_pair_once(const schedule& s) {
  const std::uint32_t n = s.ranks();
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  std::size_t total = 0;
  for (const auto& round : rounds_of(s)) {
    total += round.size();
    seen.insert(round.begin(), round.end());
  }
  CHECK(total == std::size_t{n} * (n - 1));        // nothing twice...
  CHECK(seen.size() == std::size_t{n} * (n - 1));  // ...and nothing missing
}

void check_no_rank_twice_per_round(const schedule& s) {
  test::tally t;
  for (std::uint32_t k = 0; k < s.rounds(); ++k) {
    for (std::uint32_t r = 0; r < s.ranks(); ++r) {
      const auto role = s.role(k, r);
      t.expect(role.send_to.size() <= 1 && role.recv_from.size() <= 1, "round {}: rank {} sends {}, receives {}", k, r,
               role.send_to.size(), role.recv_from.size());
      // a pairs round pairs each rank with at most one partner
      if (s.pattern() == pattern_kind::pairs && !role.send_to.empty() && !role.recv_from.empty()) {
        t.expect(role.send_to.front() == role.recv_from.front(), "round {}: rank {} sends to {}, receives from {}", k,
                 r, role.send_to.front(), role.recv_from.front());
      }
    }
  }
  CHECK_TALLY(t);
}

}  // namespace

TEST_CASE("mesh: one round with every ordered pair") {
  for (std::uint32_t n = 2; n <= 64; ++n) {
    CAPTURE(n);
    const schedule s(pattern_kind::mesh, n);
    CHECK(s.rounds() == 1);
    check_every_pair_once(s);
  }
}

TEST_CASE("shift: N-1 rounds, round d sends r -> r+d, every pair once, one partner each way") {
  for (std::uint32_t n = 2; n <= 64; ++n) {
    CAPTURE(n);
    const schedule s(pattern_kind::shift, n);
    CHECK(s.rounds() == n - 1);
    check_every_pair_once(s);
    check_no_rank_twice_per_round(s);
    CHECK(s.role(0, n - 1).send_to == std::vector<std::uint32_t>{0});
    CHECK(s.role(0, 0).recv_from == std::vector<std::uint32_t>{n - 1});
  }
}

TEST_CASE("pairs: circle method, disjoint pairs, each direction once, with and without -b") {
  for (std::uint32_t n = 2; n <= 64; ++n) {
    for (bool bidir : {false, true}) {
      CAPTURE(n);
      CAPTURE(bidir);
      const schedule s(pattern_kind::pairs, n, bidir);
      const std::uint32_t circle = n % 2 == 0 ? n - 1 : n;
      CHECK(s.rounds() == circle * (bidir ? 1 : 2));
      check_every_pair_once(s);
      check_no_rank_twice_per_round(s);
      // odd N: each rank sits out exactly one circle round
      test::tally t;
      for (std::uint32_t r = 0; r < n; ++r) {
        std::uint32_t byes = 0;
        for (std::uint32_t k = 0; k < circle; ++k) byes += s.circle_partner(k, r).has_value() ? 0 : 1;
        t.expect(byes == (n % 2 == 0 ? 0 : 1), "rank {} sits out {} round(s)", r, byes);
      }
      CHECK_TALLY(t);
    }
  }
}

TEST_CASE("incast: every other rank sends to the target, one round per target") {
  for (std::uint32_t n = 2; n <= 64; ++n) {
    CAPTURE(n);
    const schedule all(pattern_kind::incast, n);
    CHECK(all.rounds() == n);
    check_every_pair_once(all);
    const schedule one(pattern_kind::incast, n, false, static_cast<int>(n - 1));
    CHECK(one.rounds() == 1);
    const auto rounds = rounds_of(one);
    CHECK(rounds[0].size() == n - 1);
    CHECK(std::ranges::all_of(rounds[0], [&](const auto& sd) { return sd.second == n - 1; }));
  }
}

TEST_CASE("a target that is not a rank is a usage error naming the range") {
  try {
    schedule(pattern_kind::incast, 4, false, 4);
    FAIL("accepted");
  } catch (const usage_error& e) {
    CHECK(std::string(e.what()).find("0..3") != std::string::npos);
  }
}

// A rank asks for its own partner round by round: nothing N x N is ever built (the test's
// memory stays O(N)); how fast that is belongs to a benchmark, not to a pass/fail clock.
TEST_CASE("N = 100 000: a rank's whole pairs and shift schedule, one round at a time") {
  const std::uint32_t n = 100000;
  const schedule pairs(pattern_kind::pairs, n, true);
  const schedule shift(pattern_kind::shift, n);
  CHECK(pairs.rounds() == n - 1);
  for (std::uint32_t r : {0u, 1u, 4242u, n - 1}) {
    std::vector<bool> met(n, false);
    test::tally t;
    for (std::uint32_t k = 0; k < pairs.rounds(); ++k) {
      const auto p = pairs.circle_partner(k, r);
      if (!t.expect(p.has_value() && *p != r && *p < n, "round {}: rank {} has no other partner", k, r)) continue;
      // symmetric, and each partner once
      t.expect(pairs.circle_partner(k, *p) == r && !met[*p],
               "round {}: rank {} meets {}, not its partner or met before", k, r, *p);
      met[*p] = true;
    }
    CHECK_TALLY(t);
    std::uint64_t shift_sum = 0;
    for (std::uint32_t k = 0; k < shift.rounds(); ++k) shift_sum += shift.role(k, r).send_to.front();
    CHECK(shift_sum == std::uint64_t{n} * (n - 1) / 2 - r);  // every other rank exactly once
  }
}

TEST_CASE("groups (--rails aligned): each group runs the pattern among its own ranks, in the same rounds") {
  // rails 0: ranks 0, 2, 4; rail 1: ranks 1, 3 (a rank with no partner's group of one runs nothing)
  const std::vector<std::vector<std::uint32_t>> rails{{0, 2, 4}, {1, 3}, {5}};
  const plan::subset_schedule mesh(pattern_kind::mesh, rails, 6);
  CHECK(mesh.rounds() == 1);
  CHECK(mesh.role(0, 0).send_to == std::vector<std::uint32_t>{2, 4});
  CHECK(mesh.role(0, 3).send_to == std::vector<std::uint32_t>{1});
  CHECK(mesh.role(0, 3).recv_from == std::vector<std::uint32_t>{1});
  CHECK(mesh.role(0, 5).send_to.empty());
  CHECK(mesh.members() == std::vector<std::uint32_t>{0, 1, 2, 3, 4});
  // shift: the larger group's rounds; the smaller one's pattern is over after its own
  const plan::subset_schedule shift(pattern_kind::shift, rails, 6);
  CHECK(shift.rounds() == 2);
  std::set<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (std::uint32_t k = 0; k < shift.rounds(); ++k)
    for (std::uint32_t r = 0; r < 6; ++r)
      for (auto d : shift.role(k, r).send_to) pairs.insert({r, d});
  CHECK(pairs.size() == 3 * 2 + 2 * 1);  // every ordered same-rail pair once, none across
  for (const auto& [a, b] : pairs) CHECK((a % 2) == (b % 2));
  // incast to rank 3: only its rail sends to it
  const plan::subset_schedule incast(pattern_kind::incast, rails, 6, false, 3);
  CHECK(incast.role(0, 1).send_to == std::vector<std::uint32_t>{3});
  CHECK(incast.role(0, 0).send_to.empty());
}

TEST_CASE("rail groups: one per rail with --rails aligned; a job where no rail has two ranks is refused") {
  const std::vector<std::int32_t> rail_of{0, 1, 0, 1, 0, 2};
  const std::vector<std::uint32_t> everyone{0, 1, 2, 3, 4, 5};
  CHECK(plan::rail_groups(everyone, rail_of, rails_kind::all) == std::vector<std::vector<std::uint32_t>>{everyone});
  const auto aligned = plan::rail_groups(everyone, rail_of, rails_kind::aligned);
  CHECK(aligned == std::vector<std::vector<std::uint32_t>>{{0, 2, 4}, {1, 3}, {5}});
  CHECK(plan::rail_groups({1, 4, 5}, rail_of, rails_kind::aligned) ==
        std::vector<std::vector<std::uint32_t>>{{4}, {1}, {5}});  // --scaling's active ranks only
  CHECK_NOTHROW(plan::check_rail_groups(aligned, rails_kind::aligned));
  // two nodes of two NICs with one rank each on different rails: nothing would run
  const std::vector<std::int32_t> crossed{0, 1};
  CHECK_THROWS_WITH_AS(
      plan::check_rail_groups(plan::rail_groups({0, 1}, crossed, rails_kind::aligned), rails_kind::aligned),
      doctest::Contains("no rail has two ranks"), usage_error);
  CHECK_NOTHROW(plan::check_rail_groups(plan::rail_groups({0, 1}, crossed, rails_kind::all), rails_kind::all));
}
