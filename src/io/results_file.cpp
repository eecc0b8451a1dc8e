// Results file writer; docs/results.md is the schema it implements.
#include "rdmamesh/io/results_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <functional>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rdmamesh/io/annotate.hpp"
#include "rdmamesh/io/report.hpp"
#include "rdmamesh/util/error.hpp"
#include "rdmamesh/version.hpp"

namespace rdmamesh::io {
namespace {

namespace fs = std::filesystem;

std::string iso_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

template <class T>
void write_square(hid_t loc, const std::string& name, const stats::square<T>& m) {
  const hsize_t dims[2] = {m.n, m.n};
  h5::write(loc, name, dims, std::span<const T>(m.v));
}

// [S, N, N]: one square per run, in size order.
template <class T>
void write_stack(hid_t loc, const std::string& name, const std::vector<const stats::square<T>*>& ms) {
  if (ms.empty()) return;
  const std::uint32_t n = ms.front()->n;
  std::vector<T> flat;
  flat.reserve(ms.size() * n * n);
  for (const auto* m : ms) flat.insert(flat.end(), m->v.begin(), m->v.end());
  const hsize_t dims[3] = {ms.size(), n, n};
  h5::write(loc, name, dims, std::span<const T>(flat));
}

h5::handle open_group(hid_t loc, const std::string& name) {
  if (H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0) {
    return {H5Gopen2(loc, name.c_str(), H5P_DEFAULT), H5Gclose, fmt::format("H5Gopen2({})", name)};
  }
  return h5::create_group(loc, name);
}

// A [K] dataset of one field of each row: a table stored as parallel columns.
template <class Row, class Field>
void write_column(hid_t loc, const std::string& name, std::span<const Row> rows, Field field) {
  using T = std::decay_t<decltype(field(std::declval<const Row&>()))>;
  std::vector<T> column;
  column.reserve(rows.size());
  for (const auto& r : rows) column.push_back(field(r));
  if constexpr (std::is_same_v<T, std::string>) {
    h5::write_strings(loc, name, column);
  } else {
    const hsize_t dims[1] = {rows.size()};
    h5::write(loc, name, dims, std::span<const T>(column));
  }
}
template <class Row, class Field>
void write_column(hid_t loc, const std::string& name, const std::vector<Row>& rows, Field field) {
  write_column(loc, name, std::span<const Row>(rows), field);
}

// A derived group is rewritten whole when more runs have finished since it was written.
h5::handle fresh_group(hid_t loc, const std::string& name) {
  if (H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0 && H5Ldelete(loc, name.c_str(), H5P_DEFAULT) < 0) {
    throw h5::io_error(fmt::format("H5Ldelete({}) failed", name));
  }
  return h5::create_group(loc, name);
}

std::string run_name(std::uint32_t index) {
  return fmt::format("runs/{:04}", index);
}

}  // namespace

void check_output_path(const std::string& path, bool force, std::string_view flag) {
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string what = flag == "-o" ? "output" : std::string(flag);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw usage_error(
        fmt::format("{} folder '{}' does not exist; create it or pick another {}", what, dir.string(), flag));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw usage_error(fmt::format("{} folder '{}' is not writable; pick another {}", what, dir.string(), flag));
  }
  if (fs::is_directory(p, ec))
    throw usage_error(fmt::format("{} '{}' is a folder; name a file with {}", what, path, flag));
  if (fs::exists(p, ec) && !force) {
    throw usage_error(
        fmt::format("{} file '{}' exists; pass --force to overwrite it or pick another {}", what, path, flag));
  }
}

results_file::results_file(const std::string& path, bool force, std::uint32_t n_ranks, const std::string& command_line,
                           const std::string& job_id)
    : path_(path), n_ranks_(n_ranks) {
  check_output_path(path, force);
  h5::quiet_errors();
  h5::handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate(FILE_ACCESS)");
  // shared and network file systems (9p, NFS, some Lustre mounts) refuse flock
  H5Pset_file_locking(fapl.get(), false, true);
  file_ = h5::handle(H5Fcreate(path.c_str(), force ? H5F_ACC_TRUNC : H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()), H5Fclose,
                     fmt::format("H5Fcreate({})", path));
  const hid_t root = file_.get();
  h5::set_attr(root, "schema", std::string(schema_name));
  h5::set_attr(root, "tool_version", std::string(tool_version));
  h5::set_attr(root, "command_line", command_line);
  h5::set_attr(root, "created", iso_now());
  if (!job_id.empty()) h5::set_attr(root, "job_id", job_id);
  h5::set_attr(root, "n_ranks", static_cast<std::int64_t>(n_ranks));
  h5::set_attr(root, "complete", std::int64_t{0});
  h5::set_attr(root, "status", std::string("running"));
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  h5::set_attr(root, "hdf5_version", fmt::format("{}.{}.{}", major, minor, release));
  h5::create_group(root, "runs");
  flush();
}

