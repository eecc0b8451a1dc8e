// Rank 0's record of the job and every way it can end; see ledger.hpp.
#include "rdmamesh/app/ledger.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "rdmamesh/io/report.hpp"
#include "rdmamesh/stats/matrix.hpp"
#include "rdmamesh/stats/why.hpp"
#include "rdmamesh/util/units.hpp"

namespace rdmamesh::app {

ledger::ledger(const options& o, std::vector<std::uint32_t> steps, std::vector<std::int32_t> node_of,
               std::uint32_t nodes, io::results_file* file)
    : o_(o), steps_(std::move(steps)), node_of_(std::move(node_of)), nodes_(nodes), file_(file) {}

void ledger::add(io::run_record r) {
  std::lock_guard lock(mu_);
  if (file_) file_->write_run(o_, r);
  if (r.retest_of < 0) dirty_.insert(r.pattern);  // a retest is no point of a sweep
  // only the newest run's model parts are read (its retest's plan): at thousands of ranks each
  // run's are megabytes, which a long sweep would otherwise hold to the end
  if (!records_.empty() && records_.back().outliers) records_.back().outliers->parts = {};
  records_.push_back(std::move(r));
}

std::optional<io::run_record> ledger::last() const {
  std::lock_guard lock(mu_);
  if (records_.empty()) return std::nullopt;
  return records_.back();
}

void ledger::close_pattern(pattern_kind p) {
  std::lock_guard lock(mu_);
  derive(p);
}

std::size_t ledger::runs() const {
  std::lock_guard lock(mu_);
  return records_.size();
}

std::vector<const io::run_record*> ledger::finished(pattern_kind p) const {
  std::vector<const io::run_record*> out;
  for (const auto& r : records_) {
    if (r.pattern == p && !r.interrupted && r.retest_of < 0) out.push_back(&r);
  }
  return out;
}

void ledger::derive(pattern_kind p) {
  dirty_.erase(p);
  if (!file_) return;
  const auto runs = finished(p);
  if (o_.scaling) {
    // the [size, step] grid holds the sizes whose every step finished, in size order
    std::vector<std::uint64_t> sizes;
    std::vector<const io::run_record*> grid;
    for (std::uint64_t size : o_.sizes) {
      std::vector<const io::run_record*> row;
      for (std::uint32_t k : steps_) {
        for (const auto* r : runs) {
          if (r->size == size && r->active_per_node == k) row.push_back(r);
        }
      }
      if (row.size() != steps_.size()) continue;
      sizes.push_back(size);
      grid.insert(grid.end(), row.begin(), row.end());
    }
    if (!sizes.empty()) file_->write_scaling(p, sizes, steps_, grid, node_of_, nodes_);
  } else if (o_.sizes.size() > 1 && !runs.empty()) {
    file_->write_sweep(o_, p, runs);
  }
}

// Mesh over the first pairwise pattern that ran, per size (bw only).
std::string ledger::contention() {
  std::string text;
  if (o_.mode != mode_kind::bw) return text;
  for (auto& mesh : records_) {
    if (mesh.pattern != pattern_kind::mesh || !mesh.bw || mesh.interrupted || mesh.contention) continue;
    for (auto p : o_.patterns) {
      if (p != pattern_kind::pairs && p != pattern_kind::shift) continue;
      for (const auto& pw : records_) {
        if (pw.pattern != p || pw.size != mesh.size || pw.active_per_node != mesh.active_per_node || !pw.bw ||
            pw.interrupted) {
          continue;
        }
        mesh.contention = stats::ratio(mesh.bw->tx_bw, pw.bw->tx_bw);
        mesh.contention_vs = p;
      }
      if (mesh.contention) break;
    }
    if (!mesh.contention) continue;
    text += io::format_contention(mesh);
    if (file_) file_->write_contention(mesh);
  }
  return text;
}

void ledger::set_verdict(std::string path, io::verdict_context ctx, std::vector<fabric::rank_info> ranks,
                         std::vector<stats::config_finding> config, std::vector<stats::switch_group> uplinks,
                         std::vector<stats::nic_group> nics) {
  std::lock_guard lock(mu_);
  verdict_path_ = std::move(path);
  verdict_ctx_ = std::move(ctx);
  ranks_ = std::move(ranks);
  config_ = std::move(config);
  uplinks_ = std::move(uplinks);
  nics_ = std::move(nics);
}

// Every finished bandwidth run's causes (retests are evidence about runs, not runs).
stats::job_verdict ledger::judge() const {
  std::vector<stats::judged_run> runs;
  for (const auto& r : records_) {
    if (!r.bw || r.retest_of >= 0 || r.interrupted) continue;
    std::string label = fmt::format("{} {}", to_string(r.pattern), format_size(r.size));
    if (r.active_per_node > 0) label += fmt::format(" at {}/node", r.active_per_node);
    const bool judged = r.outliers && stats::is_judged(*r.outliers);
    runs.push_back({r.index, label, r.outliers ? &*r.outliers : nullptr, judged, {}, r.false_alarms, {}, false, 0});
  }
  for (const auto& t : records_) {  // a retest's pairs alone: evidence about its run
    if (t.retest_of < 0) continue;
    for (auto& run : runs) {
      if (static_cast<std::int32_t>(run.index) == t.retest_of) {
        run.alone.insert(run.alone.end(), t.retest.begin(), t.retest.end());
        run.parts.insert(run.parts.end(), t.retest_parts.begin(), t.retest_parts.end());
        run.retested = run.retested || t.retest_alpha > 0;  // the model judged its parts
        run.alpha = std::max(run.alpha, t.retest_alpha);
        run.alpha_runs = std::max(run.alpha_runs, t.retest_alpha_runs);
      }
    }
  }
  stats::job_verdict v = stats::fold(runs, node_of_, uplinks_, nics_);
  stats::add_config(v, config_);
  // why: what the hosts and the ports counted while the runs ran (retests are the pairs alone)
  std::vector<stats::run_evidence> evidence;
  for (const auto& r : records_) {
    if (r.bw && r.retest_of < 0) evidence.push_back({r.index, r.host, r.ports});
  }
  stats::explain(v, evidence, ranks_);
  return v;
}

void ledger::write_verdict(const stats::job_verdict& v, bool complete, const std::string& status) {
  if (file_) file_->write_verdict(v, io::verdict_json(v, ranks_, verdict_ctx_));
  if (verdict_path_.empty()) return;
  io::verdict_context ctx = verdict_ctx_;
  ctx.complete = complete;
  ctx.ended = status;
  io::write_text_file(verdict_path_, io::verdict_json(v, ranks_, ctx));
}

stats::health ledger::health() const {
  std::lock_guard lock(mu_);
  return health_;
}

std::string ledger::finish(bool complete, const std::string& status) {
  std::lock_guard lock(mu_);
  for (auto p : std::set<pattern_kind>(dirty_)) derive(p);
  std::string text = contention();
  std::string lines;
  if (o_.mode == mode_kind::bw) {
    const stats::job_verdict v = judge();
    health_ = v.status;
    for (const auto& l : io::verdict_lines(v, ranks_, verdict_ctx_)) lines += l + "\n";
    write_verdict(v, complete, status);
  }
  if (file_) file_->finish(complete, status);
  finished_ = true;
  return text + lines;
}

void ledger::abandon(const std::string& status) noexcept {
  std::lock_guard lock(mu_);
  if (finished_ || (!file_ && verdict_path_.empty())) return;
  // the first failure is the cause; later ones only refresh what the finished runs derive
  const bool first = !abandoned_;
  abandoned_ = true;
  try {
    for (auto p : std::set<pattern_kind>(dirty_)) derive(p);
    (void)contention();
    // the job failed: what its finished runs showed, and how it ended
    if (first && o_.mode == mode_kind::bw) {
      stats::job_verdict v = judge();
      v.status = stats::health::failed;
      write_verdict(v, false, status);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "rdmamesh: error: rank 0: could not write the derived groups or the verdict: {}\n", e.what());
  }
  if (!file_) return;
  try {
    if (first)
      file_->finish(false, status);
    else
      file_->flush();
  } catch (const std::exception& e) {
    fmt::print(stderr, "rdmamesh: error: rank 0: could not mark {} incomplete: {}\n", file_->path(), e.what());
  }
}

}  // namespace rdmamesh::app
