// The run configuration: everything the flags say, validated, in one plain struct that the
// later layers (plan, fabric, engine, io) read and never write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rdmamesh {

enum class op_kind : std::uint8_t { write_imm, write, send, read };
enum class mode_kind : std::uint8_t { bw, lat };
enum class pattern_kind : std::uint8_t { mesh, shift, pairs, incast, spread };
enum class bind_kind : std::uint8_t { nic, core, none };
enum class connect_kind : std::uint8_t { all, round };
enum class rails_kind : std::uint8_t { all, aligned };  // which pairs run on nodes with several NICs

std::string_view to_string(op_kind op);
std::string_view to_string(mode_kind m);
std::string_view to_string(pattern_kind p);
std::string_view to_string(bind_kind b);
std::string_view to_string(connect_kind c);
std::string_view to_string(rails_kind r);

// --retest's false-alarm level, in %, when --false-alarm is not given: one healthy part counted
// in a thousand jobs, what a site draining on the verdict can afford
inline constexpr double default_false_alarm_pct = 0.1;

// True for the patterns whose runs --retest measures again (their slow pairs and parts alone).
constexpr bool goes_to_retest(pattern_kind p) {
  return p == pattern_kind::mesh || p == pattern_kind::shift || p == pattern_kind::spread;
}

// True when the receiver gets a completion per message, so it can count and verify.
constexpr bool receiver_sees_messages(op_kind op) {
  return op == op_kind::write_imm || op == op_kind::send;
}

struct options {
  op_kind op = op_kind::write_imm;
  mode_kind mode = mode_kind::bw;
  std::vector<pattern_kind> patterns{pattern_kind::mesh};  // bw: mesh, lat: pairs
  bool bidirectional = false;                              // --pattern pairs: both directions at once
  int target = -1;                                         // --pattern incast: -1 = every rank in turn
  std::uint32_t partners = 8;                              // --pattern spread: rounds (partners each way)
  std::uint64_t seed = 1;                                  // --pattern spread: its plan's draw
  std::vector<std::uint64_t> sizes{64ULL << 10};           // bytes per message; several = a sweep
  double duration_s = 5.0;                                 // measured seconds (duration mode)
  double warmup_s = 1.0;                                   // unmeasured seconds before the interval
  double interval_s = 0.5;                                 // bandwidth-over-time slot (duration mode); 0: off
  std::uint64_t iters = 0;                                 // messages per pair; 0 = duration mode
  std::uint32_t tx_depth = 128;                            // outstanding WRs per QP
  std::uint32_t rx_depth = 0;                              // receives in the shared receive queue; 0 = auto
  std::uint32_t post_list = 1;                             // WRs chained per ibv_post_send
  std::uint32_t cq_mod = 0;                                // signal every Nth WR; 0 = as perftest
  int inline_size = -1;                                    // -1 = as perftest, capped by the device
  std::uint32_t qps = 1;                                   // RC QPs per peer
  connect_kind connect = connect_kind::all;                // all: every peer up front; round: per round
  int qp_timeout = 18;                                     // RC transport timeout: 4.096 us * 2^N per try
  std::uint64_t peer_buffer = 0;                           // receive bytes per peer; 0 = automatic
  bind_kind bind = bind_kind::nic;                         // where each rank runs
  bool scaling = false;                                    // repeat with 1, 2, 4 ... active ranks per node
  std::string ib_dev;                  // empty or "auto" = the closest ACTIVE device; "all"; or NAME[,NAME...]
  std::vector<std::string> ib_devs;    // -d NAME[,NAME...] split (rail k = the k-th); empty for auto and all
  std::vector<std::string> nic_map;    // --nic-map: local rank i takes entry i mod size (a rail or a name)
  rails_kind rails = rails_kind::all;  // aligned: only pairs whose ranks use the same rail run
  int ib_port = 0;                     // 0 = first ACTIVE port
  int gid_index = -1;                  // -1 = automatic (RoCE v2, IPv4-mapped first)
  std::string output;                  // HDF5 file; empty = none
  bool force = false;                  // overwrite output
  bool verify = false;                 // check every payload
  bool quiet = false;                  // no progress lines on stderr
  bool preflight = false;              // compare the NICs' settings, then stop before any traffic
  bool retest = false;                 // slow pairs of a mesh, shift or spread run go again alone, with control pairs
  double retest_duration_s = 0;        // a retest round's measured seconds; 0: -D, at most 0.3 s
  double timeout_s = 30.0;             // silence after which a peer is named dead or hung
  double slow_pct = 90.0;              // below this % of its cohort's median (and the noise): slow
  double false_alarm_pct = 0;          // the chance of naming any healthy part in a run (--retest: in the job)
  double expect_bps = 0;               // --expect RATE: a floor per pair, bytes/s (0: none)
  double expect_pct = 0;               // --expect PCT%: a floor per pair, % of the job's slowest port rate
  std::string verdict;                 // --verdict FILE: the job's verdict as JSON (default: beside -o)
  std::string topology;                // --topology FILE: Slurm's topology.conf (tree); in Slurm: scontrol's

  bool duration_mode() const { return iters == 0; }
  // A round's measured seconds: -D, or a retest round's (a pair alone has its ports to itself,
  // so a shorter round counts as many messages as a round of the run did)
  double round_seconds(bool retest_round) const {
    if (!retest_round) return duration_s;
    return retest_duration_s > 0 ? retest_duration_s : (duration_s < 0.3 ? duration_s : 0.3);
  }
  // A round's warm-up: --warmup, or a retest round's, at most 0.1 s: a pair alone fills its
  // window within a few round trips, and the retest compares pairs with controls that ramped
  // up alike
  double warmup_seconds(bool retest_round) const { return retest_round && warmup_s > 0.1 ? 0.1 : warmup_s; }
  // Every pattern is shift, pairs, incast or spread: a round needs O(q) QPs per rank, not N-1 peers'.
  bool pairwise() const;
  // The most partners one rank has in any round of the job: what --connect round holds.
  std::uint32_t max_partners(std::uint32_t n_ranks) const;
  std::uint64_t max_size() const;
  // The runs --retest measures again: each mesh, shift or spread run, one per size (at least 1).
  // --false-alarm is the chance of counting any healthy part in the job, so each run's tests take
  // an even share of it.
  std::uint32_t retested_runs() const;
};

// The sizes of -a/--all: 2 B to 8 MiB in powers of two, as perftest's -a.
std::vector<std::uint64_t> all_sizes();

// Each option as (long flag, canonical value): the `#` header, the HDF5 config, and the
// cross-rank comparison all read this one list.
std::vector<std::pair<std::string, std::string>> describe(const options& o);

struct parse_outcome {
  std::optional<options> opts;  // set when the run goes ahead
  int exit_code = 0;            // otherwise exit with this code...
  std::string text;             // ...after printing this (help/version: stdout; error: stderr)
};

// Never throws and never exits: a bad flag becomes exit_code 2 and one line naming the fix.
parse_outcome parse_command_line(int argc, const char* const* argv);

// argv as one shell-quoted line, for the results file.
std::string join_command_line(int argc, const char* const* argv);

}  // namespace rdmamesh
