// The HDF5 results file (schema "rdmamesh/3", documented in docs/results.md). Rank 0 creates it
// before any traffic, so a bad path fails fast; each run is written and flushed as it ends,
// so results measured so far survive a later failure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/io/h5.hpp"
#include "rdmamesh/io/run_record.hpp"
#include "rdmamesh/plan/switches.hpp"
#include "rdmamesh/stats/setup.hpp"
#include "rdmamesh/stats/verdict.hpp"

namespace rdmamesh::io {

// /2 adds provenance, firmware and line rate per rank, units and axis labels; /1 keeps its meaning
inline constexpr const char* schema_name = "rdmamesh/3";

// Throws usage_error when `path` cannot be created: folder missing or not writable, or the
// file exists and `force` is off.
// `flag` names the option in the message (-o, --verdict).
void check_output_path(const std::string& path, bool force, std::string_view flag = "-o");

class results_file {
 public:
  results_file(const std::string& path, bool force, std::uint32_t n_ranks, const std::string& command_line,
               const std::string& job_id = "");
  ~results_file();
  results_file(const results_file&) = delete;
  results_file& operator=(const results_file&) = delete;

  void write_config(const std::vector<std::pair<std::string, std::string>>& config);
  // Root attributes that say where and with what the job ran (library versions, kernel, Slurm).
  void write_provenance(const std::vector<std::pair<std::string, std::string>>& attrs);
  // /ranks; with `setup` and `held` also /ranks/setup_s [N, phases] and what each rank holds.
  void write_ranks(std::span<const fabric::rank_info> ranks, std::span<const stats::setup_times> setup = {},
                   std::span<const stats::setup_resources> held = {});
  // /topology (--topology, or Slurm's): the switches (`switch`, `parent` index or -1, `leaf`),
  // attr `source`; the job's nodes (`node`) with each one's leaf (`node_leaf`, -1: in none).
  void write_topology(const plan::switch_tree& t, std::span<const std::string> nodes,
                      std::span<const std::int32_t> node_leaf);
  void write_run(const options& o, const run_record& r);
  // A mesh run's contention matrix, once the pairwise pattern it is compared with has run.
  void write_contention(const run_record& r);
  // /sweeps/<pattern>: the pattern's runs stacked along the size axis ([S,N,N]).
  void write_sweep(const options& o, pattern_kind p, const std::vector<const run_record*>& runs);
  // /scaling/<pattern>: per size and step, each node's send bandwidth (all, through its port, looped
  // back inside it), its port-side message rate, and each rank's send bandwidth.
  void write_scaling(pattern_kind p, const std::vector<std::uint64_t>& sizes, const std::vector<std::uint32_t>& steps,
                     const std::vector<const run_record*>& runs, std::span<const std::int32_t> node_of,
                     std::uint32_t nodes);
  // /verdict: the job's verdict document (the JSON of --verdict), and its status as the root's
  // `verdict` attribute; rewritten if the job's end writes it again.
  void write_verdict(const stats::job_verdict& v, const std::string& json);
  // `complete` = 1 only when every planned run was written; `status` says why not otherwise.
  void finish(bool complete, const std::string& status);
  void flush();

  const std::string& path() const { return path_; }

 private:
  void write_retest(hid_t run_group, const options& o, const run_record& run);
  void write_retest_parts(hid_t retest_group, const run_record& run);
  void write_outliers(hid_t run_group, const options& o, const run_record& run);

  std::string path_;
  std::uint32_t n_ranks_;
  h5::handle file_;
};

}  // namespace rdmamesh::io
