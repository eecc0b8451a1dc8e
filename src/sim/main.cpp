// rdmamesh-sim: the verdict's figures without the hardware. `simulate` draws healthy and faulted
// runs from a noise model and judges each with the real finder and fold; `replay` judges runs
// recorded by rdmamesh (tools/export-runs) with today's code, to compare with what was named then;
// `judge` names causes in per-pair figures another tool computed, by the finder's own rule.
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "rdmamesh/sim/generate.hpp"
#include "rdmamesh/sim/judge.hpp"
#include "rdmamesh/sim/replay.hpp"
#include "rdmamesh/sim/tally.hpp"
#include "rdmamesh/util/memory.hpp"

using namespace rdmamesh;

namespace {

int replay(const std::string& path, std::uint32_t stated) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}: run tools/export-runs first", path));
  for (const auto& r : sim::read_runs(in)) {
    const std::array<const stats::run_matrices*, 1> one{&r.m};
    const auto j = sim::judge(one, r.size, r.counted, r.cq_mod, r.node_of, r.rail_of, r.slow_pct, {}, stated);
    std::string now;
    for (const auto& c : j.verdict.causes) {
      if (c.counted) now += (now.empty() ? "" : ",") + sim::describe(c);
    }
    fmt::print("{:<50} then {:<24} now {}{}\n", r.label, r.recorded, now.empty() ? "-" : now,
               j.stated.drawn > 0 ? fmt::format("  (stated false alarms {:.3g} %)", j.stated.pct()) : "");
  }
  return 0;
}

// What `simulate` draws and how it prints
struct simulate_args {
  sim::fabric_shape f;
  std::string pattern = "mesh", noise = "emulator", fault_text = "none";
  std::uint32_t jobs = 1000;
  std::uint64_t seed = 1;
  double msgs = 0;
  bool header = false, show_kinds = false, retest = false;
  std::uint32_t stated = 0, runs = 1;
  double false_alarm_pct = 0;
  std::optional<std::uint32_t> only;
};

CLI::App* add_simulate(CLI::App& app, simulate_args& a) {
  auto* cmd = app.add_subcommand("simulate", "Judge simulated runs (mesh or spread); one table row per call");
  auto& f = a.f;
  // a job of one node has no pair across nodes to judge; the generator needs two
  cmd->add_option("--nodes", f.nodes, "Nodes (2 or more)")->check(CLI::Range(2U, 1U << 20))->capture_default_str();
  cmd->add_option("--per-node", f.per_node, "Ranks per node")->check(CLI::Range(1U, 4096U))->capture_default_str();
  cmd->add_option("--rails", f.rails, "NICs per node (ranks spread over them)")
      ->check(CLI::Range(1U, 64U))
      ->capture_default_str();
  cmd->add_option("--leaves", f.leaves, "Leaf switches, the nodes in equal blocks under them (0: no tree)")
      ->capture_default_str();
  cmd->add_option("--pods", f.pods,
                  "A third tier: the leaves in equal blocks under this many aggregation switches (0: two tiers)")
      ->capture_default_str();
  cmd->add_option("--pattern", a.pattern,
                  "mesh (one round, every pair), shift (N-1 rounds, every pair alone) or spread (--partners rounds)")
      ->check(CLI::IsMember({"mesh", "shift", "spread"}))
      ->capture_default_str();
  cmd->add_option("--partners", f.partners, "--pattern spread: its rounds")
      ->check(CLI::Range(1U, 1U << 20))
      ->capture_default_str();
  cmd->add_option("--noise", a.noise, "emulator (fitted from the SoftRoCE cluster) or nic (a real fabric)")
      ->check(CLI::IsMember({"emulator", "nic"}))
      ->capture_default_str();
  cmd->add_option("--fault", a.fault_text,
                  "none, or KIND:PCT with KIND rank, nic, node, link, uplink (a leaf's) or pod (a pod's uplink)")
      ->capture_default_str();
  cmd->add_option("--jobs", a.jobs, "Jobs to draw")->check(CLI::Range(1U, 1U << 30))->capture_default_str();
  cmd->add_option("--seed", a.seed, "Seed")->capture_default_str();
  cmd->add_option("--msgs", a.msgs, "The median pair's count (default: the noise model's)")
      ->check(CLI::Range(0.0, 1e12));
  cmd->add_option("--runs", a.runs,
                  "Bandwidth runs a job (one fault; each later run keeps the noise model's share of the first's "
                  "effects), the verdict folded from all of them")
      ->check(CLI::Range(1U, 64U))
      ->capture_default_str();
  cmd->add_flag("--header", a.header, "Print the table's header first");
  cmd->add_flag("--kinds", a.show_kinds, "Below the row, the wrong causes counted, by kind");
  cmd->add_option("--stated", a.stated,
                  "Below the row, the false-alarm level each run states (rdmamesh's '# false alarms:' line, from "
                  "this many healthy runs drawn like it), beside how often these runs named a cause");
  cmd->add_flag("--retest", a.retest,
                "Each job runs --retest, as the health job does: its slow and named pairs measured alone (with the "
                "noise model's alone spread) and the verdict folded with them");
  cmd->add_option("--false-alarm", a.false_alarm_pct,
                  "As rdmamesh --false-alarm PCT: the chance (%) of naming any healthy part in a run, and with "
                  "--retest of counting one from its pairs alone in a job (0: rdmamesh's default, 0.1)")
      ->check(CLI::Range(0.0, 99.0));
  cmd->add_option("--only-job", a.only,
                  "Draw the jobs as usual but judge only this one (from 0), e.g. the slowest job a row names");
  return cmd;
}

