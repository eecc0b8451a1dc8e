// The console report rank 0 prints: `#` header lines a person reads and a script can skip,
// then one aligned row per run as it finishes, the matrix of single-size runs, and the
// failures and events of each run right under it.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/io/run_record.hpp"
#include "rdmamesh/stats/matrix.hpp"
#include "rdmamesh/stats/setup.hpp"

namespace rdmamesh::io {

// Header: version, ranks and hosts, device/port/GID/MTU (per rank when they differ), options.
std::string format_header(const options& o, std::span<const fabric::rank_info> ranks, std::uint32_t inline_size);

// Column titles for the rows of the run's mode.
std::string format_table_header(const options& o);

// One row, then (single-size runs) the matrix, then failed pairs, verify outcome and events.
std::string format_run(const options& o, const run_record& r);

// The run's causes under its table, one line each, parallel to r.outliers->found: `# slow:
// rank 5 (node07, mlx5_1): its sends at 41 % and its receives at 43 % of the median; 14 slow
// pair(s), 2 fine`, `# below --expect: ...`, `# failed: ...` (printed by format_run already).
// `uplinks`: by switch index (--topology), the name an uplink cause is printed with.
std::vector<std::string> outlier_lines(const run_record& r, std::span<const fabric::rank_info> ranks,
                                       std::span<const std::string> uplinks = {});
// "NIC rxe_node2_1 (rail 1) of node2 (ranks 3)": a NIC of a node with several, by its ranks' records.
std::string nic_subject(std::int32_t node, std::int32_t rail, std::span<const fabric::rank_info> ranks);
// "leaf1-spine (node1,node2)", and with two subtrees "... (or leaf2-spine (...), the same pairs
// the other way)": an uplink cause's name, from --topology's names by switch.
std::string uplink_subject(std::int32_t sw, std::int32_t same, std::span<const std::string> uplinks);
std::string cause_line(const stats::outlier& o, const stats::outlier_report& rep,
                       std::span<const fabric::rank_info> ranks, std::span<const std::string> uplinks = {});
// What the run's pairs were judged against: `# healthy: no pair beyond the run's noise (...)`
// when nothing is named, `# judged: ...` under the causes, `# not judged: ...` when too few
// pairs measured the noise.
std::string judged_line(const stats::outlier_report& rep);
// How often a healthy fabric as noisy as the run has a cause named (stats/false_alarm.hpp): the
// run's stated false-alarm level. Empty where nothing was drawn (a run that could not be judged).
std::string false_alarm_line(const stats::false_alarms& fa);
// Where ranks waited for a CPU a noticeable share of their measured time: how much, and which
// ranks. Empty when none did, or when the kernel keeps no schedstat.
std::string host_line(const run_record& r);
// One line per port whose error, retransmit or congestion counters moved during the run.
std::vector<std::string> port_lines(const run_record& r, std::span<const fabric::rank_info> ranks);

// Duration runs: one `# short window:` line per rank that measured less than 90 % of the
// interval, e.g. `# short window: rank 1 (n2, rxe0) measured 0 s of the 1 s interval (no CPU
// when it opened: an oversubscribed node or a stopped rank); its figures are NaN`.
std::vector<std::string> window_lines(const options& o, const run_record& r, std::span<const fabric::rank_info> ranks);

// Where setup went: `# setup [s] median/max over ranks: placement 0.01/0.02 … barrier …;
// slowest rank 3 (node07) 0.51 s` and a `# resources:` line (QPs, CQ entries, registered
// bytes per rank and per node, whose ranks share its NIC; `shared_rx`: one receive region for
// every peer, so the registered bytes do not grow with N).
std::string format_setup(const stats::setup_summary& s, const stats::resource_peaks& held,
                         std::span<const fabric::rank_info> ranks, bool shared_rx = false);

// --retest: one `# retest:` line per slow pair of the retested run, e.g. `# retest of run 0:
// rank 2 (n3, rxe0) -> rank 0 (n1, rxe0) alone at 31 % of its controls (24–40 %; 8 control(s);
// …), p 2e-07 were it at 90 %: still slow alone (its link or NIC)`. Empty for other runs.
std::vector<std::string> retest_lines(const run_record& r, std::span<const fabric::rank_info> ranks, double slow_pct);
// One line per part the model measured alone: its pairs alone against the controls, its interval,
// its p at --slow, and what the model decided (counted, cleared, undecided). An uplink by its
// name in `uplink_names` (by switch), its way up or down.
std::vector<std::string> retest_part_lines(const run_record& r, std::span<const fabric::rank_info> ranks,
                                           double slow_pct, std::span<const std::string> uplink_names = {});

// One rank's placement: host, local rank, core, CPUs, who bound it, NUMA node (and device).
std::string format_placement(std::size_t rank, const fabric::rank_info& r, bool with_device);

// An N x N matrix of bytes/s printed in Gb/s; "-" on the diagonal and for NaN.
std::string format_matrix(const stats::square<double>& bw, const std::string& title);
// The same for a plain value (latency in microseconds, ratios) with `decimals` places.
std::string format_values(const stats::square<double>& m, const std::string& title, int decimals);

// --scaling: the step's mean send bandwidth per node and per active rank.
std::string format_scaling(const run_record& r, std::span<const std::int32_t> node_of, std::uint32_t nodes);

// The contention line of a mesh run: per pair, mesh bandwidth over the pairwise figure.
std::string format_contention(const run_record& mesh);

// Largest N whose matrix is printed; bigger meshes are summarized (the file has the matrix).
inline constexpr std::uint32_t max_printed_matrix = 32;

}  // namespace rdmamesh::io
