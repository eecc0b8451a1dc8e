// The setup sequence, step by step; each step's time goes to stats::setup_phase_names.
#include "rdmamesh/app/setup.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rdmamesh/app/agree.hpp"
#include "rdmamesh/app/context.hpp"
#include "rdmamesh/app/provenance.hpp"
#include "rdmamesh/app/same_options.hpp"
#include "rdmamesh/fabric/placement.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/fabric/select.hpp"
#include "rdmamesh/fabric/topology.hpp"
#include "rdmamesh/io/report.hpp"
#include "rdmamesh/io/verdict.hpp"
#include "rdmamesh/plan/schedule.hpp"
#include "rdmamesh/plan/spread.hpp"
#include "rdmamesh/stats/config.hpp"
#include "rdmamesh/stats/setup.hpp"
#include "rdmamesh/util/error.hpp"
#include "rdmamesh/util/units.hpp"

namespace rdmamesh::app {
namespace {

using clock = std::chrono::steady_clock;
double since(clock::time_point t0) {
  return std::chrono::duration<double>(clock::now() - t0).count();
}

// At least two ranks, identical options everywhere, and the fault a test injects.
int check_job(const mpi::world& w, const options& o, setup& s) {
  return step(w, [&] {
    if (s.n < 2) {
      throw usage_error(
          "rdmamesh needs at least 2 ranks (one per end of a pair); launch it with mpirun -np N or "
          "srun -n N, N >= 2");
    }
    check_same_options(w, o);
    s.injected = fault_from_env(s.n);
  });
}

// plan: the buffer layout and the schedules' shape, before anything is allocated; --scaling
// steps need every rank's place on its node
int plan_job(const mpi::world& w, const options& o, setup& s) {
  s.node = w.node();
  s.local_of = w.allgather(static_cast<std::uint32_t>(s.node.local_rank));
  s.node_of = w.allgather(static_cast<std::int32_t>(s.node.node));
  return step(w, [&] {
    for (auto p : o.patterns) (void)plan::schedule(p, s.n, o.bidirectional, o.target);  // validates --target
    if (o.scaling) {
      s.steps = plan::scaling_steps(s.local_of, *std::max_element(s.local_of.begin(), s.local_of.end()) + 1);
    }
    s.layout = plan::make_layout(o, s.n);
  });
}

// The fabric's switches: --topology FILE, or in a Slurm job Slurm's own tree. Rank 0 reads it
// (no shared file system needed), every rank parses the same text, so a bad file stops every
// rank with the same line before anything is allocated.
std::string read_topology(const options& o, std::string& source) {
  if (!o.topology.empty()) {
    source = o.topology;
    std::ifstream in(o.topology);
    if (!in) {
      throw usage_error(
          fmt::format("--topology {}: cannot read it; give Slurm's topology.conf (tree form), or leave "
                      "--topology out",
                      o.topology));
    }
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  if (std::getenv("SLURM_JOB_ID") == nullptr) return {};
  source = "scontrol show topology";
  // no topology plugin, no scontrol: the job runs without switches, as it would without the flag
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen("scontrol show topology 2>/dev/null", "r"), pclose);
  if (!p) return {};
  std::string text;
  char buf[4096];
  while (std::size_t got = std::fread(buf, 1, sizeof buf, p.get())) text.append(buf, got);
  return text.find("SwitchName=") == std::string::npos ? std::string() : text;
}

// Where the job's hosts sit in the tree, and each uplink's ranks and name. Throws usage_error.
void place_switches(const options& o, setup& s, const std::string& text, const std::string& source) {
  s.switches = plan::parse_switch_tree(text, source, !o.topology.empty());
  s.leaf_of = plan::leaf_of_hosts(s.switches, s.hosts);
  const auto job = plan::job_nodes(s.hosts);
  if (std::ranges::all_of(s.leaf_of, [](std::int32_t l) { return l < 0; })) {
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < job.size() && i < 3; ++i) shown.push_back(job[i].name);
    throw usage_error(
        fmt::format("topology {}: none of the job's nodes ({}{}) is under a switch in it; give the "
                    "tree of this cluster (Slurm's topology.conf), or leave --topology out",
                    source, fmt::join(shown, ", "), job.size() > 3 ? ", ..." : ""));
  }
  const auto under = plan::ranks_under(s.switches, s.leaf_of);
  for (std::size_t sw = 0; sw < s.switches.switches.size(); ++sw) {
    const auto& d = s.switches.switches[sw];
    std::vector<std::string> nodes;  // a node's ranks share its leaf: its first rank says where it is
    for (const auto& j : job)
      if (under[sw][j.first_rank]) nodes.push_back(j.name);
    // a few nodes by name; a leaf of 32 as Slurm writes it, n[0224-0255]
    const std::string hosts =
        nodes.size() <= 4 ? fmt::format("{}", fmt::join(nodes, ",")) : plan::compress_hostlist(nodes);
    s.uplink_names.push_back(
        d.parent < 0
            ? d.name
            : fmt::format("{}-{} ({})", d.name, s.switches.switches[static_cast<std::size_t>(d.parent)].name, hosts));
    if (d.parent >= 0) s.uplinks.push_back({static_cast<std::int32_t>(sw), under[sw]});
  }
}

int resolve_topology(const mpi::world& w, const options& o, setup& s) {
  std::string source, text;
  int code = step(w, [&] {
    if (s.me == 0) text = read_topology(o, source);
  });
  if (code != exit_ok) return code;
  text = w.bcast_string(text);
  source = w.bcast_string(source);
  s.hosts = w.allgather_strings(fabric::this_host());
  return step(w, [&] {
    if (text.empty()) return;
    try {
      place_switches(o, s, text, source);
    } catch (const usage_error& e) {
      if (!o.topology.empty()) throw;
      // Slurm's own tree was not asked for: the job runs without it, and says why
      s.switches = {};
      s.leaf_of.clear();
      s.uplinks.clear();
      s.uplink_names.clear();
      s.topology_note = fmt::format("# topology: {} not used: {}\n", source, e.what());
    }
  });
}

// --verdict, or beside --output: FILE.h5 -> FILE.verdict.json
std::string verdict_path(const options& o) {
  if (!o.verdict.empty()) return o.verdict;
  if (o.output.empty()) return {};
  const std::string base =
      o.output.size() > 3 && o.output.ends_with(".h5") ? o.output.substr(0, o.output.size() - 3) : o.output;
  return base + ".verdict.json";
}

// io: the output file exists before any traffic, so a bad path costs nothing
int open_output(const mpi::world& w, const options& o, int argc, char** argv, setup& s) {
  return step(w, [&] {
    if (s.me != 0) return;
    s.job_id = new_job_id();
    s.verdict_path = verdict_path(o);
    if (!s.verdict_path.empty()) io::check_output_path(s.verdict_path, o.force, "--verdict");
    if (o.output.empty()) return;
    s.file = std::make_unique<io::results_file>(o.output, o.force, s.n, join_command_line(argc, argv), s.job_id);
    auto config = describe(o);
    if (s.injected) config.emplace_back("RDMAMESH_FAULT", std::getenv("RDMAMESH_FAULT"));
    s.file->write_config(config);
    s.file->write_provenance(provenance());
  });
}

// Where this rank runs and which NIC, port and GID it uses; pinned before anything is allocated.
struct placed {
  fabric::topology_ptr topo;
  fabric::placement where;
  fabric::port_choice port;
};

placed place_rank(const options& o, const setup& s) {
  const auto devices = fabric::discover(o.ib_devs);
  // the node's NICs in rail order; each rank takes one
  const std::vector<std::string> usable = fabric::nic_candidates(devices, o, fabric::this_host());
  placed p;
  p.topo = std::make_shared<fabric::topology>();
  // every rank on this node pins its buffer: check it fits before the kernel OOM-kills a rank
  const std::uint64_t node_bytes = s.layout.total_bytes() * static_cast<std::uint64_t>(s.node.local_size);
  if (const std::uint64_t ram = p.topo->total_memory(); ram > 0 && node_bytes > ram / 10 * 9) {
    throw usage_error(
        fmt::format("the buffers need {} per rank, {} for the {} ranks on {}, more than 90% of its {} of memory; lower "
                    "--size or --peer-buffer, or run fewer ranks per node",
                    format_size(s.layout.total_bytes()), format_size(node_bytes), s.node.local_size,
                    fabric::this_host(), format_size(ram)));
  }
  p.where = fabric::place(p.topo->describe(usable), s.node.local_rank, s.node.local_size, o.bind, o.nic_map);
  if (p.where.source == fabric::bound_by::rdmamesh) p.topo->bind_process(p.where.pu);
  options chosen = o;
  chosen.ib_dev = p.where.device;
  chosen.ib_devs = {p.where.device};
  p.port = fabric::choose_port(devices, chosen);
  return p;
}

// fabric: placement, then the device, its buffers and QPs (the node's ranks on one device share
// its limits: max_qp, max_cq, ...)
int open_fabric(const mpi::world& w, const options& o, setup& s, std::optional<placed>& at, stats::setup_times& took) {
  int code = step(w, [&] {
    const auto t0 = clock::now();
    at = place_rank(o, s);
    took[0] = since(t0);
  });
  if (code != exit_ok) return code;
  const auto devices_of = w.allgather_strings(at->port.device);
  std::uint32_t on_device = 0;
  for (std::uint32_t r = 0; r < s.n; ++r) {
    on_device += s.node_of[r] == s.node.node && devices_of[r] == at->port.device;
  }
  code = step(w, [&] {
    s.ep = std::make_unique<fabric::endpoint>(o, s.layout, at->port, s.me, s.n, at->topo, at->where.numa, on_device);
  });
  if (code != exit_ok) return code;
  took[1] = s.ep->times().device_s;
  took[2] = s.ep->times().buffers_s;
  took[3] = s.ep->times().qps_s;
  return exit_ok;
}

// --expect PCT%: of the slowest port in the job (every rank knows every port's rate by now)
int resolve_expect(const mpi::world& w, const options& o, setup& s) {
  return step(w, [&] {
    s.expect_floor_bps = o.expect_bps;
    if (o.expect_bps > 0) s.expect_how = fmt::format("--expect {}", format_rate(o.expect_bps));
    if (!(o.expect_pct > 0)) return;
    double slowest = 0;
    std::string which;
    for (const auto& r : s.ranks) {
      if (slowest == 0 || r.line_rate_bps < slowest) {
        slowest = r.line_rate_bps;
        which = fmt::format("{} on {}", fabric::text(r.device), fabric::text(r.host));
      }
    }
    if (!(slowest > 0)) {
      throw usage_error(fmt::format(
          "--expect {:g}% needs the port's rate, and {} reports none (speed and width codes rdmamesh does not "
          "know); give --expect as a rate, e.g. --expect 25Gb/s",
          o.expect_pct, which));
    }
    s.expect_floor_bps = o.expect_pct / 100 * slowest / 8;
    s.expect_how = fmt::format("--expect {:g}% of the slowest port's rate ({}: {})", o.expect_pct, which,
                               format_rate(slowest / 8));
  });
}

bool has_spread(const options& o) {
  return std::ranges::find(o.patterns, pattern_kind::spread) != o.patterns.end();
}

// --pattern spread's plan over every rank, once (the header and the runs read it); a job where
// no rail has two ranks has nothing to run
void plan_spread(const options& o, setup& s, const std::vector<std::uint32_t>& everyone) {
  if (!has_spread(o)) return;
  s.spread = plan::spread_rounds(everyone, s.node_of, s.rail_of, s.leaf_of, o.partners, o.seed);
  if (!s.spread.rounds.empty()) return;
  throw usage_error(
      "--pattern spread pairs ranks on the same rail, and no rail has two ranks: run more ranks (one per NIC on each "
      "node) or use another pattern");
}

// Every rank's record, then (--connect all) every QP's connection info, and RTR/RTS.
// --connect round connects per round, with the round's partners only.
int connect_fabric(const mpi::world& w, const options& o, setup& s, const placed& at, stats::setup_times& took) {
  const auto t0 = clock::now();
  s.ranks =
      w.allgather(fabric::make_rank_info(fabric::this_host(), &at.port, &at.where, s.node, s.ep->buffer_on_numa()));
  // every NIC of -d's list drives a rank, on every node: before any QP is connected
  if (const int code = step(w, [&] { fabric::check_nics(s.ranks, o); }); code != exit_ok) return code;
  for (const auto& r : s.ranks) s.rail_of.push_back(r.rail);
  s.nics = stats::nic_groups(s.node_of, s.rail_of);
  std::vector<std::uint32_t> everyone(s.n);
  for (std::uint32_t r = 0; r < s.n; ++r) everyone[r] = r;
  if (const int code = step(w,
                            [&] {
                              plan::check_rail_groups(plan::rail_groups(everyone, s.rail_of, o.rails), o.rails);
                              plan_spread(o, s, everyone);
                            });
      code != exit_ok)
    return code;
  if (o.preflight) {  // the records hold every setting compared: nothing is connected
    took[4] = since(t0);
    return exit_ok;
  }
  if (o.connect == connect_kind::round) {
    std::vector<std::string> route_of;
    for (const auto& r : s.ranks) route_of.push_back(fabric::address_of(r));
    s.ep->set_routes(std::move(route_of));
    took[4] = since(t0);
    return resolve_expect(w, o, s);
  }
  if (const int code = resolve_expect(w, o, s); code != exit_ok) return code;
  const std::vector<fabric::conn_info> mine = s.ep->local_infos();
  const std::vector<fabric::conn_info> theirs = w.alltoall(std::span<const fabric::conn_info>(mine), o.qps);
  took[4] = since(t0);
  const int code = step(w, [&] { s.ep->connect(theirs, s.injected); });
  if (code == exit_ok) took[5] = s.ep->times().connect_s;
  return code;
}

// engine: receives are posted before the first barrier, so no peer ever finds none
int start_engine(const mpi::world& w, const options& o, setup& s, stats::setup_times& took) {
  const int code = step(w, [&] {
    const auto t0 = clock::now();
    if (o.mode == mode_kind::bw) {
      s.streamer = std::make_unique<engine::stream>(o, s.layout, s.me, s.n, *s.ep);
    } else {
      s.pinger = std::make_unique<engine::pingpong>(o, s.layout, s.me, s.n, *s.ep);
    }
    took[6] = since(t0);
  });
  if (code != exit_ok) return code;
  // ranks pinned onto common CPUs must not spin through each other's time slices
  bool crowded = false;
  for (std::uint32_t r = 0; r < s.n; ++r) {
    crowded = crowded || (r != s.me && fabric::share_cpu(s.ranks[s.me], s.ranks[r]));
  }
  engine::core& base = s.streamer ? s.streamer->base() : s.pinger->base();
  base.set_crowded(crowded);
  base.inject(s.injected);
  return exit_ok;
}

// Rank 0: the header, where setup time went and what the job holds, then the table's header;
// every rank's record and setup figures go to /ranks.
void print_header(const mpi::world& w, const options& o, setup& s, stats::setup_times& took) {
  const auto t_barrier = clock::now();
  w.barrier();
  took[7] = since(t_barrier);
  const auto all_took = w.allgather(took);
  const fabric::endpoint_resources held = s.ep->resources();
  const auto all_held = w.allgather(stats::setup_resources{held.qps, held.cq_entries, held.registered_bytes});
  if (s.me != 0) return;
  for (const auto& warning : fabric::sharing_warnings(s.ranks)) fmt::print(stderr, "rdmamesh: warning: {}\n", warning);
  std::string header = io::format_header(o, s.ranks, s.ep->inline_size());
  header += io::format_setup(stats::summarize_setup(all_took), stats::peak_resources(all_held, s.node_of), s.ranks,
                             s.layout.shared_rx);
  if (s.injected) {
    header += fmt::format("# fault injected (test only): RDMAMESH_FAULT={}\n", std::getenv("RDMAMESH_FAULT"));
  }
  // the NICs' settings, compared before any traffic: what differs is a cause already
  s.config = stats::compare_nics(s.ranks);
  for (const auto& f : s.config) header += "# " + io::config_sentence(f) + "\n";
  if (o.preflight && s.config.empty()) {
    header += fmt::format("# config: the job's NICs agree (link layer, MTU, rate, PCIe link, firmware)\n");
  }
  // the switches: how many, and the job's nodes under none of them (judged as nodes only)
  std::vector<std::string> nodes, missing;
  std::vector<std::int32_t> node_leaf;
  for (const auto& j : s.switches.empty() ? std::vector<plan::job_node>{} : plan::job_nodes(s.hosts)) {
    nodes.push_back(j.name);
    node_leaf.push_back(s.leaf_of[j.first_rank]);
    if (s.leaf_of[j.first_rank] < 0) missing.push_back(j.name);
  }
  header += s.topology_note;
  if (!s.switches.empty()) {
    const auto leaves = std::ranges::count_if(s.switches.switches, [](const auto& d) { return d.leaf; });
    header += fmt::format(
        "# topology: {}: {} switch(es), {} leaves; {} of the job's {} node(s) under them, {} uplink(s) "
        "judged{}\n",
        s.switches.source, s.switches.switches.size(), leaves, nodes.size() - missing.size(), nodes.size(),
        s.uplinks.size(),
        missing.empty() ? ""
                        : fmt::format("; under no switch of it (judged as nodes only): {}", fmt::join(missing, ", ")));
  }
  if (has_spread(o)) header += fmt::format("# spread: {}\n", plan::describe(s.spread, o.seed));
  print(header + io::format_table_header(o));
  if (s.file) s.file->write_ranks(s.ranks, all_took, all_held);
  if (s.file && !s.switches.empty()) s.file->write_topology(s.switches, nodes, node_leaf);
}

}  // namespace

int prepare(const mpi::world& w, const options& o, int argc, char** argv, setup& s) {
  s.n = static_cast<std::uint32_t>(w.size());
  s.me = static_cast<std::uint32_t>(w.rank());
  s.command_line = join_command_line(argc, argv);
  int code = check_job(w, o, s);
  if (code == exit_ok) code = plan_job(w, o, s);
  if (code == exit_ok) code = resolve_topology(w, o, s);
  if (code == exit_ok) code = open_output(w, o, argc, argv, s);
  if (code != exit_ok) return code;

  stats::setup_times took{};  // where setup time goes, phase by phase
  std::optional<placed> at;
  code = open_fabric(w, o, s, at, took);
  if (code == exit_ok) code = connect_fabric(w, o, s, *at, took);
  if (code == exit_ok && !o.preflight) code = start_engine(w, o, s, took);
  if (code != exit_ok) {
    // nothing measured yet: leave no empty file behind to block the corrected rerun
    if (s.file) {
      const std::string path = s.file->path();
      s.file.reset();
      std::remove(path.c_str());
    }
    return code;
  }
  print_header(w, o, s, took);
  return exit_ok;
}

}  // namespace rdmamesh::app