// What CLI11's checks of one flag cannot see: flags that bound each other, each named with its fix
void check_shape(const simulate_args& a) {
  const auto& f = a.f;
  if (f.rails > f.per_node)
    throw std::invalid_argument(
        fmt::format("--rails {} needs --per-node {} or more (each NIC drives a rank)", f.rails, f.rails));
  if (f.leaves > f.nodes)
    throw std::invalid_argument(
        fmt::format("--leaves {} is more than --nodes {}: at most one leaf a node (or 0: no tree)", f.leaves, f.nodes));
  if (f.pods > 0 && f.pods > f.leaves)
    throw std::invalid_argument(
        fmt::format("--pods {} needs --leaves {} or more (each pod holds leaves)", f.pods, f.pods));
  if (f.pods == 1 || (f.pods > 0 && f.leaves % f.pods != 0))
    throw std::invalid_argument(
        fmt::format("--pods {}: two or more, each holding as many of the {} leaves (e.g. --pods {})", f.pods, f.leaves,
                    f.leaves % 2 == 0 ? 2 : f.leaves));
  if (a.only && *a.only >= a.jobs)
    throw std::invalid_argument(fmt::format("--only-job {}: a job from 0 to --jobs - 1 ({})", *a.only, a.jobs - 1));
}

int simulate(const simulate_args& a) {
  const auto& f = a.f;
  const auto& noise = a.noise;
  const auto jobs = a.jobs;
  const auto stated = a.stated;
  auto nm = noise == "nic" ? sim::nic_noise() : sim::emulator_noise();
  if (a.msgs > 0) nm.msgs = a.msgs;
  const sim::fault x = sim::parse_fault(a.fault_text);
  const auto t = sim::run_jobs(f, nm, x, jobs, a.seed, stated, a.retest, a.false_alarm_pct / 100, a.only, a.runs);
  const double n = static_cast<double>(t.jobs);
  const double healthy_node_jobs = n * (f.nodes - (x.kind == sim::fault_kind::none ? 0 : 1));
  fmt::print("{:>6} {:>4} {:>5} {:>6} {:>9} {:>9} {:>10} {:>6} | {:>8} {:>9} {:>14} {:>9} {:>8}\n", f.nodes, f.per_node,
             f.rails, f.pods > 0 ? fmt::format("{}/{}", f.leaves, f.pods) : fmt::format("{}", f.leaves),
             f.pattern == pattern_kind::spread  ? fmt::format("spread{}", f.partners)
             : f.pattern == pattern_kind::shift ? "shift"
                                                : "mesh",
             noise, a.fault_text, jobs,
             x.kind == sim::fault_kind::none ? "-" : fmt::format("{:.1f}", 100.0 * static_cast<double>(t.named) / n),
             fmt::format("{:.2f}", 100.0 * static_cast<double>(t.false_jobs) / n),
             fmt::format("{:.2f}", 1000.0 * static_cast<double>(t.false_nodes) / healthy_node_jobs),
             fmt::format("{:.1f}", 100.0 * static_cast<double>(t.unjudged) / n), fmt::format("{:.4f}", t.seconds / n));
  // a job with many causes takes longer (a pass over the pairs for each one named): the mean hides it
  if (t.jobs > 1) fmt::print("  judging: slowest job {:.2f} s (job {})\n", t.slowest, t.slowest_job);
  if (stated > 0) {
    // what each run states against what the runs did: on a healthy fabric, the two should agree
    fmt::print("  stated false-alarm level, mean over runs: {:.1f} % ({} healthy runs drawn like each); {}\n",
               t.stated_pct / n, stated,
               x.kind == sim::fault_kind::none ? fmt::format("measured: {:.1f} % of these healthy runs named a cause",
                                                             100.0 * static_cast<double>(t.run_named) / n)
                                               : std::string("(a faulted fabric: nothing to measure it against)"));
  }
  if (a.retest) {
    // what the retest costs: jobs that ran one, and its pairs alone (each a round's slot)
    fmt::print("  retest: run by {:.1f} % of jobs, {:.1f} pairs alone in each of those\n",
               100.0 * static_cast<double>(t.retested) / n,
               t.retested > 0 ? static_cast<double>(t.alone) / static_cast<double>(t.retested) : 0.0);
  }
  if (a.show_kinds) {  // what a job that missed the fault counted instead, for the first few
    for (std::size_t i = 0; i < t.misses.size() && i < 5; ++i)
      fmt::print(
          "  missed in job {}: counted {}\n", t.misses[i].first,
          t.misses[i].second.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(t.misses[i].second, ", ")));
  }
  if (a.show_kinds && !t.false_kinds.empty()) {
    std::vector<std::string> kinds;
    for (const auto& [k, count] : t.false_kinds) kinds.push_back(fmt::format("{} {}", k, count));
    fmt::print("  wrong causes counted, by kind: {}\n", fmt::join(kinds, ", "));
    // a node drained for a part the noise model keeps below --slow alone is slow by --slow's
    // definition: no false alarm of the test, whatever fault was injected
    if (t.false_nodes > 0)
      fmt::print(
          "  of the {} node(s) drained beside the fault, {} for a part the noise model drew lastingly below "
          "--slow (slow by its definition)\n",
          t.false_nodes, t.drawn_slow_nodes);
  }
  return 0;
}

