// Which node, NIC, rank, uplink or link explains a run's slow pairs, and only beyond the run's own
// noise: the run's model (model.hpp). Each pair's log rate is its cohort's offset (its class:
// within a node, across nodes, each uplink crossed, between rails; and its round where the round
// holds three or more of its class) + its sender's effect + its receiver's effect (+ with
// --topology and three or more subtrees, each uplink's effect on the pairs it carries up or down)
// + noise, fit robustly (Huber). Every replaceable part (a node's, a NIC's, a rank's sends and
// receives; an uplink's way up and down) is tested against "a healthy part of its kind": its
// effect over how far the run's healthy parts of its kind stray, never over less than its own
// standard error with its counts' error (a count moves in steps of the run's quantum). All parts
// of the run are one family: Holm's step-down at --false-alarm's level per run (finder_settings::
// alpha), and a part is named only below --slow % too. A part stands for its parts where all of
// them are named or none is. A single pair no named part covers is a link where its residual is
// beyond the noise in the family of such pairs. Failed pairs are causes of their own. --expect
// adds an absolute floor per pair: pairs below it are named by the part most of one of whose
// sides' pairs (at least two) lie below, even when every pair does (then the whole fabric).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rdmamesh/stats/matrix.hpp"

namespace rdmamesh::stats {

struct effects_fit;  // model.hpp

enum class outlier_kind : std::uint8_t {
  node,    // a node's sends or receives to other nodes
  rank,    // most of a rank's sends (its row) or receives (its column), or both
  link,    // one ordered pair, nothing larger explains it
  failed,  // the pair's transfer failed (completion error, missing messages)
  fabric,  // --expect: most pairs of the run are below the floor
  uplink,  // a switch's uplink (--topology): the pairs out of (sends) or into (receives) its subtree
  nic,     // one NIC of a node with several (-d all or a list): the pairs of the ranks that drive it
};
const char* to_string(outlier_kind k);

// Why a cause was named.
enum class outlier_basis : std::uint8_t {
  noise,   // slow against its cohort, beyond the run's noise
  expect,  // below the --expect floor
  failed,  // a failed pair
  retest,  // the job's verdict only: most of a side's pairs still slow alone in a retest
};
const char* to_string(outlier_basis b);

struct outlier {
  outlier_kind kind = outlier_kind::link;
  outlier_basis basis = outlier_basis::noise;
  std::int32_t node = -1;  // node: the node; rank, nic: its node; uplink: the switch (index in the tree)
  std::int32_t rank = -1;  // rank: the rank; link, failed: the source
  std::int32_t peer = -1;  // link, failed: the destination; uplink: the switch whose uplink carries
                           // the same pairs the other way (two subtrees hold every rank), or -1;
                           // nic: its rail (the NIC's index among its node's)
  // median of a named side's pairs: % of their cohorts (noise) or of the floor (expect); NaN
  // for a side that is not named
  double send_pct = 0;
  double recv_pct = 0;
  std::uint32_t pairs = 0;  // slow (or failed) pairs it explains
  std::uint32_t fine = 0;   // pairs of its named sides that were not slow
};

// A part of the run as the model read it: its effect on one side, and what it was read against.
struct model_cause {
  outlier_kind kind = outlier_kind::rank;  // rank, nic, node or uplink
  std::int32_t node = -1, rank = -1;       // uplink: node is its switch
  std::int32_t rail = -1;                  // nic: its rail; uplink: its index among the job's uplinks
  bool sends = true;
  double effect = 0;  // log
  double p = 1;       // one-sided, before the correction
  // the ranks it holds, ascending: a list, not a mask by rank, since a run of N ranks has about
  // 2N parts (N^2 bytes as masks at thousands of ranks)
  std::vector<std::uint32_t> members;
  // what its effect was read against: how far parts of its kind stray, or its own standard error
  double scale = 0;
  bool holds(std::uint32_t r) const { return std::ranges::binary_search(members, r); }
};

// What a run's pairs were judged against.
struct outlier_report {
  double median = 0;         // the run's median pair, bytes/s
  double noise = 0;          // the model's residual scale (log scale; 0.1: ~10 %)
  double threshold_pct = 0;  // the bound a single pair of typical count must fall below to be named
  // the bound a typical part of each kind (rank, NIC, node, uplink) must fall below to be named,
  // its sends and its receives apart (each side's parts stray their own way): so a run can say
  // it could not have named one at --slow
  struct part_bound {
    outlier_kind kind;
    double sends_pct, recvs_pct;
  };
  std::vector<part_bound> part_bound_pct;
  std::uint64_t quantum = 1;   // messages a pair's count moves by
  double median_msgs = 0;      // the median pair's count (duration mode; 0 with -n)
  bool too_few_msgs = false;   // not judged: the median pair counted under finder_settings::min_msgs
  double median_s = 0;         // the median pair's own seconds (-n; 0 in duration mode)
  bool too_short = false;      // not judged: -n and the median pair took under finder_settings::min_pair_s
  std::uint32_t measured = 0;  // pairs that ran and did not fail
  std::uint32_t judged = 0;    // of those, fit by the model
  double expect_bps = 0;       // --expect floor per pair, bytes/s (0: none)
  std::vector<outlier> found;
  // every part the model read, with its effect in this run (empty: the run was not fit): what a
  // retest chooses from, so that it measures what the run's own model showed
  std::vector<model_cause> parts;
  // the run's model without its pairs (null: not fit), and the level and --slow it was judged
  // at: what a job's runs pool into one fit (pool_fits)
  std::shared_ptr<const effects_fit> fit;
  double alpha = 0, slow_pct = 0;
};

// Whether a run is evidence for the job's verdict: its noise could be measured, or it named causes
// (an absolute floor or a failed pair holds without it).
inline bool is_judged(const outlier_report& r) {
  return std::isfinite(r.threshold_pct) || !r.found.empty();
}

// A link named against the run's noise: one pair in one run, a suspect until a retest or other
// runs confirm it (scheduling alone makes those); printed `# suspect:`, never alone a verdict.
inline bool is_suspect(outlier_kind k, outlier_basis b) {
  return k == outlier_kind::link && b == outlier_basis::noise;
}

// A cause the run names: what its false-alarm level counts (failed pairs and suspects apart:
// a failed pair is no judgement of noise, a suspect is not yet a cause).
inline bool names_a_cause(const outlier& o) {
  return o.kind != outlier_kind::failed && !is_suspect(o.kind, o.basis);
}

// How a run is judged.
struct finder_settings {
  double slow_pct = 90;   // --slow: never slow above this % of the healthy
  double expect_bps = 0;  // --expect: a floor per pair, bytes/s (0: none)
  bool counted = true;    // duration mode: a rate is a count over a window (-n: exact counts)
  double alpha = 1e-3;    // the chance of naming any healthy part (or link) in a run
  // The most a count can move by: the sender's CQ moderation (0: unknown). Counts that happen to
  // share a larger divisor (ranks posting in lockstep) are not coarser for it.
  std::uint64_t max_quantum = 0;
  // A count of n messages moves by about sqrt(n) with scheduling alone; three of those must stay
  // under half speed (3 / sqrt(n) < ln 2) for a run to be judged at all.
  double min_msgs = 20;
  // -n: a pair's figure is its bytes over its own time, and a rank that waits one scheduling
  // period (up to ~24 ms on Linux with a few runnable tasks) loses that much of it; three of
  // those must stay under half the median pair's time (0: not checked)
  double min_pair_s = 0;
};

// A pair's class: across nodes, or within one (a rank of no known node counts as across). The
// finder's cohorts and the retest's controls both compare like with like by it.
inline bool across_nodes(std::span<const std::int32_t> node_of, std::uint32_t a, std::uint32_t b) {
  return !(a < node_of.size() && b < node_of.size() && node_of[a] == node_of[b]);
}

// A switch's uplink as the finder sees it: the ranks under the switch. Its pairs out of them go
// up the uplink, its pairs into them come down it.
struct switch_group {
  std::int32_t sw = -1;               // the switch's index in the tree
  std::vector<std::uint8_t> members;  // by rank
  // The pair's path goes through the uplink: one end under the switch, the other not (either
  // way), as the pair classes count it. What the retest measures of an uplink and what the
  // verdict reads as its evidence. A rank the group does not list crosses nothing.
  bool crosses(std::size_t a, std::size_t b) const {
    return a < members.size() && b < members.size() && members[a] != members[b];
  }
};

// One NIC of a node that drives several (-d all or a list): the ranks on it. A NIC is named
// where its ranks' pairs are slow and the node's other NICs' are not (all of them slow: the node).
struct nic_group {
  std::int32_t node = -1;
  std::int32_t rail = -1;
  std::vector<std::uint32_t> members;  // its ranks, ascending (a job has about N NICs: no mask by rank)
  bool holds(std::uint32_t r) const { return std::ranges::binary_search(members, r); }
};

// The NICs of each node whose ranks use two or more (none where every node drives one).
std::vector<nic_group> nic_groups(std::span<const std::int32_t> node_of, std::span<const std::int32_t> rail_of);

// Of a run's parts, tested in one family (Holm at `alpha`) and slow below `slow_pct` %, those that
// stand: a part stands for its direct parts where all of them are named too or none is; where
// only some are, they stand (one slow rank slows its node's mean). A part held by one that stands
// is not named apart. By index into `parts`.
std::vector<std::size_t> standing_parts(std::span<const model_cause> parts, double alpha, double slow_pct);
// A part as the run names it; an uplink's `peer` is the switch whose uplink carries its pairs
// the other way, where two subtrees hold every rank.
outlier as_outlier(const model_cause& c, outlier_basis basis, std::span<const switch_group> uplinks);
// `m`: the run's matrices; `node_of`: each rank's node; `uplinks`: the switches with a switch
// above them (--topology); `nics`: the NICs of nodes with several (pairs across rails are then a
// class of their own: on a rail-optimized fabric they cross the spine). With two subtrees every
// pair through the spine crosses both uplinks and nothing beside them says how fast it should be:
// only --expect's floor (or analysis/compare against a clean run) can name those uplinks.
outlier_report find_outliers(const run_matrices& m, std::uint64_t msg_size, std::span<const std::int32_t> node_of,
                             const finder_settings& s, std::span<const switch_group> uplinks = {},
                             std::span<const nic_group> nics = {});

}  // namespace rdmamesh::stats
