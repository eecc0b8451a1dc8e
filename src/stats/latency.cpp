// Histogram -> summary.
#include "rdmamesh/stats/latency.hpp"

namespace rdmamesh::stats {

latency_summary summarize(const histogram& h) {
  latency_summary s;
  s.count = h.count();
  if (s.count == 0) return s;
  s.min = static_cast<double>(h.min());
  s.max = static_cast<double>(h.max());
  s.p50 = static_cast<double>(h.percentile(50));
  s.p90 = static_cast<double>(h.percentile(90));
  s.p99 = static_cast<double>(h.percentile(99));
  s.p999 = static_cast<double>(h.percentile(99.9));
  s.mean = h.mean();
  s.stddev = h.stddev();
  return s;
}

}  // namespace rdmamesh::stats
