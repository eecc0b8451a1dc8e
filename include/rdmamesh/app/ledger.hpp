// Rank 0's account of the job: the runs measured so far and the groups derived from them
// (sweeps, scaling, contention). Whatever ends the job (its last run, a signal, a silent peer,
// the watchdog) closes it here, from whichever thread, so the file always says how it ended
// and keeps every finished run together with what those runs can derive: a sweep cut at
// 8 MiB still has its 2 B ... 4 MiB curve.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/io/results_file.hpp"
#include "rdmamesh/io/run_record.hpp"
#include "rdmamesh/io/verdict.hpp"
#include "rdmamesh/stats/verdict.hpp"

namespace rdmamesh::app {

class ledger {
 public:
  // `file` may be null (no -o): the ledger then only keeps records for the console.
  ledger(const options& o, std::vector<std::uint32_t> steps, std::vector<std::int32_t> node_of, std::uint32_t nodes,
         io::results_file* file);
  // Where the job's verdict goes (JSON; "" for none), what it says of the job, and whose
  // names it uses. Rank 0 only.
  void set_verdict(std::string path, io::verdict_context ctx, std::vector<fabric::rank_info> ranks,
                   std::vector<stats::config_finding> config = {}, std::vector<stats::switch_group> uplinks = {},
                   std::vector<stats::nic_group> nics = {});

  void add(io::run_record r);          // writes the run
  void close_pattern(pattern_kind p);  // every run of `p` is in: its sweep or scaling group is final
  // The normal end: contention of the mesh runs and the verdict (returned as console text),
  // then the status; the verdict's JSON is written.
  std::string finish(bool complete, const std::string& status);
  stats::health health() const;  // the verdict's, once finish() ran
  // Any other end, from any thread: derived groups of the finished runs, then `status` (the
  // first one given: the cause). Does nothing once finish() ran; never throws (it runs on the
  // way out of a failing process).
  void abandon(const std::string& status) noexcept;

  std::size_t runs() const;
  std::optional<io::run_record> last() const;  // a copy of the latest run, if any

 private:
  void derive(pattern_kind p);  // (re)writes p's sweep or scaling group from its finished runs
  std::vector<const io::run_record*> finished(pattern_kind p) const;
  std::string contention();
  stats::job_verdict judge() const;
  void write_verdict(const stats::job_verdict& v, bool complete, const std::string& status);

  const options& o_;
  std::vector<std::uint32_t> steps_;
  std::vector<std::int32_t> node_of_;
  std::uint32_t nodes_;
  io::results_file* file_;
  mutable std::mutex mu_;
  std::vector<io::run_record> records_;
  std::set<pattern_kind> dirty_;  // patterns with runs their derived group does not hold yet
  bool finished_ = false;
  bool abandoned_ = false;
  std::string verdict_path_;
  io::verdict_context verdict_ctx_;
  std::vector<stats::switch_group> uplinks_;   // --topology: the verdict forgets the pairs a counted uplink explains
  std::vector<stats::nic_group> nics_;         // -d all or a list: a node's NICs, each judged on its own
  std::vector<stats::config_finding> config_;  // NICs set up unlike the others: counted causes
  std::vector<fabric::rank_info> ranks_;
  stats::health health_ = stats::health::healthy;
};

}  // namespace rdmamesh::app
