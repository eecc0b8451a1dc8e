// Units and axis names for every dataset of the results file, in one table: each dataset gets a
// `units` attribute and HDF5 dimension labels (h5py: ds.dims[0].label), so a file explains
// itself a year later.
#pragma once

#include <string_view>
#include <vector>

#include <hdf5.h>

namespace rdmamesh::io {

enum class group_kind { ranks, run, outliers, retest, retest_parts, sweep, scaling };

struct annotation {
  std::string_view units;              // empty: the table has no entry (a unit test keeps it complete)
  std::vector<std::string_view> dims;  // one label per axis
};

annotation annotation_for(group_kind group, std::string_view dataset, int rank);

// Annotates every dataset directly in `group` that has no `units` attribute yet.
void annotate_group(hid_t group, group_kind kind);

}  // namespace rdmamesh::io
