// HDF5 helpers. Strings are variable-length UTF-8 (h5py reads them as str); numbers are
// little-endian standard types in the file whatever the host.
#include "rdmamesh/io/h5.hpp"

#include <fmt/format.h>

namespace rdmamesh::io::h5 {
namespace {

void check(herr_t rc, const std::string& call) {
  if (rc < 0) throw io_error(fmt::format("{} failed", call));
}

handle vlen_string_type() {
  handle t(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy(H5T_C_S1)");
  check(H5Tset_size(t.get(), H5T_VARIABLE), "H5Tset_size(H5T_VARIABLE)");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), "H5Tset_cset(UTF8)");
  return t;
}

template <class T>
void write_typed(hid_t loc, const std::string& name, std::span<const hsize_t> dims, std::span<const T> data,
                 hid_t file_type, hid_t mem_type) {
  hsize_t count = 1;
  for (hsize_t d : dims) count *= d;
  if (count != data.size()) throw io_error(fmt::format("dataset {}: {} values for {} cells", name, data.size(), count));
  handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
               fmt::format("H5Screate_simple({})", name));
  handle ds(H5Dcreate2(loc, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
            fmt::format("H5Dcreate2({})", name));
  check(H5Dwrite(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), fmt::format("H5Dwrite({})", name));
}

}  // namespace

handle::handle(hid_t id, closer close, const std::string& call) : id_(id), close_(close) {
  if (id_ < 0) throw io_error(fmt::format("{} failed", call));
}

handle::~handle() {
  if (id_ >= 0 && close_ != nullptr) close_(id_);
}

handle& handle::operator=(handle&& o) noexcept {
  if (this != &o) {
    if (id_ >= 0 && close_ != nullptr) close_(id_);
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

void quiet_errors() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

handle create_group(hid_t loc, const std::string& name) {
  return {H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
          fmt::format("H5Gcreate2({})", name)};
}

namespace {

handle fresh_attr(hid_t loc, const std::string& name, hid_t type, hid_t space) {
  if (H5Aexists(loc, name.c_str()) > 0) check(H5Adelete(loc, name.c_str()), fmt::format("H5Adelete({})", name));
  return {H5Acreate2(loc, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
          fmt::format("H5Acreate2({})", name)};
}

}  // namespace

void set_attr(hid_t loc, const std::string& name, const std::string& value) {
  handle t = vlen_string_type();
  handle space(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate(SCALAR)");
  handle a = fresh_attr(loc, name, t.get(), space.get());
  const char* p = value.c_str();
  check(H5Awrite(a.get(), t.get(), &p), fmt::format("H5Awrite({})", name));
}

void set_attr(hid_t loc, const std::string& name, std::int64_t value) {
  handle space(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate(SCALAR)");
  handle a = fresh_attr(loc, name, H5T_STD_I64LE, space.get());
  check(H5Awrite(a.get(), H5T_NATIVE_INT64, &value), fmt::format("H5Awrite({})", name));
}

void set_attr(hid_t loc, const std::string& name, double value) {
  handle space(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate(SCALAR)");
  handle a = fresh_attr(loc, name, H5T_IEEE_F64LE, space.get());
  check(H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value), fmt::format("H5Awrite({})", name));
}

void write(hid_t loc, const std::string& name, std::span<const hsize_t> dims, std::span<const double> data) {
  write_typed(loc, name, dims, data, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
}

void write(hid_t loc, const std::string& name, std::span<const hsize_t> dims, std::span<const std::uint64_t> data) {
  write_typed(loc, name, dims, data, H5T_STD_U64LE, H5T_NATIVE_UINT64);
}

void write(hid_t loc, const std::string& name, std::span<const hsize_t> dims, std::span<const std::int32_t> data) {
  write_typed(loc, name, dims, data, H5T_STD_I32LE, H5T_NATIVE_INT32);
}

void write(hid_t loc, const std::string& name, std::span<const hsize_t> dims, std::span<const std::uint8_t> data) {
  write_typed(loc, name, dims, data, H5T_STD_U8LE, H5T_NATIVE_UINT8);
}

void write_strings(hid_t loc, const std::string& name, const std::vector<std::string>& values) {
  handle t = vlen_string_type();
  const hsize_t dims[1] = {values.size()};
  handle space(H5Screate_simple(1, dims, nullptr), H5Sclose, fmt::format("H5Screate_simple({})", name));
  handle ds(H5Dcreate2(loc, name.c_str(), t.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
            fmt::format("H5Dcreate2({})", name));
  std::vector<const char*> ptrs;
  ptrs.reserve(values.size());
  for (const auto& v : values) ptrs.push_back(v.c_str());
  if (!values.empty()) {
    check(H5Dwrite(ds.get(), t.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), fmt::format("H5Dwrite({})", name));
  }
}

}  // namespace rdmamesh::io::h5