int run(int argc, char** argv) {
  rdmamesh::reuse_freed_memory();
  CLI::App app{"rdmamesh-sim: the verdict's false alarms and detections, from simulated or recorded runs"};
  app.require_subcommand(1);
  auto* rep = app.add_subcommand("replay", "Judge recorded runs (tools/export-runs FILE.h5... > RUNS) again");
  std::string runs_path;
  rep->add_option("runs", runs_path, "The exported runs")->required();
  std::uint32_t rep_stated = 0;
  rep->add_option("--stated", rep_stated,
                  "Each run's stated false-alarm level too, from this many healthy runs drawn like it");
  auto* judge_cmd = app.add_subcommand(
      "judge", "Judge per-pair figures from another tool (JSON on stdin, causes as JSON on stdout; analysis/compare)");
  simulate_args a;
  add_simulate(app, a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {  // one line, as for every other refusal
    const auto sub = app.get_subcommands();
    std::fprintf(stderr, "rdmamesh-sim: %s (see rdmamesh-sim %s--help)\n", e.what(),
                 sub.empty() ? "" : (sub.front()->get_name() + " ").c_str());
    return 2;
  }
  a.f.pattern = a.pattern == "spread"  ? pattern_kind::spread
                : a.pattern == "shift" ? pattern_kind::shift
                                       : pattern_kind::mesh;
  try {
    if (rep->parsed()) return replay(runs_path, rep_stated);
    if (judge_cmd->parsed()) {
      sim::judge_json(std::cin, std::cout);
      return 0;
    }
    check_shape(a);
    if (a.header)
      fmt::print("{:>6} {:>4} {:>5} {:>6} {:>9} {:>9} {:>10} {:>6} | {:>8} {:>9} {:>14} {:>9} {:>8}\n", "nodes", "ppn",
                 "rails", "leaves", "pattern", "noise", "fault", "jobs", "named %", "false %", "false/1k node",
                 "unjudged", "judge s");
    return simulate(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rdmamesh-sim: %s\n", e.what());
    return 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {  // setting up the options can throw too (CLI11 refuses a malformed one)
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rdmamesh-sim: %s\n", e.what());
    return 2;
  }
}
