// Protection domain; holds its context so the device outlives every PD.
#pragma once

#include <memory>

#include "rdmamesh/verbs/device.hpp"

namespace rdmamesh::verbs {

class protection_domain {
 public:
  explicit protection_domain(context_ptr ctx);
  ibv_pd* get() const { return pd_.get(); }
  const context_ptr& ctx() const { return ctx_; }

 private:
  struct deleter {
    void operator()(ibv_pd* p) const noexcept;
  };
  context_ptr ctx_;  // declared first: destroyed after the PD
  std::unique_ptr<ibv_pd, deleter> pd_;
};

using pd_ptr = std::shared_ptr<protection_domain>;

}  // namespace rdmamesh::verbs
