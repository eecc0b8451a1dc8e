// Thin RAII and typed helpers over the HDF5 C API: every id closes itself, every failure
// throws io_error naming the call and the object.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <hdf5.h>

namespace rdmamesh::io::h5 {

class io_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An owned hid_t with the close function of its kind (H5Fclose, H5Gclose, ...).
class handle {
 public:
  using closer = herr_t (*)(hid_t);
  handle() = default;
  handle(hid_t id, closer close, const std::string& call);  // throws if id < 0
  ~handle();
  handle(handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  handle& operator=(handle&& o) noexcept;
  handle(const handle&) = delete;
  handle& operator=(const handle&) = delete;
  hid_t get() const { return id_; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  closer close_ = nullptr;
};

void quiet_errors();  // we report errors ourselves; HDF5's stack dump would bury them

handle create_group(hid_t loc, const std::string& name);

void set_attr(hid_t loc, const std::string& name, const std::string& value);
void set_attr(hid_t loc, const std::string& name, std::int64_t value);
void set_attr(hid_t loc, const std::string& name, double value);

// Datasets of rank >= 1 with the given dims; `data` holds the product of dims elements.
void write(hid_t loc, const std::string& name, std::span<const hsize_t> dims, std::span<const double> data);
void write(hid_t loc, const std::string& name, std::span<const hsize_t> dims, std::span<const std::uint64_t> data);
void write(hid_t loc, const std::string& name, std::span<const hsize_t> dims, std::span<const std::int32_t> data);
void write(hid_t loc, const std::string& name, std::span<const hsize_t> dims, std::span<const std::uint8_t> data);
void write_strings(hid_t loc, const std::string& name, const std::vector<std::string>& values);

}  // namespace rdmamesh::io::h5
