// Shared engine plumbing: session lookup, SRQ receives, read sources, events.
#include "rdmamesh/engine/core.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "rdmamesh/util/pattern.hpp"
#include "rdmamesh/verbs/error.hpp"

namespace rdmamesh::engine {

round_deadlines deadlines_for(const options& o, double duration_s, double warmup_s, clock::time_point start) {
  if (!o.duration_mode()) return {start, clock::time_point::max()};
  const auto secs = [](double s) {
    return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(s));
  };
  const clock::time_point measure_from = start + secs(warmup_s);
  return {measure_from, measure_from + secs(duration_s)};
}

core::core(const options& o, const plan::layout& l, std::uint32_t rank, std::uint32_t n_ranks,
           const fabric::endpoint& ep)
    : opts_(o),
      layout_(l),
      rank_(rank),
      n_ranks_(n_ranks),
      buf_(ep.buffer()),
      lkey_(ep.lkey()),
      send_cq_(ep.send_cq()),
      recv_cq_(ep.recv_cq()),
      srq_(ep.srq()),
      inline_size_(ep.inline_size()),
      links_(ep.sessions().begin(), ep.sessions().end()) {
  relink(ep.sessions());
}

void core::relink(std::span<const fabric::session_link> links) {
  links_.assign(links.begin(), links.end());
  by_qp_.clear();
  for (const auto& s : links_) {
    if (s.qp) by_qp_.emplace_back(s.qp->qp_num, s.session);
  }
  std::sort(by_qp_.begin(), by_qp_.end());
}

int core::session_of_qp(std::uint32_t qp_num) const {
  auto it = std::lower_bound(by_qp_.begin(), by_qp_.end(), std::make_pair(qp_num, 0u));
  return (it != by_qp_.end() && it->first == qp_num) ? static_cast<int>(it->second) : -1;
}

void core::post_initial_receives() {
  if (srq_ == nullptr) return;
  std::vector<std::uint64_t> ids(layout_.srq_depth);
  // SEND: receive i scatters into pool slot i; WRITE_WITH_IMM places data by address
  for (std::uint32_t i = 0; i < layout_.srq_depth; ++i) ids[i] = opts_.op == op_kind::send ? i : 0;
  repost(ids);
}

void core::repost(std::span<const std::uint64_t> wr_ids) {
  if (wr_ids.empty() || srq_ == nullptr) return;
  constexpr std::size_t chunk = 64;
  ibv_recv_wr wrs[chunk];
  ibv_sge sges[chunk];
  const bool scatter = opts_.op == op_kind::send;
  for (std::size_t base = 0; base < wr_ids.size(); base += chunk) {
    const std::size_t n = std::min(chunk, wr_ids.size() - base);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t id = wr_ids[base + i];
      wrs[i] = {};
      wrs[i].wr_id = id;
      wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
      if (scatter) {
        sges[i].addr =
            reinterpret_cast<std::uintptr_t>(buf_ + layout_.pool_slot_offset(static_cast<std::uint32_t>(id)));
        sges[i].length = static_cast<std::uint32_t>(layout_.slot_stride);
        sges[i].lkey = lkey_;
        wrs[i].sg_list = &sges[i];
        wrs[i].num_sge = 1;
      }
    }
    ibv_recv_wr* bad = nullptr;
    verbs::check_rc(ibv_post_srq_recv(srq_, wrs, &bad), fmt::format("ibv_post_srq_recv(count={})", n));
  }
}

void core::fill_read_sources() {
  if (!opts_.verify || opts_.op != op_kind::read) return;
  for (const auto& s : links_) {
    for (std::uint32_t slot = 0; slot < layout_.rx_slots; ++slot) {
      fill_pattern(buf_ + layout_.rx_offset(s.session) + layout_.slot_stride * slot, layout_.msg_size,
                   {rank_, s.peer, slot, s.lane});
    }
  }
}

void core::mismatch(std::string line) {
  constexpr std::uint64_t max_reported = 10;  // the first few name the problem; the count says its size
  if (++mismatches_ <= max_reported) events_.push_back(std::move(line));
}

std::vector<std::string> core::take_events() {
  std::vector<std::string> out;
  out.swap(events_);
  return out;
}

bool core::post_probe(const fabric::session_link& s) {
  ibv_send_wr wr{};
  wr.wr_id = probe_bit | s.session;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = s.remote_addr;
  wr.wr.rdma.rkey = s.rkey;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(s.qp, &wr, &bad); rc != 0) {
    event(fmt::format("rank {} -> rank {}: ibv_post_send(qp={:#x}, liveness probe) failed: {}", rank_, s.peer,
                      s.qp->qp_num, std::strerror(rc)));
    return false;
  }
  return true;
}

void core::inject(const std::optional<fault>& f) {
  if (f && f->what == fault::kind::corrupt && f->src == rank_) {
    corrupt_peer_ = f->dst;
    corrupt_seq_ = f->message;
  }
  if (f && f->what == fault::kind::slow && f->src == rank_) slow_ = f;
}

std::string core::completion_error(const ibv_wc& wc, const char* what) {
  if (wc.status == IBV_WC_RETRY_EXC_ERR || wc.status == IBV_WC_RNR_RETRY_EXC_ERR) {
    if (const int s = session_of_qp(wc.qp_num); s >= 0) {
      const std::uint32_t peer = links_[static_cast<std::size_t>(s)].peer;
      auto it = std::lower_bound(suspects_.begin(), suspects_.end(), peer);
      if (it == suspects_.end() || *it != peer) suspects_.insert(it, peer);
    }
  }
  return fmt::format("{} completion failed: {} (status {}, vendor_err {:#x}, qp {:#x})", what,
                     ibv_wc_status_str(wc.status), static_cast<int>(wc.status), wc.vendor_err, wc.qp_num);
}

}  // namespace rdmamesh::engine
