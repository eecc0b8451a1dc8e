// Shared receive queue: one per rank, so posted receives do not grow with peers x QPs.
#pragma once

#include <cstdint>
#include <memory>

#include "rdmamesh/verbs/pd.hpp"

namespace rdmamesh::verbs {

class shared_receive_queue {
 public:
  shared_receive_queue(pd_ptr pd, std::uint32_t max_wr);
  ibv_srq* get() const { return srq_.get(); }
  std::uint32_t max_wr() const { return max_wr_; }  // as granted

 private:
  struct deleter {
    void operator()(ibv_srq* s) const noexcept;
  };
  pd_ptr pd_;
  std::unique_ptr<ibv_srq, deleter> srq_;
  std::uint32_t max_wr_ = 0;
};

using srq_ptr = std::shared_ptr<shared_receive_queue>;

}  // namespace rdmamesh::verbs
