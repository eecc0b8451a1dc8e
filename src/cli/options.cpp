// Flag parsing with CLI11. Sizes are taken as strings and converted by parse_size so that
// every size flag accepts and rejects exactly the same spellings.
#include "rdmamesh/cli/options.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "rdmamesh/util/error.hpp"
#include "rdmamesh/util/units.hpp"
#include "rdmamesh/version.hpp"

namespace rdmamesh {

std::string_view to_string(op_kind op) {
  switch (op) {
    case op_kind::write_imm: return "write_imm";
    case op_kind::write: return "write";
    case op_kind::send: return "send";
    case op_kind::read: return "read";
  }
  return "?";
}

std::string_view to_string(mode_kind m) {
  return m == mode_kind::bw ? "bw" : "lat";
}

std::string_view to_string(pattern_kind p) {
  switch (p) {
    case pattern_kind::mesh: return "mesh";
    case pattern_kind::shift: return "shift";
    case pattern_kind::pairs: return "pairs";
    case pattern_kind::incast: return "incast";
    case pattern_kind::spread: return "spread";
  }
  return "?";
}

std::string_view to_string(bind_kind b) {
  switch (b) {
    case bind_kind::nic: return "nic";
    case bind_kind::core: return "core";
    case bind_kind::none: return "none";
  }
  return "?";
}

std::uint64_t options::max_size() const {
  return sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
}

std::string_view to_string(connect_kind c) {
  return c == connect_kind::round ? "round" : "all";
}

std::string_view to_string(rails_kind r) {
  return r == rails_kind::aligned ? "aligned" : "all";
}

bool options::pairwise() const {
  return std::none_of(patterns.begin(), patterns.end(), [](pattern_kind p) { return p == pattern_kind::mesh; });
}

std::uint32_t options::retested_runs() const {
  const auto retested = std::count_if(patterns.begin(), patterns.end(), goes_to_retest);
  return static_cast<std::uint32_t>(std::max<std::size_t>(static_cast<std::size_t>(retested) * sizes.size(), 1));
}

std::uint32_t options::max_partners(std::uint32_t n_ranks) const {
  const std::uint32_t peers = n_ranks > 0 ? n_ranks - 1 : 0;
  std::uint32_t most = 0;
  for (auto p : patterns) {
    switch (p) {
      case pattern_kind::mesh:
      case pattern_kind::incast: most = std::max(most, peers); break;  // the target hears from all
      case pattern_kind::shift: most = std::max(most, std::min<std::uint32_t>(2, peers)); break;  // r+d and r-d
      case pattern_kind::pairs: most = std::max(most, std::min<std::uint32_t>(1, peers)); break;
      case pattern_kind::spread: most = std::max(most, std::min<std::uint32_t>(2, peers)); break;  // one each way
    }
  }
  return most;
}

std::vector<std::uint64_t> all_sizes() {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = 2; s <= (8ULL << 20); s *= 2) out.push_back(s);
  return out;
}

