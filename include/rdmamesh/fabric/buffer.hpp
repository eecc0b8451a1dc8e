// The one page-aligned, pre-touched host buffer a rank registers (one MR for all QPs).
#pragma once

#include <cstddef>
#include <memory>

namespace rdmamesh::fabric {

class host_buffer {
 public:
  explicit host_buffer(std::size_t bytes);
  std::byte* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  struct deleter {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte, deleter> data_;
  std::size_t size_ = 0;
};

}  // namespace rdmamesh::fabric
