// The job's verdict for people and for machines: `# verdict:` lines on the console, one JSON
// document (schema rdmamesh-verdict/2, docs/verdict.md) with every cause, its figures and
// runs, and the nodes a health job drains with the reason it gives Slurm.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/stats/verdict.hpp"

namespace rdmamesh::io {

// What the document says about the job besides its causes.
struct verdict_context {
  std::string results;  // the HDF5 file ("" without -o)
  std::string command_line;
  std::string job_id;                // the job's key: the results file's root attribute, analysis/history's key
  std::string ended;                 // the file's status: "ok", "finished with failures", "incomplete: ..."
  bool complete = false;             // every planned run was measured
  double expect_bps = 0;             // --expect, resolved (0: none)
  std::string expect_how;            // how it was derived, e.g. "--expect 80% of the slowest port, 100 Gb/s"
  std::vector<std::string> uplinks;  // by switch index (--topology): "leaf1-spine (node1,node2)"
  double false_alarm_pct = 0;        // --false-alarm: the level every run and its retest are judged at
};

// One sentence per cause: who, how slow, in how many runs.
std::string cause_sentence(const stats::folded_cause& c, const stats::job_verdict& v,
                           std::span<const fabric::rank_info> ranks, double expect_bps,
                           std::span<const std::string> uplinks = {});

// The console's `# verdict:` block.
std::vector<std::string> verdict_lines(const stats::job_verdict& v, std::span<const fabric::rank_info> ranks,
                                       const verdict_context& ctx);

struct drain {
  std::string node;
  std::string reason;  // for `scontrol update ... Reason=`, one line, "rdmamesh: ..."
};
// The nodes the counted causes point at: a node, or the node of a rank; not links, failed
// pairs (either end may be at fault), a switch's uplink (no node of it is at fault) or the
// fabric as a whole.
// "config: NIC mlx5_2 of node7: PCIe 16 GT/s x8, where 15 of 16 NICs have 16 GT/s x16"
std::string config_sentence(const stats::config_finding& f);

std::vector<drain> drains(const stats::job_verdict& v, std::span<const fabric::rank_info> ranks, double expect_bps);

// The JSON document, pretty-printed.
std::string verdict_json(const stats::job_verdict& v, std::span<const fabric::rank_info> ranks,
                         const verdict_context& ctx);

// Writes `text` to `path` through a temporary file and a rename, so a reader never sees half of
// it. Throws io_error naming the path.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace rdmamesh::io
