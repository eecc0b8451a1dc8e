// Memory region over caller-owned memory; holds its PD. The memory must outlive the MR.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "rdmamesh/verbs/pd.hpp"

namespace rdmamesh::verbs {

class memory_region {
 public:
  memory_region(pd_ptr pd, void* addr, std::size_t length, int access);
  ibv_mr* get() const { return mr_.get(); }
  std::uint32_t lkey() const { return mr_->lkey; }
  std::uint32_t rkey() const { return mr_->rkey; }

 private:
  struct deleter {
    void operator()(ibv_mr* m) const noexcept;
  };
  pd_ptr pd_;
  std::unique_ptr<ibv_mr, deleter> mr_;
};

}  // namespace rdmamesh::verbs
