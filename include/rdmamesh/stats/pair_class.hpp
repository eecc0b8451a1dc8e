// Which pairs are like one another: the finder's cohorts and the retest's controls both compare
// a pair only with pairs of its class, since a path's length, not a fault, sets their speed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace rdmamesh::stats {

struct switch_group;
struct nic_group;

// The uplinks over exactly one end of a pair, given those over each (ascending): `crossed(u, true)`
// for each over a (up out of its subtree), `crossed(u, false)` for each over b (down into b's).
template <class Crossed>
void each_crossed(const std::vector<std::uint32_t>& over_a, const std::vector<std::uint32_t>& over_b, Crossed crossed) {
  std::size_t i = 0, j = 0;
  while (i < over_a.size() || j < over_b.size()) {
    if (j == over_b.size() || (i < over_a.size() && over_a[i] < over_b[j])) {
      crossed(over_a[i++], true);
    } else if (i == over_a.size() || over_b[j] < over_a[i]) {
      crossed(over_b[j++], false);
    } else {
      ++i;
      ++j;
    }
  }
}

// A pair's class: 0 within a node, 1 across nodes; across nodes plus each uplink (--topology) the
// path crosses (within a leaf 1, leaf-spine-leaf 3); plus 16 between two rails (-d all or a list:
// on a rail-optimized fabric such a pair crosses the spine, within a node too). A rank of no known
// node counts as across.
class pair_classes {
 public:
  // cpu_group: by rank, an id shared by the ranks pinned to overlapping CPUs of one host, -1
  // for a rank that shares none (fabric::cpu_groups); empty where unknown (the simulator)
  pair_classes(std::uint32_t n, std::span<const std::int32_t> node_of, std::span<const switch_group> uplinks = {},
               std::span<const nic_group> nics = {}, std::span<const std::int32_t> cpu_group = {});
  int operator()(std::uint32_t a, std::uint32_t b) const;
  // Finer: which uplinks the pair crosses and which way (up out of a's subtree, or down into
  // b's), beside the class. Pairs of one path meet the same switches' ports the same way: the
  // model's retest compares a part's pairs alone only with controls of their path, so that a
  // node under a slow uplink is not read slow against pairs that do not cross it. And, where
  // both its ends are pinned to CPUs shared with other ranks of their kernel: whether they share
  // one, and which (alone, such a pair runs both ends on one core's time, where a pair of two CPUs
  // has two), and if not, which two, in order (one way can be lastingly faster than the other,
  // and one core than another: on the emulated cluster, ways 0.8-1.2 of their mean, pairs on one
  // vCPU 0.6, the two vCPUs up to 2x apart), so it is compared only with its like.
  // `with_uplinks` false: its route, the path without which uplinks (the class and the CPUs'
  // part). An uplink's pairs alone are read against pairs of their route through the tier's
  // other uplinks. `which_cpu` false: a pair on one CPU keyed as one on any, for where its own
  // CPU has too few pairs to be read against (model_retest.cpp).
  int path(std::uint32_t a, std::uint32_t b, bool with_uplinks = true, bool which_cpu = true) const;
  // Whether both ends are pinned to one CPU that other ranks of their kernel share.
  bool one_cpu(std::uint32_t a, std::uint32_t b) const;
  // Whether rank r is pinned to CPUs that other ranks of its kernel share.
  bool shares_cpu(std::uint32_t r) const { return r < cpu_group_.size() && cpu_group_[r] >= 0; }
  static constexpr int rails_key = 16;  // above any count of uplinks
  static bool across(int cls) { return cls % rails_key != 0; }

 private:
  std::vector<std::int32_t> node_, rail_, cpu_group_;
  std::vector<std::vector<std::uint32_t>> over_;  // by rank, the uplinks over it (ascending), one per tier
};

}  // namespace rdmamesh::stats