results_file::~results_file() {
  if (file_.get() >= 0) H5Fflush(file_.get(), H5F_SCOPE_GLOBAL);
}

void results_file::write_config(const std::vector<std::pair<std::string, std::string>>& config) {
  h5::handle g = h5::create_group(file_.get(), "config");
  for (const auto& [k, v] : config) h5::set_attr(g.get(), k, v);
}

void results_file::write_provenance(const std::vector<std::pair<std::string, std::string>>& attrs) {
  for (const auto& [k, v] : attrs) h5::set_attr(file_.get(), k, v);
  flush();
}

namespace {

// One column per field of the rank records: where each rank ran and with which NIC.
void write_rank_columns(hid_t g, std::span<const fabric::rank_info> ranks) {
  using fabric::rank_info;
  auto text = [&](const char* name, auto field) {
    write_column(g, name, ranks, [&](const rank_info& r) { return std::string(fabric::text(r.*field)); });
  };
  auto int32 = [&](const char* name, auto field) {
    write_column(g, name, ranks, [&](const rank_info& r) { return std::int32_t{r.*field}; });
  };
  text("hostname", &rank_info::host);
  text("device", &rank_info::device);
  text("gid", &rank_info::gid);
  text("cpus", &rank_info::cpus);
  write_column(g, "bound_by", ranks, [](const rank_info& r) {
    return std::string(fabric::to_string(static_cast<fabric::bound_by>(r.bound)));
  });
  text("fw_ver", &rank_info::fw_ver);
  text("board_id", &rank_info::board_id);
  text("pcie", &rank_info::pcie);
  text("pcie_down", &rank_info::pcie_down);
  // ibstat's spelling: four groups of four hex digits
  write_column(g, "node_guid", ranks, [](const rank_info& r) {
    const std::uint64_t guid = r.node_guid;
    return fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", guid >> 48, (guid >> 32) & 0xffff, (guid >> 16) & 0xffff,
                       guid & 0xffff);
  });
  write_column(g, "link_layer", ranks, [](const rank_info& r) {
    return std::string(r.device[0] == '\0' ? "" : (r.ethernet ? "Ethernet" : "InfiniBand"));
  });
  write_column(g, "line_rate_bps", ranks, [](const rank_info& r) { return r.line_rate_bps; });
  int32("port", &rank_info::port);
  int32("gid_index", &rank_info::gid_index);
  int32("mtu", &rank_info::mtu);
  int32("node", &rank_info::node);
  int32("local_rank", &rank_info::local_rank);
  int32("pid", &rank_info::pid);
  int32("core", &rank_info::core);
  int32("pu", &rank_info::pu);
  int32("numa", &rank_info::numa);
  int32("mem_on_numa", &rank_info::mem_on_numa);
  int32("rail", &rank_info::rail);
  int32("nics", &rank_info::nics);
  write_column(g, "nic_chosen", ranks, [](const rank_info& r) {
    return std::string(fabric::to_string(static_cast<fabric::nic_how>(r.nic_how)));
  });
  // the CPUs the retest's paths read: a pair alone whose two ends share one is a path of its own
  const auto groups = fabric::cpu_groups(ranks);
  const hsize_t dims[1] = {groups.size()};
  h5::write(g, "cpu_group", dims, std::span<const std::int32_t>(groups));
}

}  // namespace

void results_file::write_ranks(std::span<const fabric::rank_info> ranks, std::span<const stats::setup_times> setup,
                               std::span<const stats::setup_resources> held) {
  h5::handle g = h5::create_group(file_.get(), "ranks");
  write_rank_columns(g.get(), ranks);
  if (!setup.empty()) {
    std::vector<double> flat;
    for (const auto& r : setup) flat.insert(flat.end(), r.begin(), r.end());
    const hsize_t d2[2] = {setup.size(), stats::setup_phases};
    h5::write(g.get(), "setup_s", d2, std::span<const double>(flat));
    h5::handle ds(H5Dopen2(g.get(), "setup_s", H5P_DEFAULT), H5Dclose, "H5Dopen2(/ranks/setup_s)");
    h5::set_attr(ds.get(), "phases", fmt::format("{}", fmt::join(stats::setup_phase_names, ",")));
  }
  if (!held.empty()) {
    using stats::setup_resources;
    write_column(g.get(), "qps", held, [](const setup_resources& r) { return r.qps; });
    write_column(g.get(), "cq_entries", held, [](const setup_resources& r) { return r.cq_entries; });
    write_column(g.get(), "registered_bytes", held, [](const setup_resources& r) { return r.registered_bytes; });
  }
  annotate_group(g.get(), group_kind::ranks);
  std::int32_t nodes = 0;
  for (const auto& r : ranks) nodes = std::max(nodes, r.node + 1);
  h5::set_attr(file_.get(), "n_nodes", static_cast<std::int64_t>(nodes));
  flush();
}

