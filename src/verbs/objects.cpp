// Constructors and deleters of the verbs objects. Deleters never throw: they log and move on.
#include <fmt/format.h>

#include "rdmamesh/verbs/cq.hpp"
#include "rdmamesh/verbs/error.hpp"
#include "rdmamesh/verbs/mr.hpp"
#include "rdmamesh/verbs/pd.hpp"
#include "rdmamesh/verbs/srq.hpp"

namespace rdmamesh::verbs {
namespace {

void warn_teardown(const char* call, int rc) {
  if (rc != 0) fmt::print(stderr, "rdmamesh: warning: {} failed during teardown ({})\n", call, rc);
}

}  // namespace

protection_domain::protection_domain(context_ptr ctx) : ctx_(std::move(ctx)) {
  pd_.reset(check_ptr(ibv_alloc_pd(ctx_->get()), fmt::format("ibv_alloc_pd({})", ctx_->name())));
}

void protection_domain::deleter::operator()(ibv_pd* p) const noexcept {
  warn_teardown("ibv_dealloc_pd", ibv_dealloc_pd(p));
}

completion_queue::completion_queue(context_ptr ctx, int entries) : ctx_(std::move(ctx)) {
  cq_.reset(check_ptr(ibv_create_cq(ctx_->get(), entries, nullptr, nullptr, 0),
                      fmt::format("ibv_create_cq({}, cqe={})", ctx_->name(), entries)));
  entries_ = cq_->cqe;
}

void completion_queue::deleter::operator()(ibv_cq* c) const noexcept {
  warn_teardown("ibv_destroy_cq", ibv_destroy_cq(c));
}

memory_region::memory_region(pd_ptr pd, void* addr, std::size_t length, int access) : pd_(std::move(pd)) {
  // ibv_reg_mr is a macro in rdma-core 44: call it, never take its address
  mr_.reset(check_ptr(ibv_reg_mr(pd_->get(), addr, length, access),
                      fmt::format("ibv_reg_mr(addr={}, len={}, access={:#x})", addr, length, access)));
}

void memory_region::deleter::operator()(ibv_mr* m) const noexcept {
  warn_teardown("ibv_dereg_mr", ibv_dereg_mr(m));
}

shared_receive_queue::shared_receive_queue(pd_ptr pd, std::uint32_t max_wr) : pd_(std::move(pd)) {
  ibv_srq_init_attr attr{};
  attr.attr.max_wr = max_wr;
  attr.attr.max_sge = 1;
  srq_.reset(check_ptr(ibv_create_srq(pd_->get(), &attr),
                       fmt::format("ibv_create_srq({}, max_wr={}, max_sge=1)", pd_->ctx()->name(), max_wr)));
  max_wr_ = attr.attr.max_wr;
}

void shared_receive_queue::deleter::operator()(ibv_srq* s) const noexcept {
  warn_teardown("ibv_destroy_srq", ibv_destroy_srq(s));
}

}  // namespace rdmamesh::verbs
