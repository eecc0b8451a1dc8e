// Which node, rank or link explains a run's slow pairs. A heatmap shows them; this names the
// smallest cause, so a user reads "rank 5 is slow" instead of fourteen slow pairs. A pair is
// slow below `slow_pct` % of the median pair; failed pairs are causes of their own.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rdmamesh/stats/matrix.hpp"

namespace rdmamesh::stats {

enum class outlier_kind : std::uint8_t {
  node,    // every rank on a node is slow
  rank,    // most of a rank's sends (its row) or receives (its column), or both, are slow
  link,    // one ordered pair, nothing larger explains it
  failed,  // the pair's transfer failed (completion error, missing messages)
};
const char* to_string(outlier_kind k);

struct outlier {
  outlier_kind kind = outlier_kind::link;
  std::int32_t node = -1;  // node: the node; rank: its node
  std::int32_t rank = -1;  // rank: the rank; link, failed: the source
  std::int32_t peer = -1;  // link, failed: the destination
  double send_pct = 0;     // median of its slow-side pairs as % of the run's median pair (NaN: not slow that way)
  double recv_pct = 0;
  std::uint32_t pairs = 0;  // slow or failed pairs it explains
};

struct outlier_report {
  double median = 0;  // the run's median pair, bytes/s
  std::vector<outlier> found;
};

// `bw`: the pairs' send bandwidth; `flags`: nonzero where a pair failed; `round`: -1 where a
// pair did not take part; `node_of`: each rank's node. A rank is named rather than its links
// when more than half of a side's measured pairs, and at least two, are slow.
outlier_report find_outliers(const square<double>& bw, const square<std::uint8_t>& flags,
                             const square<std::int32_t>& round, std::span<const std::int32_t> node_of, double slow_pct);

}  // namespace rdmamesh::stats