void results_file::write_topology(const plan::switch_tree& t, std::span<const std::string> nodes,
                                  std::span<const std::int32_t> node_leaf) {
  h5::handle g = h5::create_group(file_.get(), "topology");
  h5::set_attr(g.get(), "source", t.source);
  using plan::switch_desc;
  write_column(g.get(), "switch", t.switches, [](const switch_desc& d) { return d.name; });
  write_column(g.get(), "parent", t.switches, [](const switch_desc& d) { return d.parent; });
  write_column(g.get(), "leaf", t.switches, [](const switch_desc& d) { return static_cast<std::uint8_t>(d.leaf); });
  h5::write_strings(g.get(), "node", std::vector<std::string>(nodes.begin(), nodes.end()));
  const hsize_t dims[1] = {node_leaf.size()};
  h5::write(g.get(), "node_leaf", dims, node_leaf);
  flush();
}

namespace {

// What ran: the run's shape and the data-path settings in effect at its size.
void write_run_attrs(hid_t r, const options& o, const run_record& run) {
  h5::set_attr(r, "pattern", std::string(to_string(run.pattern)));
  h5::set_attr(r, "op", std::string(to_string(o.op)));
  h5::set_attr(r, "mode", std::string(to_string(o.mode)));
  h5::set_attr(r, "size", static_cast<std::int64_t>(run.size));
  h5::set_attr(r, "rounds", static_cast<std::int64_t>(run.rounds));
  h5::set_attr(r, "rounds_done", static_cast<std::int64_t>(run.rounds_done));
  h5::set_attr(r, "interrupted", static_cast<std::int64_t>(run.interrupted ? 1 : 0));
  h5::set_attr(r, "connect", std::string(run.round_connect_s >= 0 ? "round" : "all"));
  if (run.round_connect_s >= 0) h5::set_attr(r, "round_connect_s", run.round_connect_s);
  h5::set_attr(r, "duration_s", o.duration_mode() ? run.round_seconds(o) : 0.0);
  h5::set_attr(r, "warmup_s", o.duration_mode() ? o.warmup_seconds(run.retest_of >= 0) : 0.0);
  h5::set_attr(r, "iters", static_cast<std::int64_t>(o.iters));
  h5::set_attr(r, "tx_depth", static_cast<std::int64_t>(o.tx_depth));
  h5::set_attr(r, "rx_depth", static_cast<std::int64_t>(o.rx_depth));
  h5::set_attr(r, "post_list", static_cast<std::int64_t>(o.post_list));
  h5::set_attr(r, "cq_mod", static_cast<std::int64_t>(run.cq_mod));
  h5::set_attr(r, "inline_size", static_cast<std::int64_t>(run.inline_size));
  h5::set_attr(r, "qps", static_cast<std::int64_t>(o.qps));
  h5::set_attr(r, "bidirectional", static_cast<std::int64_t>(o.bidirectional ? 1 : 0));
  h5::set_attr(r, "target", static_cast<std::int64_t>(o.target));
  h5::set_attr(r, "verify", static_cast<std::int64_t>(o.verify ? 1 : 0));
  h5::set_attr(r, "active_per_node", static_cast<std::int64_t>(run.active_per_node));
  if (!run.active.empty()) {
    const hsize_t adims[1] = {run.active.size()};
    h5::write(r, "active", adims, std::span<const std::uint8_t>(run.active));
  }
}

// /runs/NNNN/host: what the host gave each rank's thread over its measured intervals.
void write_host(hid_t run_group, const std::vector<engine::host_use>& host) {
  h5::handle g = h5::create_group(run_group, "host");
  const auto column = [&](const char* name, double engine::host_use::*field) {
    std::vector<double> v;
    // only the CPU and wait times come from schedstat; without it they are unknown
    const bool scheduler = field == &engine::host_use::cpu_s || field == &engine::host_use::wait_s;
    for (const auto& h : host) v.push_back(h.known || !scheduler ? h.*field : std::numeric_limits<double>::quiet_NaN());
    const hsize_t dims[1] = {v.size()};
    h5::write(g.get(), name, dims, std::span<const double>(v));
  };
  column("wall_s", &engine::host_use::wall_s);
  column("cpu_s", &engine::host_use::cpu_s);
  column("wait_s", &engine::host_use::wait_s);
  column("nivcsw", &engine::host_use::nivcsw);
  column("passes", &engine::host_use::passes);
  column("idle_passes", &engine::host_use::idle_passes);
}

// /runs/NNNN/ports: each port's counters over the run, one row per port, one column per counter
// any port has (NaN where a port's driver has no such counter).
void write_ports(hid_t run_group, const std::vector<fabric::port_reading>& ports) {
  h5::handle g = h5::create_group(run_group, "ports");
  std::vector<std::string> names, devices;
  std::vector<std::int32_t> ranks, port;
  for (const auto& p : ports) {
    for (const auto& kv : p.delta) names.push_back(kv.first);
    devices.push_back(p.device);
    ranks.push_back(p.rank);
    port.push_back(p.port);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<double> delta(ports.size() * names.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t k = 0; k < ports.size(); ++k) {
    for (const auto& [name, v] : ports[k].delta) {
      const auto at = std::lower_bound(names.begin(), names.end(), name) - names.begin();
      delta[k * names.size() + static_cast<std::size_t>(at)] = static_cast<double>(v);
    }
  }
  h5::write_strings(g.get(), "device", devices);
  h5::write_strings(g.get(), "counter", names);
  std::vector<std::string> kinds;
  for (const auto& n : names) kinds.emplace_back(fabric::to_string(fabric::kind_of(n)));
  h5::write_strings(g.get(), "kind", kinds);
  const hsize_t one[1] = {ports.size()};
  h5::write(g.get(), "rank", one, std::span<const std::int32_t>(ranks));
  h5::write(g.get(), "port", one, std::span<const std::int32_t>(port));
  const hsize_t two[2] = {ports.size(), names.size()};
  h5::write(g.get(), "delta", two, std::span<const double>(delta));
}

void write_bandwidth(hid_t r, const options& o, const run_record& run) {
  const stats::run_matrices& m = *run.bw;
  write_square(r, "tx_bw", m.tx_bw);
  write_square(r, "rx_bw", m.rx_bw);
  write_square(r, "tx_rate", m.tx_rate);
  write_square(r, "rx_rate", m.rx_rate);
  write_square(r, "tx_s", m.tx_s);
  write_square(r, "rx_s", m.rx_s);
  write_square(r, "tx_msgs", m.tx_msgs);
  write_square(r, "rx_msgs", m.rx_msgs);
  write_square(r, "tx_bytes", m.tx_bytes);
  write_square(r, "rx_bytes", m.rx_bytes);
  write_square(r, "tx_total", m.tx_total);
  write_square(r, "rx_total", m.rx_total);
  write_square(r, "verify_errors", m.verify_errors);
  write_square(r, "flags", m.flags);
  write_square(r, "round", m.round);
  if (!run.host.empty()) write_host(r, run.host);
  if (!run.ports.empty()) write_ports(r, run.ports);
  if (run.pattern == pattern_kind::incast) {
    const auto& seen = receiver_sees_messages(o.op) ? m.rx_bw : m.tx_bw;
    write_square(r, "share", stats::shares(seen));
    const auto fair = stats::column_fairness(seen);
    const hsize_t dims[1] = {fair.size()};
    h5::write(r, "fairness", dims, std::span<const double>(fair));
  }
}

void write_latency(hid_t r, const options& o, const run_record& run) {
  const stats::latency_matrices& m = *run.lat;
  h5::set_attr(r, "latency_is", std::string(o.op == op_kind::read ? "read completion time" : "half round trip"));
  h5::set_attr(r, "latency_unit", std::string("us"));
  write_square(r, "lat_count", m.count);
  write_square(r, "lat_min_us", m.min);
  write_square(r, "lat_p50_us", m.p50);
  write_square(r, "lat_p90_us", m.p90);
  write_square(r, "lat_p99_us", m.p99);
  write_square(r, "lat_p999_us", m.p999);
  write_square(r, "lat_max_us", m.max);
  write_square(r, "lat_mean_us", m.mean);
  write_square(r, "lat_stddev_us", m.stddev);
  write_square(r, "flags", run.lat_flags);
  const auto counts = run.lat_all.counts();
  const hsize_t dims[1] = {counts.size()};
  h5::write(r, "lat_hist_ns", dims, counts);
  const stats::histogram& h = run.lat_all;
  h5::set_attr(r, "lat_samples", static_cast<std::int64_t>(h.count()));
  h5::set_attr(r, "lat_all_min_us", static_cast<double>(h.min()) * 1e-3);
  h5::set_attr(r, "lat_all_p50_us", static_cast<double>(h.percentile(50)) * 1e-3);
  h5::set_attr(r, "lat_all_p99_us", static_cast<double>(h.percentile(99)) * 1e-3);
  h5::set_attr(r, "lat_all_max_us", static_cast<double>(h.max()) * 1e-3);
  h5::set_attr(r, "lat_all_mean_us", h.mean() * 1e-3);
  h5::set_attr(r, "lat_all_stddev_us", h.stddev() * 1e-3);
}

// --interval: bandwidth over time, [slots][src][dst], and the slots' start times.
void write_series(hid_t r, const run_record& run, std::size_t n) {
  const hsize_t tdims[3] = {run.slots, n, n}, sdims[1] = {run.slots};
  h5::write(r, "tx_bw_t", tdims, std::span<const double>(run.tx_bw_t));
  h5::write(r, "rx_bw_t", tdims, std::span<const double>(run.rx_bw_t));
  std::vector<double> t(run.slots);
  for (std::uint32_t k = 0; k < run.slots; ++k) t[k] = k * run.interval_s;
  h5::write(r, "t_s", sdims, std::span<const double>(t));
  h5::set_attr(r, "interval_s", run.interval_s);
}

}  // namespace

void results_file::write_run(const options& o, const run_record& run) {
  h5::handle g = h5::create_group(file_.get(), run_name(run.index));
  const hid_t r = g.get();
  write_run_attrs(r, o, run);
  if (run.bw) write_bandwidth(r, o, run);
  if (run.lat) write_latency(r, o, run);
  if (run.slots > 0) write_series(r, run, n_ranks_);
  h5::write_strings(r, "events", run.events);
  if (run.outliers) write_outliers(r, o, run);
  if (run.retest_of >= 0) write_retest(r, o, run);
  annotate_group(r, group_kind::run);
  flush();
}

// /runs/NNNN/retest: one row per slow pair of the run it retests (attr retest_of on the run).
void results_file::write_retest(hid_t run_group, const options& o, const run_record& run) {
  h5::set_attr(run_group, "retest_of", static_cast<std::int64_t>(run.retest_of));
  h5::handle g = h5::create_group(run_group, "retest");
  h5::set_attr(g.get(), "slow_pct", o.slow_pct);
  h5::set_attr(g.get(), "controls", static_cast<std::int64_t>(run.retest_controls));
  const hsize_t dims[1] = {run.retest.size()};
  std::vector<std::int32_t> src, dst;
  std::vector<double> before, alone, pct, lo, hi, p_slow, cpu, controls_cpu, idle;
  std::vector<std::int32_t> controls;
  std::vector<std::uint8_t> still, fine, starved, named, counted;
  for (const auto& v : run.retest) {
    src.push_back(static_cast<std::int32_t>(v.src));
    dst.push_back(static_cast<std::int32_t>(v.dst));
    before.push_back(v.before);
    alone.push_back(v.alone);
    pct.push_back(v.pct);
    lo.push_back(v.lo_pct);
    hi.push_back(v.hi_pct);
    p_slow.push_back(v.p_slow);
    fine.push_back(v.fine ? 1 : 0);
    controls.push_back(static_cast<std::int32_t>(v.controls));
    still.push_back(v.still_slow ? 1 : 0);
    cpu.push_back(v.cpu_share);
    controls_cpu.push_back(v.controls_cpu_share);
    idle.push_back(v.idle_share);
    starved.push_back(v.starved ? 1 : 0);
    named.push_back(v.named ? 1 : 0);
    counted.push_back(v.counted ? 1 : 0);
  }
  h5::write(g.get(), "src", dims, std::span<const std::int32_t>(src));
  h5::write(g.get(), "dst", dims, std::span<const std::int32_t>(dst));
  h5::write(g.get(), "before_bw", dims, std::span<const double>(before));
  h5::write(g.get(), "alone_bw", dims, std::span<const double>(alone));
  h5::write(g.get(), "pct", dims, std::span<const double>(pct));
  h5::write(g.get(), "lo_pct", dims, std::span<const double>(lo));
  h5::write(g.get(), "hi_pct", dims, std::span<const double>(hi));
  h5::write(g.get(), "p_slow", dims, std::span<const double>(p_slow));
  h5::write(g.get(), "path_controls", dims, std::span<const std::int32_t>(controls));
  h5::write(g.get(), "still_slow", dims, std::span<const std::uint8_t>(still));
  h5::write(g.get(), "fine", dims, std::span<const std::uint8_t>(fine));
  h5::write(g.get(), "counted", dims, std::span<const std::uint8_t>(counted));
  h5::write(g.get(), "cpu_share", dims, std::span<const double>(cpu));
  h5::write(g.get(), "controls_cpu_share", dims, std::span<const double>(controls_cpu));
  h5::write(g.get(), "idle_share", dims, std::span<const double>(idle));
  h5::write(g.get(), "starved", dims, std::span<const std::uint8_t>(starved));
  h5::write(g.get(), "named_link", dims, std::span<const std::uint8_t>(named));
  // what healthy pairs read alone in this retest (control_pcts)
  const hsize_t control_dims[1] = {run.retest_controls_pct.size()};
  h5::write(g.get(), "controls_pct", control_dims, std::span<const double>(run.retest_controls_pct));
  annotate_group(g.get(), group_kind::retest);
  if (!run.retest_parts.empty()) write_retest_parts(g.get(), run);
}

// /runs/NNNN/retest/parts: one row per rank's, NIC's or node's side the model measured alone.
void results_file::write_retest_parts(hid_t retest_group, const run_record& run) {
  h5::handle g = h5::create_group(retest_group, "parts");
  h5::set_attr(g.get(), "false_alarm", run.retest_alpha);
  h5::set_attr(g.get(), "false_alarm_runs", static_cast<std::int64_t>(run.retest_alpha_runs));
  const hsize_t dims[1] = {run.retest_parts.size()};
  std::vector<std::string> kind;
  std::vector<std::int32_t> node, rank, rail, pairs, below, controls, held;
  std::vector<double> run_pct, alone, lo, hi, p, dof;
  std::vector<std::uint8_t> sends, counted, cleared, within, narrowed, held_back, explained;
  const auto pct = [](double log_effect) { return 100 * std::exp(log_effect); };
  for (const auto& l : run.retest_parts) {
    kind.emplace_back(stats::to_string(l.part.kind));
    node.push_back(l.part.node);
    rank.push_back(l.part.rank);
    rail.push_back(l.part.rail);
    sends.push_back(l.part.sends ? 1 : 0);
    run_pct.push_back(pct(l.part.effect));
    alone.push_back(pct(l.effect));
    lo.push_back(pct(l.lo));
    hi.push_back(pct(l.hi));
    p.push_back(l.p_slow);
    dof.push_back(l.dof);
    pairs.push_back(static_cast<std::int32_t>(l.pairs));
    below.push_back(static_cast<std::int32_t>(l.below));
    controls.push_back(static_cast<std::int32_t>(l.controls));
    held.push_back(static_cast<std::int32_t>(l.held));
    counted.push_back(l.counted ? 1 : 0);
    cleared.push_back(l.cleared ? 1 : 0);
    within.push_back(l.within ? 1 : 0);
    narrowed.push_back(l.narrowed ? 1 : 0);
    held_back.push_back(l.held_back ? 1 : 0);
    explained.push_back(l.explained ? 1 : 0);
  }
  h5::write_strings(g.get(), "kind", kind);
  h5::write(g.get(), "node", dims, std::span<const std::int32_t>(node));
  h5::write(g.get(), "rank", dims, std::span<const std::int32_t>(rank));
  h5::write(g.get(), "rail", dims, std::span<const std::int32_t>(rail));
  h5::write(g.get(), "sends", dims, std::span<const std::uint8_t>(sends));
  h5::write(g.get(), "run_pct", dims, std::span<const double>(run_pct));
  h5::write(g.get(), "alone_pct", dims, std::span<const double>(alone));
  h5::write(g.get(), "lo_pct", dims, std::span<const double>(lo));
  h5::write(g.get(), "hi_pct", dims, std::span<const double>(hi));
  h5::write(g.get(), "p_slow", dims, std::span<const double>(p));
  h5::write(g.get(), "dof", dims, std::span<const double>(dof));
  h5::write(g.get(), "pairs", dims, std::span<const std::int32_t>(pairs));
  h5::write(g.get(), "below", dims, std::span<const std::int32_t>(below));
  h5::write(g.get(), "controls", dims, std::span<const std::int32_t>(controls));
  h5::write(g.get(), "held", dims, std::span<const std::int32_t>(held));
  h5::write(g.get(), "counted", dims, std::span<const std::uint8_t>(counted));
  h5::write(g.get(), "cleared", dims, std::span<const std::uint8_t>(cleared));
  h5::write(g.get(), "within", dims, std::span<const std::uint8_t>(within));
  h5::write(g.get(), "narrowed", dims, std::span<const std::uint8_t>(narrowed));
  h5::write(g.get(), "held_back", dims, std::span<const std::uint8_t>(held_back));
  h5::write(g.get(), "explained", dims, std::span<const std::uint8_t>(explained));
  annotate_group(g.get(), group_kind::retest_parts);
}

// /runs/NNNN/outliers: one row per cause, as parallel datasets, and the console's lines.
void results_file::write_outliers(hid_t run_group, const options& o, const run_record& run) {
  h5::handle g = h5::create_group(run_group, "outliers");
  const stats::outlier_report& rep = *run.outliers;
  h5::set_attr(g.get(), "slow_pct", o.slow_pct);
  h5::set_attr(g.get(), "median_bw", rep.median);
  // what the pairs were judged against (the noise-calibrated rule, docs/verdict.md)
  h5::set_attr(g.get(), "noise", rep.noise);
  h5::set_attr(g.get(), "threshold_pct", rep.threshold_pct);
  h5::set_attr(g.get(), "quantum", static_cast<std::int64_t>(rep.quantum));
  h5::set_attr(g.get(), "median_msgs", rep.median_msgs);
  h5::set_attr(g.get(), "median_s", rep.median_s);
  h5::set_attr(g.get(), "measured", static_cast<std::int64_t>(rep.measured));
  h5::set_attr(g.get(), "judged", static_cast<std::int64_t>(rep.judged));
  h5::set_attr(g.get(), "expect_bps", rep.expect_bps);
  h5::set_attr(g.get(), "verdict", io::judged_line(rep));
  // the run's stated false-alarm level: healthy runs drawn like it, and how many named a cause
  h5::set_attr(g.get(), "false_alarm_drawn", static_cast<std::int64_t>(run.false_alarms.drawn));
  h5::set_attr(g.get(), "false_alarm_named", static_cast<std::int64_t>(run.false_alarms.named));
  const auto& found = rep.found;
  write_column(g.get(), "kind", found, [](const stats::outlier& f) { return std::string(stats::to_string(f.kind)); });
  write_column(g.get(), "basis", found, [](const stats::outlier& f) { return std::string(stats::to_string(f.basis)); });
  write_column(g.get(), "node", found, [](const stats::outlier& f) { return f.node; });
  write_column(g.get(), "rank", found, [](const stats::outlier& f) { return f.rank; });
  write_column(g.get(), "peer", found, [](const stats::outlier& f) { return f.peer; });
  write_column(g.get(), "send_pct", found, [](const stats::outlier& f) { return f.send_pct; });
  write_column(g.get(), "recv_pct", found, [](const stats::outlier& f) { return f.recv_pct; });
  write_column(g.get(), "pairs", found, [](const stats::outlier& f) { return std::uint64_t{f.pairs}; });
  write_column(g.get(), "fine", found, [](const stats::outlier& f) { return std::uint64_t{f.fine}; });
  h5::write_strings(g.get(), "text", run.outlier_text);
  annotate_group(g.get(), group_kind::outliers);
}

void results_file::write_contention(const run_record& run) {
  if (!run.contention) return;
  h5::handle g = open_group(file_.get(), run_name(run.index));
  write_square(g.get(), "contention", *run.contention);
  h5::set_attr(g.get(), "contention_vs", std::string(to_string(run.contention_vs)));
  annotate_group(g.get(), group_kind::run);
  flush();
}

void results_file::write_sweep(const options& o, pattern_kind p, const std::vector<const run_record*>& runs) {
  if (runs.empty()) return;
  h5::handle sweeps = open_group(file_.get(), "sweeps");
  h5::handle g = fresh_group(sweeps.get(), std::string(to_string(p)));
  std::vector<std::uint64_t> sizes, index;
  for (const auto* r : runs) {
    sizes.push_back(r->size);
    index.push_back(r->index);
  }
  const hsize_t dims[1] = {runs.size()};
  h5::write(g.get(), "msg_size", dims, std::span<const std::uint64_t>(sizes));
  h5::write(g.get(), "runs", dims, std::span<const std::uint64_t>(index));
  using field = std::function<const stats::square<double>*(const run_record&)>;
  auto stack = [&](const std::string& name, const field& f) {
    std::vector<const stats::square<double>*> ms;
    for (const auto* r : runs) ms.push_back(f(*r));
    write_stack(g.get(), name, ms);
  };
  if (o.mode == mode_kind::bw) {
    stack("tx_bw", [](const run_record& r) { return &r.bw->tx_bw; });
    stack("rx_bw", [](const run_record& r) { return &r.bw->rx_bw; });
    stack("tx_rate", [](const run_record& r) { return &r.bw->tx_rate; });
    stack("rx_rate", [](const run_record& r) { return &r.bw->rx_rate; });
  } else {
    stack("lat_p50_us", [](const run_record& r) { return &r.lat->p50; });
    stack("lat_p99_us", [](const run_record& r) { return &r.lat->p99; });
    stack("lat_mean_us", [](const run_record& r) { return &r.lat->mean; });
    stack("lat_max_us", [](const run_record& r) { return &r.lat->max; });
  }
  annotate_group(g.get(), group_kind::sweep);
  flush();
}

void results_file::write_scaling(pattern_kind p, const std::vector<std::uint64_t>& sizes,
                                 const std::vector<std::uint32_t>& steps, const std::vector<const run_record*>& runs,
                                 std::span<const std::int32_t> node_of, std::uint32_t nodes) {
  // runs: size-major, one per (size, step)
  h5::handle top = open_group(file_.get(), "scaling");
  h5::handle g = fresh_group(top.get(), std::string(to_string(p)));
  const std::size_t s_count = sizes.size(), k_count = steps.size(), n = node_of.size();
  std::vector<std::uint64_t> index;
  std::vector<double> node_bw, port_bw, loopback_bw, port_rate, rank_bw;
  const auto append = [](std::vector<double>& to, const std::vector<double>& v) {
    to.insert(to.end(), v.begin(), v.end());
  };
  for (const auto* r : runs) {
    index.push_back(r->index);
    append(node_bw, stats::node_throughput(r->bw->tx_bw, r->bw->round, node_of, nodes));
    const auto split = stats::node_throughput_split(r->bw->tx_bw, r->bw->round, node_of, nodes);
    append(port_bw, split.port);
    append(loopback_bw, split.loopback);
    append(port_rate, stats::node_throughput_split(r->bw->tx_rate, r->bw->round, node_of, nodes).port);
    append(rank_bw, stats::rank_throughput(r->bw->tx_bw, r->bw->round));
  }
  std::vector<std::uint64_t> k64(steps.begin(), steps.end());
  const hsize_t sdims[1] = {s_count}, kdims[1] = {k_count}, rdims[2] = {s_count, k_count},
                ndims[3] = {s_count, k_count, nodes}, pdims[3] = {s_count, k_count, n};
  h5::write(g.get(), "msg_size", sdims, std::span<const std::uint64_t>(sizes));
  h5::write(g.get(), "active_per_node", kdims, std::span<const std::uint64_t>(k64));
  h5::write(g.get(), "runs", rdims, std::span<const std::uint64_t>(index));
  h5::write(g.get(), "node_bw", ndims, std::span<const double>(node_bw));
  h5::write(g.get(), "node_port_bw", ndims, std::span<const double>(port_bw));
  h5::write(g.get(), "node_loopback_bw", ndims, std::span<const double>(loopback_bw));
  h5::write(g.get(), "node_port_msg_rate", ndims, std::span<const double>(port_rate));
  h5::write(g.get(), "rank_bw", pdims, std::span<const double>(rank_bw));
  annotate_group(g.get(), group_kind::scaling);
  flush();
}

void results_file::write_verdict(const stats::job_verdict& v, const std::string& json) {
  const hid_t f = file_.get();
  if (H5Lexists(f, "verdict", H5P_DEFAULT) > 0 && H5Ldelete(f, "verdict", H5P_DEFAULT) < 0) {
    throw h5::io_error("H5Ldelete(verdict) failed");
  }
  h5::write_strings(f, "verdict", {json});
  h5::handle ds(H5Dopen2(f, "verdict", H5P_DEFAULT), H5Dclose, "H5Dopen2(/verdict)");
  h5::set_attr(ds.get(), "units", std::string("JSON (rdmamesh-verdict/2)"));
  h5::set_attr(f, "verdict", std::string(stats::to_string(v.status)));
  flush();
}

void results_file::finish(bool complete, const std::string& status) {
  h5::set_attr(file_.get(), "complete", static_cast<std::int64_t>(complete ? 1 : 0));
  h5::set_attr(file_.get(), "status", status);
  h5::set_attr(file_.get(), "finished", iso_now());
  flush();
}

void results_file::flush() {
  if (H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0) throw h5::io_error(fmt::format("H5Fflush({}) failed", path_));
}

}  // namespace rdmamesh::io