std::vector<std::pair<std::string, std::string>> describe(const options& o) {
  auto num = [](double v) { return fmt::format("{:g}", v); };
  std::vector<std::string> sizes;
  for (auto s : o.sizes) sizes.push_back(format_size(s));
  std::vector<std::string_view> patterns;
  for (auto p : o.patterns) patterns.push_back(to_string(p));
  const bool spread = std::ranges::find(o.patterns, pattern_kind::spread) != o.patterns.end();
  return {
      {"op", std::string(to_string(o.op))},
      {"mode", std::string(to_string(o.mode))},
      {"pattern", fmt::format("{}", fmt::join(patterns, ","))},
      {"bidirectional", o.bidirectional ? "yes" : "no"},
      {"target", o.target >= 0 ? fmt::format("{}", o.target) : "all"},
      {"partners", spread ? fmt::format("{}", o.partners) : "-"},
      {"seed", spread ? fmt::format("{}", o.seed) : "-"},
      {"size", fmt::format("{}", fmt::join(sizes, ","))},
      {"duration", o.duration_mode() ? num(o.duration_s) : "-"},
      {"warmup", o.duration_mode() ? num(o.warmup_s) : "-"},
      {"interval", o.duration_mode() && o.mode == mode_kind::bw ? num(o.interval_s) : "-"},
      {"iters", o.duration_mode() ? "-" : fmt::format("{}", o.iters)},
      {"tx-depth", fmt::format("{}", o.tx_depth)},
      {"rx-depth", o.rx_depth ? fmt::format("{}", o.rx_depth) : "auto"},
      {"post-list", fmt::format("{}", o.post_list)},
      {"cq-mod", o.cq_mod ? fmt::format("{}", o.cq_mod) : "auto"},
      {"inline-size", o.inline_size >= 0 ? fmt::format("{}", o.inline_size) : "auto"},
      {"qps", fmt::format("{}", o.qps)},
      {"connect", std::string(to_string(o.connect))},
      {"qp-timeout", fmt::format("{}", o.qp_timeout)},
      {"peer-buffer", o.peer_buffer ? format_size(o.peer_buffer) : "auto"},
      {"bind", std::string(to_string(o.bind))},
      {"scaling", o.scaling ? "yes" : "no"},
      {"ib-dev", o.ib_dev.empty() ? "auto" : o.ib_dev},
      {"nic-map", o.nic_map.empty() ? "-" : fmt::format("{}", fmt::join(o.nic_map, ","))},
      {"rails", std::string(to_string(o.rails))},
      {"ib-port", o.ib_port ? fmt::format("{}", o.ib_port) : "auto"},
      {"gid-index", o.gid_index >= 0 ? fmt::format("{}", o.gid_index) : "auto"},
      {"verify", o.verify ? "yes" : "no"},
      {"quiet", o.quiet ? "yes" : "no"},
      {"retest", o.retest ? "yes" : "no"},
      {"retest-duration", o.retest && o.duration_mode() ? num(o.round_seconds(true)) : "-"},
      {"false-alarm", o.false_alarm_pct > 0 ? num(o.false_alarm_pct) : "-"},
      {"preflight", o.preflight ? "yes" : "no"},
      {"timeout", num(o.timeout_s)},
      {"slow", num(o.slow_pct)},
      {"expect", o.expect_pct > 0   ? fmt::format("{:g}%", o.expect_pct)
                 : o.expect_bps > 0 ? format_rate(o.expect_bps)
                                    : "-"},
      {"verdict", o.verdict.empty() ? "-" : o.verdict},
      {"topology", o.topology.empty() ? "-" : o.topology},
      {"output", o.output.empty() ? "-" : o.output},
      {"force", o.force ? "yes" : "no"},
  };
}

std::string join_command_line(int argc, const char* const* argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string_view a = argv[i];
    if (i) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_./=:,+@%") == std::string_view::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = s.find(',', pos);
    out.push_back(s.substr(pos, comma - pos));
    if (comma == std::string::npos) return out;
    pos = comma + 1;
  }
}

