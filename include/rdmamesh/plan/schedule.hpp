// Traffic patterns as schedules: rounds of ordered (source -> destination) pairs. A schedule
// is a pure function of (pattern, N): a rank asks for its own role in a round and gets it in
// O(1) per partner, so N = 100 000 costs nothing to plan.
//   mesh    1 round, every ordered pair at once (the contention case)
//   shift   N-1 rounds; in round d rank r sends to r+d and receives from r-d (mpiGraph)
//   pairs   circle method: rounds of disjoint pairs, each direction in its own round, or
//           both at once with -b (the link-health case); odd N gives each rank one bye
//   incast  every other rank sends to one target; one round per target
//   spread  K rounds, each rank one partner each way, spread over the fabric (plan/spread.hpp:
//           it needs the ranks' places, so it is a listed schedule, not one of (pattern, N))
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "rdmamesh/cli/options.hpp"

namespace rdmamesh::plan {

struct round_role {
  std::vector<std::uint32_t> send_to;    // ranks this rank sends to in the round
  std::vector<std::uint32_t> recv_from;  // ranks this rank receives from in the round
};

class schedule {
 public:
  // Throws usage_error when the pattern cannot run on n ranks (e.g. --target out of range).
  schedule(pattern_kind p, std::uint32_t n, bool bidirectional = false, int target = -1);

  pattern_kind pattern() const { return pattern_; }
  std::uint32_t ranks() const { return n_; }
  std::uint32_t rounds() const { return rounds_; }
  round_role role(std::uint32_t round, std::uint32_t rank) const;

  // pairs: the partner of `rank` in circle round `k` (0 <= k < circle_rounds()); nullopt = a bye.
  std::optional<std::uint32_t> circle_partner(std::uint32_t k, std::uint32_t rank) const;
  std::uint32_t circle_rounds() const;

 private:
  pattern_kind pattern_;
  std::uint32_t n_;
  bool bidirectional_;
  int target_;
  std::uint32_t rounds_ = 0;
};

// The ranks that play a pattern together: `active` as one group, or (--rails aligned) one group
// per rail, `rail_of` giving each rank's rail.
std::vector<std::vector<std::uint32_t>> rail_groups(std::vector<std::uint32_t> active,
                                                    std::span<const std::int32_t> rail_of, rails_kind rails);

// Throws usage_error when --rails aligned would run nothing (no rail has two ranks); checked
// once the ranks' rails are known, before any QP is connected.
void check_rail_groups(const std::vector<std::vector<std::uint32_t>>& groups, rails_kind rails);

// A schedule over some of the job's ranks (--scaling): members, in rank order, play virtual
// ranks 0..M-1 of the pattern; every other rank gets an empty role and only waits. With groups
// (--rails aligned: one per rail) each group runs the pattern among its own members, all groups
// in the same rounds; a pair never spans two groups.
class subset_schedule {
 public:
  subset_schedule(pattern_kind p, std::vector<std::uint32_t> members, std::uint32_t n_total, bool bidirectional = false,
                  int target = -1);
  // groups of fewer than two ranks run nothing; with a target, only its group runs
  subset_schedule(pattern_kind p, const std::vector<std::vector<std::uint32_t>>& groups, std::uint32_t n_total,
                  bool bidirectional = false, int target = -1);
  // Listed rounds of ordered (source, destination) pairs: --retest's (a pairs pattern), --pattern
  // spread's plan.
  subset_schedule(std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> rounds, std::uint32_t n_total,
                  pattern_kind p = pattern_kind::pairs);
  pattern_kind pattern() const { return pattern_; }
  std::uint32_t rounds() const { return rounds_; }
  const std::vector<std::uint32_t>& members() const { return members_; }
  round_role role(std::uint32_t round, std::uint32_t rank) const;

 private:
  struct group {
    std::vector<std::uint32_t> members;
    schedule inner;
  };
  void add_group(std::vector<std::uint32_t> members, bool bidirectional, int target);
  pattern_kind pattern_;
  std::uint32_t rounds_ = 0;
  std::vector<std::uint32_t> members_;  // every group's, in rank order
  std::vector<int> index_;              // rank -> virtual rank in its group, -1 for non-members
  std::vector<int> group_of_;           // rank -> its group, -1 for non-members
  std::vector<group> groups_;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> listed_;
};

// --retest: rounds in which each pair runs alone: no port (`port_of`: rank -> its NIC port,
// one id per port of the job) in two pairs of a round, either way, since two pairs through one
// NIC share its rate, and ranks on one NIC would read each other's traffic as their link's
// fault. Greedily in the order given; pairs naming a rank outside the job are dropped.
std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> alone_rounds(
    std::span<const std::pair<std::uint32_t, std::uint32_t>> pairs, std::span<const std::uint32_t> port_of);

// --scaling: active ranks per node at each step: 1, 2, 4 ... up to the most ranks any node has
// (that number last even when not a power of two); steps that leave fewer than two ranks active
// in the whole job are left out.
std::vector<std::uint32_t> scaling_steps(std::span<const std::uint32_t> local_rank_of, std::uint32_t max_local);

// The ranks whose local rank is below `per_node`.
std::vector<std::uint32_t> active_ranks(std::span<const std::uint32_t> local_rank_of, std::uint32_t per_node);

}  // namespace rdmamesh::plan
