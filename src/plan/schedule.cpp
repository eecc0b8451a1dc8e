// Schedules. The circle method fixes one position and rotates the rest: in circle round k
// rank r meets (2k - r) mod (m-1), and rank k meets the fixed position m-1; m = N rounded up
// to even, the extra position (N odd) being a bye.
#include "rdmamesh/plan/schedule.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "rdmamesh/util/error.hpp"

namespace rdmamesh::plan {

schedule::schedule(pattern_kind p, std::uint32_t n, bool bidirectional, int target)
    : pattern_(p), n_(n), bidirectional_(bidirectional), target_(target) {
  if (n < 2) throw usage_error("a schedule needs at least 2 ranks");
  if (target >= 0 && static_cast<std::uint32_t>(target) >= n) {
    throw usage_error(fmt::format("--target {} is not a rank (ranks are 0..{})", target, n - 1));
  }
  switch (p) {
    case pattern_kind::mesh: rounds_ = 1; break;
    case pattern_kind::shift: rounds_ = n - 1; break;
    case pattern_kind::pairs: rounds_ = circle_rounds() * (bidirectional ? 1 : 2); break;
    case pattern_kind::incast: rounds_ = target >= 0 ? 1 : n; break;
    case pattern_kind::spread: break;  // a listed schedule (spread_rounds): nothing of (pattern, N)
  }
}

std::uint32_t schedule::circle_rounds() const {
  return n_ % 2 == 0 ? n_ - 1 : n_;
}

std::optional<std::uint32_t> schedule::circle_partner(std::uint32_t k, std::uint32_t rank) const {
  const std::uint64_t m = n_ % 2 == 0 ? n_ : n_ + 1;  // positions, even
  const std::uint64_t fixed = m - 1;
  std::uint64_t partner = 0;
  if (rank == fixed) {
    partner = k;
  } else if (rank == k) {
    partner = fixed;
  } else {
    partner = (2 * std::uint64_t{k} + (m - 1) - rank) % (m - 1);
  }
  if (partner >= n_) return std::nullopt;  // the bye position of an odd N
  return static_cast<std::uint32_t>(partner);
}

round_role schedule::role(std::uint32_t round, std::uint32_t rank) const {
  round_role r;
  switch (pattern_) {
    case pattern_kind::mesh:
      r.send_to.reserve(n_ - 1);
      for (std::uint32_t p = 0; p < n_; ++p) {
        if (p != rank) r.send_to.push_back(p);
      }
      r.recv_from = r.send_to;
      break;
    case pattern_kind::shift: {
      const std::uint32_t d = round + 1;
      r.send_to.push_back((rank + d) % n_);
      r.recv_from.push_back((rank + n_ - d) % n_);
      break;
    }
    case pattern_kind::pairs: {
      const std::uint32_t k = bidirectional_ ? round : round / 2;
      const auto partner = circle_partner(k, rank);
      if (!partner) break;
      if (bidirectional_) {
        r.send_to.push_back(*partner);
        r.recv_from.push_back(*partner);
      } else {
        const bool low_sends = round % 2 == 0;  // even rounds: lower rank -> higher; odd: back
        if ((rank < *partner) == low_sends) {
          r.send_to.push_back(*partner);
        } else {
          r.recv_from.push_back(*partner);
        }
      }
      break;
    }
    case pattern_kind::incast: {
      const std::uint32_t t = target_ >= 0 ? static_cast<std::uint32_t>(target_) : round;
      if (rank == t) {
        for (std::uint32_t p = 0; p < n_; ++p) {
          if (p != t) r.recv_from.push_back(p);
        }
      } else {
        r.send_to.push_back(t);
      }
      break;
    }
    case pattern_kind::spread: break;
  }
  return r;
}

std::vector<std::vector<std::uint32_t>> rail_groups(std::vector<std::uint32_t> active,
                                                    std::span<const std::int32_t> rail_of, rails_kind rails) {
  if (rails != rails_kind::aligned) return {std::move(active)};
  std::map<std::int32_t, std::vector<std::uint32_t>> by;
  for (auto r : active) by[rail_of[r]].push_back(r);
  std::vector<std::vector<std::uint32_t>> out;
  for (auto& [rail, members] : by) out.push_back(std::move(members));
  return out;
}

void check_rail_groups(const std::vector<std::vector<std::uint32_t>>& groups, rails_kind rails) {
  if (rails != rails_kind::aligned) return;
  if (std::ranges::none_of(groups, [](const auto& g) { return g.size() >= 2; })) {
    throw usage_error(
        "--rails aligned runs only pairs of ranks on the same rail, and no rail has two ranks: run more ranks "
        "(one per NIC on each node) or use --rails all");
  }
}

subset_schedule::subset_schedule(pattern_kind p, std::vector<std::uint32_t> members, std::uint32_t n_total,
                                 bool bidirectional, int target)
    : pattern_(p), index_(n_total, -1), group_of_(n_total, -1) {
  if (target >= 0 && std::find(members.begin(), members.end(), static_cast<std::uint32_t>(target)) == members.end()) {
    throw usage_error(fmt::format("--target {} is not an active rank", target));
  }
  add_group(std::move(members), bidirectional, target);
}

subset_schedule::subset_schedule(pattern_kind p, const std::vector<std::vector<std::uint32_t>>& groups,
                                 std::uint32_t n_total, bool bidirectional, int target)
    : pattern_(p), index_(n_total, -1), group_of_(n_total, -1) {
  bool found = target < 0;
  for (const auto& g : groups) {
    const bool has = target >= 0 && std::find(g.begin(), g.end(), static_cast<std::uint32_t>(target)) != g.end();
    found = found || has;
    if (g.size() >= 2 && (target < 0 || has)) add_group(g, bidirectional, target);
  }
  if (!found) throw usage_error(fmt::format("--target {} is not an active rank", target));
  std::sort(members_.begin(), members_.end());
}

void subset_schedule::add_group(std::vector<std::uint32_t> members, bool bidirectional, int target) {
  int virtual_target = -1;
  for (std::size_t i = 0; i < members.size(); ++i) {
    index_[members[i]] = static_cast<int>(i);
    group_of_[members[i]] = static_cast<int>(groups_.size());
    if (static_cast<int>(members[i]) == target) virtual_target = static_cast<int>(i);
    members_.push_back(members[i]);
  }
  schedule inner(pattern_, static_cast<std::uint32_t>(members.size()), bidirectional, virtual_target);
  rounds_ = std::max(rounds_, inner.rounds());
  groups_.push_back({std::move(members), inner});
}

subset_schedule::subset_schedule(std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> rounds,
                                 std::uint32_t n_total, pattern_kind p)
    : pattern_(p),
      rounds_(static_cast<std::uint32_t>(rounds.size())),
      index_(n_total, -1),
      group_of_(n_total, -1),
      listed_(std::move(rounds)) {
  for (const auto& round : listed_) {
    for (const auto& [a, b] : round) {
      for (auto r : {a, b}) {
        if (r < n_total && index_[r] < 0) {
          index_[r] = static_cast<int>(members_.size());
          members_.push_back(r);
        }
      }
    }
  }
  std::sort(members_.begin(), members_.end());
}

round_role subset_schedule::role(std::uint32_t round, std::uint32_t rank) const {
  if (!listed_.empty()) {
    round_role r;
    if (round >= listed_.size()) return r;
    for (const auto& [a, b] : listed_[round]) {
      if (a == rank) r.send_to.push_back(b);
      if (b == rank) r.recv_from.push_back(a);
    }
    return r;
  }
  if (rank >= index_.size() || index_[rank] < 0) return {};
  const group& g = groups_[static_cast<std::size_t>(group_of_[rank])];
  if (round >= g.inner.rounds()) return {};  // a smaller group's pattern is over
  round_role r = g.inner.role(round, static_cast<std::uint32_t>(index_[rank]));
  for (auto& p : r.send_to) p = g.members[p];
  for (auto& p : r.recv_from) p = g.members[p];
  return r;
}

std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> alone_rounds(
    std::span<const std::pair<std::uint32_t, std::uint32_t>> pairs, std::span<const std::uint32_t> port_of) {
  const auto n = static_cast<std::uint32_t>(port_of.size());
  const std::size_t ports = n == 0 ? 0 : std::size_t{*std::ranges::max_element(port_of)} + 1;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> rounds;
  std::vector<std::vector<bool>> busy;  // [round][port]
  for (const auto& [a, b] : pairs) {
    if (a >= n || b >= n || a == b) continue;
    const std::uint32_t pa = port_of[a], pb = port_of[b];
    std::size_t k = 0;
    while (k < rounds.size() && (busy[k][pa] || busy[k][pb])) ++k;
    if (k == rounds.size()) {
      rounds.emplace_back();
      busy.emplace_back(ports, false);
    }
    rounds[k].emplace_back(a, b);
    busy[k][pa] = busy[k][pb] = true;
  }
  return rounds;
}

std::vector<std::uint32_t> active_ranks(std::span<const std::uint32_t> local_rank_of, std::uint32_t per_node) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t r = 0; r < local_rank_of.size(); ++r) {
    if (local_rank_of[r] < per_node) out.push_back(r);
  }
  return out;
}

std::vector<std::uint32_t> scaling_steps(std::span<const std::uint32_t> local_rank_of, std::uint32_t max_local) {
  std::vector<std::uint32_t> steps;
  for (std::uint32_t k = 1; k < max_local; k *= 2) steps.push_back(k);
  steps.push_back(max_local);
  std::erase_if(steps, [&](std::uint32_t k) { return active_ranks(local_rank_of, k).size() < 2; });
  return steps;
}

}  // namespace rdmamesh::plan