std::vector<pattern_kind> parse_patterns(const std::string& text) {
  std::vector<pattern_kind> out;
  for (const auto& name : split_commas(text)) {
    pattern_kind p{};
    if (name == "mesh") {
      p = pattern_kind::mesh;
    } else if (name == "shift") {
      p = pattern_kind::shift;
    } else if (name == "pairs") {
      p = pattern_kind::pairs;
    } else if (name == "incast") {
      p = pattern_kind::incast;
    } else if (name == "spread") {
      p = pattern_kind::spread;
    } else {
      throw usage_error(
          fmt::format("unknown --pattern '{}': use mesh, shift, pairs, incast or spread (a comma list runs "
                      "several, e.g. mesh,pairs)",
                      name));
    }
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

void validate(const options& o) {
  for (auto s : o.sizes) {
    if (s == 0) throw usage_error("--size must be at least 1 byte, e.g. -s 64K");
    if (s > (1ULL << 31)) throw usage_error("--size is at most 2G (one work request's length is 32 bits)");
  }
  if (o.tx_depth == 0) throw usage_error("--tx-depth must be at least 1, e.g. -t 128");
  if (o.qps == 0) throw usage_error("--qps must be at least 1");
  if (o.post_list == 0) throw usage_error("--post-list must be at least 1");
  if (o.post_list > o.tx_depth) {
    throw usage_error(
        fmt::format("--post-list {} exceeds --tx-depth {}; a list must fit in the window: lower -l or "
                    "raise -t",
                    o.post_list, o.tx_depth));
  }
  if (o.inline_size < -1) throw usage_error("--inline-size must be 0 or more");
  if (o.duration_mode() && !(o.duration_s > 0 && std::isfinite(o.duration_s))) {
    throw usage_error("--duration must be a positive number of seconds, e.g. -D 2");
  }
  if (!(o.warmup_s >= 0 && std::isfinite(o.warmup_s))) {
    throw usage_error("--warmup must be zero or a positive number of seconds");
  }
  // a sample costs a pass over the sessions: 10 ms keeps it far from the hot loop's cost
  if (!(o.interval_s == 0 || (o.interval_s >= 0.01 && std::isfinite(o.interval_s)))) {
    throw usage_error("--interval must be 0 (off) or at least 0.01 seconds, e.g. --interval 0.5");
  }
  if (!(o.slow_pct > 0 && o.slow_pct < 100)) {
    throw usage_error("--slow must be a percentage between 0 and 100 (exclusive), e.g. --slow 90");
  }
  if (o.false_alarm_pct != 0 && !(o.false_alarm_pct > 0 && o.false_alarm_pct < 100)) {
    throw usage_error("--false-alarm must be a percentage between 0 and 100 (exclusive), e.g. --false-alarm 0.1");
  }
  if (!(o.timeout_s > 0 && std::isfinite(o.timeout_s))) {
    throw usage_error("--timeout must be a positive number of seconds");
  }
  if (o.peer_buffer != 0 && o.peer_buffer < o.max_size()) {
    throw usage_error(fmt::format("--size {} does not fit in --peer-buffer {}; raise --peer-buffer or lower --size",
                                  format_size(o.max_size()), format_size(o.peer_buffer)));
  }
  const bool pairs = std::find(o.patterns.begin(), o.patterns.end(), pattern_kind::pairs) != o.patterns.end();
  const bool incast = std::find(o.patterns.begin(), o.patterns.end(), pattern_kind::incast) != o.patterns.end();
  if (o.bidirectional && !pairs) {
    throw usage_error("-b/--bidirectional applies to --pattern pairs (mesh runs every direction at once already)");
  }
  if (o.target >= 0 && !incast) throw usage_error("--target applies to --pattern incast");
  if (o.preflight && o.mode == mode_kind::lat) {
    throw usage_error("--preflight is a check of its own: leave out --mode lat (it runs no traffic)");
  }
  if (o.retest && o.mode == mode_kind::lat) {
    throw usage_error("--retest applies to --mode bw (it re-runs slow pairs of a mesh, shift or spread run)");
  }
  if (o.retest_duration_s != 0 && !(o.retest_duration_s > 0 && std::isfinite(o.retest_duration_s))) {
    throw usage_error("--retest-duration must be a positive number of seconds, e.g. --retest-duration 1");
  }
  if (o.retest_duration_s > 0 && !(o.retest && o.duration_mode())) {
    throw usage_error("--retest-duration applies to --retest in duration mode (-D): add --retest, or leave out -n");
  }
  if (o.retest && o.scaling) {
    throw usage_error("--retest and --scaling do not mix: a step with fewer active ranks is slower by design");
  }
  if (o.scaling && o.mode == mode_kind::lat) {
    throw usage_error("--scaling applies to --mode bw (it draws bandwidth against active ranks per node)");
  }
  if (o.scaling && o.target >= 0) {
    throw usage_error("--target does not combine with --scaling: the target would not be active at every step");
  }
  if (o.mode == mode_kind::lat && o.post_list != 1) {
    throw usage_error("--post-list applies to --mode bw (a ping-pong has one message in flight)");
  }
  if (o.mode == mode_kind::lat && (o.expect_bps > 0 || o.expect_pct > 0)) {
    throw usage_error("--expect applies to --mode bw (a floor on each pair's bandwidth)");
  }
  if (!o.verdict.empty() && o.verdict == o.output) {
    throw usage_error(
        "--verdict names the same file as --output; give the verdict its own path (e.g. job.verdict.json)");
  }
}

// What the flags say before conversion: sizes and names as text, and the options whose
// presence matters as well as their value.
struct flag_text {
  std::string size = "64K";
  std::string sizes;
  std::string peer_buffer;
  std::string op = "write_imm";
  std::string mode = "bw";
  std::string pattern;
  std::string bind = "nic";
  std::string connect;
  std::string expect;
  std::string nic_map;
  std::string rails = "all";
  bool all = false;
  CLI::Option* iters = nullptr;
  CLI::Option* rx_depth = nullptr;
  CLI::Option* partners = nullptr;
  CLI::Option* seed = nullptr;
};

// What runs: op, mode, patterns, sizes, and how long.
void add_traffic_flags(CLI::App& app, options& o, flag_text& t) {
  app.add_option("--op", t.op, "write_imm (receiver counts each message), write (one-sided), send, read")
      ->check(CLI::IsMember({"write_imm", "write", "send", "read"}))
      ->capture_default_str();
  app.add_option("--mode", t.mode, "bw: bandwidth and message rate; lat: ping-pong latency")
      ->check(CLI::IsMember({"bw", "lat"}))
      ->capture_default_str();
  app.add_option("--pattern", t.pattern,
                 "mesh, shift, pairs, incast, spread (a few partners each, for large fabrics), or a comma list; "
                 "default mesh (bw), pairs (lat). mesh and pairs together also give each pair's contention ratio");
  app.add_flag("-b,--bidirectional", o.bidirectional, "--pattern pairs: both directions of a pair at once");
  app.add_option("--target", o.target, "--pattern incast: the one receiving rank (default: every rank in turn)")
      ->check(CLI::NonNegativeNumber);
  t.partners = app.add_option("--partners", o.partners,
                              "--pattern spread: its rounds, each rank meeting one new partner each way per round, "
                              "spread over other leaves (--topology) or nodes; the check's length whatever N is")
                   ->capture_default_str();
  t.seed = app.add_option("--seed", o.seed, "--pattern spread: which partners (recorded; the same seed, the same plan)")
               ->capture_default_str();
  auto* size_opt = app.add_option("-s,--size", t.size, "Message size in bytes; units K, M, G (powers of 1024)")
                       ->capture_default_str();
  auto* sizes_opt = app.add_option("--sizes", t.sizes, "Comma list of sizes for one sweep, e.g. 64,4K,1M");
  auto* all_opt = app.add_flag("-a,--all", t.all, "Sweep 2 B ... 8 MiB in powers of two");
  size_opt->excludes(sizes_opt)->excludes(all_opt);
  sizes_opt->excludes(all_opt);
  auto* dur = app.add_option("-D,--duration", o.duration_s, "Measured seconds per round")->capture_default_str();
  t.iters = app.add_option("-n,--iters", o.iters, "Messages per ordered pair instead of a duration");
  dur->excludes(t.iters);
  app.add_option("--warmup", o.warmup_s, "Unmeasured seconds before each duration round")->capture_default_str();
  app.add_option("--interval", o.interval_s,
                 "Duration rounds: sample every pair's bandwidth at this period into /runs/NNNN/tx_bw_t (0: off)")
      ->capture_default_str();
}

// How each QP is driven: perftest's knobs, QPs per peer, connections.
void add_datapath_flags(CLI::App& app, options& o, flag_text& t) {
  app.add_option("-t,--tx-depth", o.tx_depth, "Outstanding work requests per QP")->capture_default_str();
  t.rx_depth = app.add_option("-r,--rx-depth", o.rx_depth,
                              "Receives in the rank's shared receive queue (default: 512, or a window per sending "
                              "QP if more, up to 16384)");
  app.add_option("-l,--post-list", o.post_list, "Work requests chained per ibv_post_send")->capture_default_str();
  app.add_option("-Q,--cq-mod", o.cq_mod, "Signal every Nth work request (default 100, 1 above 8K, as perftest)")
      ->check(CLI::PositiveNumber);
  app.add_option(
      "-I,--inline-size", o.inline_size,
      "Inline messages up to this size (default as perftest: none in bw; 220 for writes, 236 for send in lat)");
  app.add_option("-q,--qps", o.qps, "RC QPs per peer; messages spread over them")->capture_default_str();
  app.add_option("--connect", t.connect,
                 "all: every peer's QPs up front (default with mesh); round: only the current round's partners, "
                 "re-targeted between rounds (default when every pattern is shift, pairs or incast)")
      ->check(CLI::IsMember({"all", "round"}));
  app.add_option("--qp-timeout", o.qp_timeout, "RC transport timeout exponent: 4.096 us * 2^N per retry (7 retries)")
      ->check(CLI::Range(1, 31))
      ->capture_default_str();
  app.add_option("--peer-buffer", t.peer_buffer,
                 "Receive memory per peer (slots rotate inside it); default scales with N");
}

// Where each rank runs and which NIC, port and GID it uses.
void add_placement_flags(CLI::App& app, options& o, flag_text& t) {
  app.add_option("--bind", t.bind,
                 "Pin each rank: nic (cores near its NIC first), core (cores in order) or none; a launcher's "
                 "binding is kept")
      ->check(CLI::IsMember({"nic", "core", "none"}))
      ->capture_default_str();
  app.add_flag("--scaling", o.scaling, "Repeat every run with 1, 2, 4 ... ranks per node active (one launch)");
  app.add_option("-d,--ib-dev", o.ib_dev,
                 "RDMA device(s): auto (per rank the ACTIVE device closest to its core), a name, a list A,B (each "
                 "rank takes one, every one gets a rank; rail k = the k-th) or all (every device, in name order)")
      ->option_text("DEV");
  app.add_option("--nic-map", t.nic_map,
                 "Which NIC each rank of a node drives: local rank i takes entry i mod the list's length, a rail "
                 "number (position in -d's list) or a device name, e.g. --nic-map 0,0,1,1")
      ->option_text("LIST");
  app.add_option("--rails", t.rails,
                 "With several NICs per node: all (every pair, across rails too) or aligned (a rank on rail k "
                 "only talks to rail k of the other nodes, as on a rail-optimized fabric; other pairs are not run)")
      ->check(CLI::IsMember({"all", "aligned"}))
      ->capture_default_str();
  app.add_option("-i,--ib-port", o.ib_port, "Device port; default: the first ACTIVE port")->check(CLI::Range(1, 255));
  app.add_option("-x,--gid-index", o.gid_index, "GID index (RoCE); default: a RoCE v2 IPv4-mapped GID")
      ->check(CLI::Range(0, 65535));
}

// What comes out, what is judged, and how failures are told apart from slowness.
void add_output_flags(CLI::App& app, options& o, flag_text& t) {
  app.add_option("-o,--output", o.output, "Write results to this HDF5 file");
  app.add_flag("--force", o.force, "Overwrite the output file if it exists");
  app.add_option("--slow", o.slow_pct,
                 "A part (rank, NIC, node, link, uplink) is slow when its pairs fall below PCT % of their "
                 "cohort's median (pairs of the same class) and beyond the run's noise")
      ->option_text("PCT")
      ->capture_default_str();
  app.add_option("--expect", t.expect,
                 "A floor per pair: a rate (180Gb/s, 25GB/s) or a percentage of the port's rate (80%); pairs below "
                 "it are named even when every pair is");
  app.add_option("--verdict", o.verdict,
                 "Write the job's verdict (healthy, degraded, failed; the causes; nodes to drain) as JSON to this "
                 "file (default: beside --output, FILE.verdict.json)");
  app.add_option("--topology", o.topology,
                 "The fabric's switches in Slurm's topology.conf form (tree: SwitchName=... Nodes=... / Switches=...): "
                 "a switch's uplink is then named where it explains the slow pairs better than nodes do (default in "
                 "a Slurm job: scontrol show topology, where Slurm has one)")
      ->option_text("FILE");
  app.add_flag("--preflight", o.preflight,
               "Compare every NIC of the job (link layer, MTU, rate, PCIe link, firmware) and each NIC's PCIe links "
               "to the root port, print and record what differs from most NICs or trained below both its ends, and "
               "stop before any traffic: exit 0 when nothing does, 5 when something does (the verdict drains it)");
  app.add_flag("--quiet", o.quiet, "No progress lines on stderr (one per run when a job has several)");
  app.add_flag(
      "--retest", o.retest,
      "After a mesh, shift or spread run with slow pairs, run each alone (with healthy control pairs), and every "
      "pair of a rank, NIC or node the run named: still slow alone means the link or NIC, fine alone means "
      "contention, undecided (between the two bounds) leaves the run's reading standing");
  app.add_option("--false-alarm", o.false_alarm_pct,
                 "The verdict's false-alarm level (docs/verdict-model.md): the chance, in %, that a run names any "
                 "healthy part (each run's model tests every part, Holm's step-down over them all), and with "
                 "--retest that the job counts any healthy one from its pairs alone (default 0.1)")
      ->option_text("PCT");
  app.add_option("--retest-duration", o.retest_duration_s,
                 "Measured seconds of each retest round (default: -D, at most 0.3 s: a pair alone has its ports "
                 "to itself; longer, up to -D, where the control pairs' rates in the run would leave a pair "
                 "at the retest's bound fewer than ten messages), after the warm-up, at most 0.1 s");
  app.add_flag("--verify", o.verify, "Fill every payload with a (src, dst, seq) pattern and check it on arrival");
  app.add_option("--timeout", o.timeout_s,
                 "Seconds without any sign of life from a peer before it is named dead or hung (not a bound on "
                 "how long a round may run)")
      ->capture_default_str();
}

// The parsed text into options; then the rules that span several flags.
void apply(const flag_text& t, options& o) {
  o.op = t.op == "write"  ? op_kind::write
         : t.op == "send" ? op_kind::send
         : t.op == "read" ? op_kind::read
                          : op_kind::write_imm;
  o.mode = t.mode == "lat" ? mode_kind::lat : mode_kind::bw;
  o.bind = t.bind == "core" ? bind_kind::core : t.bind == "none" ? bind_kind::none : bind_kind::nic;
  if (o.ib_dev == "auto") o.ib_dev.clear();
  if (!o.ib_dev.empty() && o.ib_dev != "all") {
    o.ib_devs = split_commas(o.ib_dev);
    if (std::ranges::any_of(o.ib_devs, [](const auto& n) { return n.empty() || n == "all" || n == "auto"; })) {
      throw usage_error(
          fmt::format("-d {}: give auto, all, or device names separated by commas (-d mlx5_0,mlx5_1)", o.ib_dev));
    }
  }
  if (!t.nic_map.empty()) o.nic_map = split_commas(t.nic_map);
  o.rails = t.rails == "aligned" ? rails_kind::aligned : rails_kind::all;
  if (!t.pattern.empty()) {
    o.patterns = parse_patterns(t.pattern);
  } else {
    o.patterns = {o.mode == mode_kind::lat ? pattern_kind::pairs : pattern_kind::mesh};
  }
  if (t.all) {
    o.sizes = all_sizes();
  } else if (!t.sizes.empty()) {
    o.sizes.clear();
    for (const auto& s : split_commas(t.sizes)) o.sizes.push_back(parse_size(s, "--sizes entry"));
  } else {
    o.sizes = {parse_size(t.size, "--size")};
  }
  // pairwise patterns need O(q) QPs per rank a round: holding N-1 peers' would be waste; and
  // --rails aligned connects only the round's same-rail partners (cross-rail may have no path)
  o.connect = t.connect == "round"                             ? connect_kind::round
              : t.connect == "all"                             ? connect_kind::all
              : o.pairwise() || o.rails == rails_kind::aligned ? connect_kind::round
                                                               : connect_kind::all;
  if (o.rails == rails_kind::aligned && o.connect == connect_kind::all) {
    throw usage_error(
        "--rails aligned connects each rank to its own rail's peers only, round by round: drop --connect all "
        "(or use --rails all)");
  }
  if (!t.peer_buffer.empty()) o.peer_buffer = parse_size(t.peer_buffer, "--peer-buffer");
  if (!t.expect.empty()) {
    const auto e = parse_rate(t.expect, "--expect");
    (e.percent ? o.expect_pct : o.expect_bps) = e.value;
  }
  if (t.iters->count() && o.iters == 0) throw usage_error("--iters must be at least 1, e.g. -n 1000");
  const bool spread = std::ranges::find(o.patterns, pattern_kind::spread) != o.patterns.end();
  if ((t.partners->count() || t.seed->count()) && !spread) {
    throw usage_error(fmt::format("{} applies to --pattern spread", t.partners->count() ? "--partners" : "--seed"));
  }
  if (o.partners == 0) throw usage_error("--partners must be at least 1, e.g. --partners 8");
  if (t.rx_depth->count() && o.rx_depth == 0) throw usage_error("--rx-depth must be at least 1, e.g. -r 512");
  validate(o);
  // the verdict is judged at its stated level unless the user sets one
  if (o.false_alarm_pct == 0) o.false_alarm_pct = default_false_alarm_pct;
}

}  // namespace

parse_outcome parse_command_line(int argc, const char* const* argv) {
  options o;
  flag_text t;
  CLI::App app{
      "rdmamesh: full-mesh RDMA communication test. Launch with mpirun or srun; every rank "
      "connects RC QPs to every other rank and all pairs of a round run at once.",
      "rdmamesh"};
  app.set_version_flag("--version", std::string("rdmamesh ") + tool_version);
  app.get_formatter()->column_width(34);
  add_traffic_flags(app, o, t);
  add_datapath_flags(app, o, t);
  add_placement_flags(app, o, t);
  add_output_flags(app, o, t);

  parse_outcome out;
  try {
    app.parse(argc, argv);
    apply(t, o);
    out.opts = o;
  } catch (const CLI::CallForHelp&) {
    out.exit_code = exit_ok;
    out.text = app.help();
  } catch (const CLI::CallForVersion&) {
    out.exit_code = exit_ok;
    out.text = std::string("rdmamesh ") + tool_version + "\n";
  } catch (const CLI::ParseError& e) {
    out.exit_code = exit_usage;
    out.text = printable(fmt::format("{} (see rdmamesh --help)", e.what()));  // it may echo raw input
  } catch (const usage_error& e) {
    out.exit_code = exit_usage;
    out.text = printable(e.what());
  }
  return out;
}

}  // namespace rdmamesh
