// Completion queue; holds its context. Polled in batches by the engine through get().
#pragma once

#include <memory>

#include "rdmamesh/verbs/device.hpp"

namespace rdmamesh::verbs {

class completion_queue {
 public:
  completion_queue(context_ptr ctx, int entries);
  ibv_cq* get() const { return cq_.get(); }
  int entries() const { return entries_; }

 private:
  struct deleter {
    void operator()(ibv_cq* c) const noexcept;
  };
  context_ptr ctx_;
  std::unique_ptr<ibv_cq, deleter> cq_;
  int entries_ = 0;
};

using cq_ptr = std::shared_ptr<completion_queue>;

}  // namespace rdmamesh::verbs
