// Everything rank 0 knows about one run (one pattern at one message size, all its rounds):
// what the console prints and what the results file stores.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/engine/host.hpp"
#include "rdmamesh/fabric/port_counters.hpp"
#include "rdmamesh/stats/false_alarm.hpp"
#include "rdmamesh/stats/histogram.hpp"
#include "rdmamesh/stats/matrix.hpp"
#include "rdmamesh/stats/model_retest.hpp"
#include "rdmamesh/stats/outliers.hpp"
#include "rdmamesh/stats/retest.hpp"

namespace rdmamesh::io {

struct run_record {
  std::uint32_t index = 0;  // /runs/NNNN
  pattern_kind pattern = pattern_kind::mesh;
  std::uint64_t size = 0;
  std::uint32_t rounds = 0;
  std::uint32_t rounds_done = 0;      // rounds that ran, the last maybe cut short
  bool interrupted = false;           // a stop request (SIGTERM/SIGINT) ended the run early
  std::uint32_t active_per_node = 0;  // --scaling: ranks per node active (0: every rank)
  std::vector<std::uint8_t> active;   // 1 per rank that took part
  std::uint32_t cq_mod = 1;           // effective at this size
  std::uint32_t inline_size = 0;      // effective threshold (messages up to it go inline)
  double round_connect_s = -1;        // --connect round: the slowest rank's QP re-targeting, all rounds; -1: all

  std::optional<stats::run_matrices> bw;       // --mode bw
  std::optional<stats::latency_matrices> lat;  // --mode lat
  stats::histogram lat_all;                    // --mode lat: every pair's samples
  stats::square<std::uint8_t> lat_flags;       // --mode lat: 1 where a pair's flow failed
  std::vector<std::string> events;
  std::optional<stats::outlier_report> outliers;  // --mode bw: the smallest causes of slow and failed pairs
  std::vector<std::string> outlier_text;          // their console lines
  stats::false_alarms false_alarms;               // --mode bw: how often a healthy fabric this noisy is named
  std::vector<engine::host_use> host;             // --mode bw: per rank, over its measured intervals
  std::vector<fabric::port_reading> ports;        // each port's counters over the run (one rank per port)

  // --interval: bytes/s per slot, [slots][src][dst], sent and received; empty when off
  std::uint32_t slots = 0;
  double interval_s = 0;
  std::vector<double> tx_bw_t, rx_bw_t;

  // --retest: this run re-ran run `retest_of`'s slow pairs alone (and control pairs); -1 otherwise
  std::int32_t retest_of = -1;
  double round_s = 0;  // a retest's measured seconds a round, sized from its controls (0: the options')
  std::vector<stats::retest_verdict> retest;
  std::size_t retest_controls = 0;
  std::vector<double> retest_controls_pct;          // each control alone: control_pcts
  std::vector<stats::lasting_effect> retest_parts;  // the model's parts alone (judge_model_retest)
  double retest_alpha = 0;                          // the false-alarm level they were counted at
  std::uint32_t retest_alpha_runs = 1;              // the job's level split evenly over this many runs

  // mesh run, when a pairwise pattern (pairs or shift) ran at the same size: mesh / pairwise
  std::optional<stats::square<double>> contention;
  pattern_kind contention_vs = pattern_kind::pairs;

  bool clean() const;  // no failed pair, no mismatch, no event
  // the measured seconds of each round: -D, or the retest's
  double round_seconds(const options& o) const { return round_s > 0 ? round_s : o.round_seconds(retest_of >= 0); }
};

}  // namespace rdmamesh::io
