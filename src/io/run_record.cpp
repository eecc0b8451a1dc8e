// run_record helpers.
#include "rdmamesh/io/run_record.hpp"

#include <algorithm>

namespace rdmamesh::io {

bool run_record::clean() const {
  auto zero = [](const auto& m) { return std::all_of(m.v.begin(), m.v.end(), [](auto x) { return x == 0; }); };
  if (!events.empty()) return false;
  if (bw && (!zero(bw->flags) || !zero(bw->verify_errors))) return false;
  if (lat && !zero(lat_flags)) return false;
  return true;
}

}  // namespace rdmamesh::io
