// The HDF5 schema, written and read back through the HDF5 C API the way analysis/ reads it.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <hdf5.h>
#include <hdf5_hl.h>

#include "rdmamesh/app/ledger.hpp"
#include "rdmamesh/io/results_file.hpp"
#include "rdmamesh/stats/outliers.hpp"
#include "rdmamesh/util/error.hpp"

using namespace rdmamesh;
namespace fs = std::filesystem;

namespace {

struct temp_dir {
  fs::path path;
  temp_dir() {
    char tmpl[] = "/tmp/rdmamesh-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~temp_dir() { fs::remove_all(path); }
};

std::string read_string_attr(hid_t loc, const char* name) {
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  REQUIRE(a >= 0);
  hid_t t = H5Aget_type(a);
  char* value = nullptr;
  REQUIRE(H5Aread(a, t, &value) >= 0);
  std::string out = value;
  H5free_memory(value);
  H5Tclose(t);
  H5Aclose(a);
  return out;
}

std::int64_t read_int_attr(hid_t loc, const char* name) {
  std::int64_t v = -1;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  REQUIRE(a >= 0);
  REQUIRE(H5Aread(a, H5T_NATIVE_INT64, &v) >= 0);
  H5Aclose(a);
  return v;
}

template <class T>
std::vector<T> read_dataset(hid_t loc, const char* name, hid_t mem_type, std::vector<hsize_t>* dims) {
  hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
  REQUIRE(d >= 0);
  hid_t s = H5Dget_space(d);
  dims->resize(static_cast<std::size_t>(H5Sget_simple_extent_ndims(s)));
  H5Sget_simple_extent_dims(s, dims->data(), nullptr);
  hsize_t n = 1;
  for (auto x : *dims) n *= x;
  std::vector<T> out(n);
  REQUIRE(H5Dread(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) >= 0);
  H5Sclose(s);
  H5Dclose(d);
  return out;
}

io::run_record sample(std::uint32_t n, std::uint64_t size = 1024) {
  std::vector<stats::pair_counters> rows(std::size_t{n} * n);
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t p = 0; p < n; ++p) {
      if (r == p) continue;
      rows[r * n + p] = {
          .tx_msgs = 5, .rx_msgs = 4, .tx_total = 9, .rx_total = 9, .tx_seconds = 1.0, .rx_seconds = 1.0, .round = 0};
    }
  }
  io::run_record rec;
  rec.index = 0;
  rec.pattern = pattern_kind::mesh;
  rec.size = size;
  rec.rounds = rec.rounds_done = 1;
  rec.cq_mod = 100;
  rec.bw = stats::assemble(rows, n, size, true);
  rec.events = {"event one"};
  return rec;
}

}  // namespace

TEST_CASE("a written run reads back with the documented schema") {
  temp_dir tmp;
  const std::string path = (tmp.path / "mesh.h5").string();
  const std::uint32_t n = 3;
  {
    io::results_file f(path, false, n, "rdmamesh -s 1K -o mesh.h5");
    f.write_config({{"size", "1K"}, {"op", "write_imm"}});
    std::vector<fabric::rank_info> ranks;
    for (std::uint32_t r = 0; r < n; ++r)
      ranks.push_back(fabric::make_rank_info("node" + std::to_string(r), nullptr, nullptr, {}, false));
    f.write_ranks(ranks);
    options o;
    o.sizes = {1024, 2048};
    o.duration_s = 2;
    io::run_record r0 = sample(n);
    io::run_record r1 = sample(n, 2048);
    r1.index = 1;
    f.write_run(o, r0);
    f.write_run(o, r1);
    f.write_sweep(o, pattern_kind::mesh, {&r0, &r1});
    f.finish(true, "ok");
  }
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  CHECK(read_string_attr(file, "schema") == "rdmamesh/3");
  CHECK(read_int_attr(file, "n_ranks") == n);
  CHECK(read_string_attr(file, "command_line") == "rdmamesh -s 1K -o mesh.h5");
  CHECK_FALSE(read_string_attr(file, "tool_version").empty());
  CHECK(read_int_attr(file, "complete") == 1);

  hid_t cfg = H5Gopen2(file, "config", H5P_DEFAULT);
  CHECK(read_string_attr(cfg, "size") == "1K");
  H5Gclose(cfg);

  hid_t run = H5Gopen2(file, "runs/0000", H5P_DEFAULT);
  REQUIRE(run >= 0);
  CHECK(read_string_attr(run, "op") == "write_imm");
  CHECK(read_string_attr(run, "pattern") == "mesh");
  CHECK(read_string_attr(run, "mode") == "bw");
  CHECK(read_int_attr(run, "size") == 1024);
  CHECK(read_int_attr(run, "cq_mod") == 100);
  std::vector<hsize_t> dims;
  const auto tx = read_dataset<double>(run, "tx_bw", H5T_NATIVE_DOUBLE, &dims);
  CHECK(dims == std::vector<hsize_t>{n, n});
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t c = 0; c < n; ++c) {
      if (r == c) {
        CHECK(std::isnan(tx[r * n + c]));
      } else {
        CHECK(tx[r * n + c] == doctest::Approx(5 * 1024.0));
      }
    }
  }
  const auto rx_msgs = read_dataset<std::uint64_t>(run, "rx_msgs", H5T_NATIVE_UINT64, &dims);
  CHECK(rx_msgs[1] == 4);
  for (const char* name :
       {"rx_bw", "tx_msgs", "tx_bytes", "rx_bytes", "tx_total", "rx_total", "verify_errors", "flags", "events"}) {
    CAPTURE(name);
    CHECK(H5Lexists(run, name, H5P_DEFAULT) > 0);
  }
  H5Gclose(run);
  CHECK(H5Lexists(file, "ranks/hostname", H5P_DEFAULT) > 0);

  hid_t sweep = H5Gopen2(file, "sweeps/mesh", H5P_DEFAULT);
  REQUIRE(sweep >= 0);
  const auto sizes = read_dataset<std::uint64_t>(sweep, "msg_size", H5T_NATIVE_UINT64, &dims);
  CHECK(sizes == std::vector<std::uint64_t>{1024, 2048});
  const auto stack = read_dataset<double>(sweep, "tx_bw", H5T_NATIVE_DOUBLE, &dims);
  CHECK(dims == std::vector<hsize_t>{2, n, n});
  CHECK(stack[n * n + 1] == doctest::Approx(5 * 2048.0));  // second size, pair 0 -> 1
  H5Gclose(sweep);
  H5Fclose(file);
}

TEST_CASE("a retest's parts read back with their pairs alone below --slow, as the verdict words them") {
  temp_dir tmp;
  const std::string path = (tmp.path / "retest.h5").string();
  const std::uint32_t n = 3;
  {
    io::results_file f(path, false, n, "rdmamesh --retest -o retest.h5");
    options o;
    io::run_record run = sample(n);
    io::run_record retest = sample(n);
    retest.index = 1;
    retest.retest_of = 0;
    stats::lasting_effect l{stats::model_cause{stats::outlier_kind::rank, 0, 2, -1, true, std::log(0.2), 1e-4, {2}}};
    l.effect = std::log(0.2);
    l.lo = std::log(0.15);
    l.hi = std::log(0.27);
    l.pairs = 3;
    l.below = 2;
    l.controls = 6;
    l.counted = true;
    retest.retest_parts = {l};
    f.write_run(o, run);
    f.write_run(o, retest);
    f.finish(true, "ok");
  }
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  hid_t parts = H5Gopen2(file, "runs/0001/retest/parts", H5P_DEFAULT);
  REQUIRE(parts >= 0);
  std::vector<hsize_t> dims;
  CHECK(read_dataset<std::int32_t>(parts, "pairs", H5T_NATIVE_INT32, &dims) == std::vector<std::int32_t>{3});
  CHECK(read_dataset<std::int32_t>(parts, "below", H5T_NATIVE_INT32, &dims) == std::vector<std::int32_t>{2});
  CHECK(read_dataset<double>(parts, "alone_pct", H5T_NATIVE_DOUBLE, &dims)[0] == doctest::Approx(20));
  CHECK(read_dataset<std::uint8_t>(parts, "counted", H5T_NATIVE_UINT8, &dims) == std::vector<std::uint8_t>{1});
  H5Gclose(parts);
  H5Fclose(file);
}

TEST_CASE("an existing output file is refused without --force and kept intact") {
  temp_dir tmp;
  const std::string path = (tmp.path / "old.h5").string();
  std::ofstream(path) << "precious";
  try {
    io::results_file f(path, false, 2, "x");
    FAIL("overwrote");
  } catch (const usage_error& e) {
    CHECK(std::string(e.what()).find("--force") != std::string::npos);
  }
  std::ifstream in(path);
  std::string content;
  in >> content;
  CHECK(content == "precious");
  io::results_file forced(path, true, 2, "x");  // --force overwrites
}

TEST_CASE("a missing output folder is named before anything is written") {
  try {
    io::check_output_path("/nonexistent-rdmamesh-dir/out.h5", false);
    FAIL("accepted");
  } catch (const usage_error& e) {
    CHECK(std::string(e.what()).find("/nonexistent-rdmamesh-dir") != std::string::npos);
    CHECK(std::string(e.what()).find("does not exist") != std::string::npos);
  }
}

TEST_CASE("an output folder that is not writable is refused") {
  if (geteuid() == 0) return;  // root writes anywhere; nothing to refuse
  temp_dir tmp;
  fs::permissions(tmp.path, fs::perms::owner_read | fs::perms::owner_exec);
  CHECK_THROWS_AS(io::check_output_path((tmp.path / "x.h5").string(), false), usage_error);
  fs::permissions(tmp.path, fs::perms::owner_all);
}

TEST_CASE("a job cut short keeps the finished sizes as its sweep, and its first reason") {
  temp_dir tmp;
  const std::string path = (tmp.path / "cut.h5").string();
  const std::uint32_t n = 2;
  options o;
  o.sizes = {1024, 2048, 4096};
  o.patterns = {pattern_kind::mesh};
  {
    io::results_file f(path, false, n, "x");
    app::ledger book(o, {0}, {0, 0}, 1, &f);
    io::run_record r0 = sample(n, 1024);
    io::run_record r1 = sample(n, 2048);
    r1.index = 1;
    io::run_record r2 = sample(n, 4096);  // cut short by a signal: measured, but no sweep point
    r2.index = 2;
    r2.interrupted = true;
    book.add(r0);
    book.abandon("incomplete: interrupted by SIGTERM before the run in progress was written");
    book.add(r1);
    book.add(r2);
    book.abandon("incomplete: a later, lesser reason");
  }
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  CHECK(read_int_attr(file, "complete") == 0);
  CHECK(read_string_attr(file, "status") ==
        "incomplete: interrupted by SIGTERM before the run in progress was written");
  std::vector<hsize_t> dims;
  // the sweep was written at the first abandon and rewritten with the runs that finished since
  const auto sizes = read_dataset<std::uint64_t>(file, "sweeps/mesh/msg_size", H5T_NATIVE_UINT64, &dims);
  CHECK(sizes == std::vector<std::uint64_t>{1024, 2048});
  CHECK(H5Lexists(file, "runs/0002", H5P_DEFAULT) > 0);
  H5Fclose(file);
}

TEST_CASE("once the job is finished, a late failure does not rewrite its status") {
  temp_dir tmp;
  const std::string path = (tmp.path / "done.h5").string();
  options o;
  o.sizes = {1024};
  {
    io::results_file f(path, false, 2, "x");
    app::ledger book(o, {0}, {0, 0}, 1, &f);
    book.add(sample(2));
    book.close_pattern(pattern_kind::mesh);
    book.finish(true, "ok");
    book.abandon("incomplete: the other ranks stopped answering at the end of the run");
  }
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  CHECK(read_int_attr(file, "complete") == 1);
  CHECK(read_string_attr(file, "status") == "ok");
  H5Fclose(file);
}

namespace {

// Every dataset of the file, by path, with its units and axis labels.
struct dataset_note {
  std::string path, units;
  std::vector<std::string> labels;
};

herr_t collect(hid_t g, const char* name, const H5L_info_t*, void* data) {
  hid_t o = H5Oopen(g, name, H5P_DEFAULT);
  if (o < 0) return -1;
  if (H5Iget_type(o) == H5I_DATASET) {
    dataset_note d{.path = name, .units = {}, .labels = {}};
    if (H5Aexists(o, "units") > 0) d.units = read_string_attr(o, "units");
    hid_t s = H5Dget_space(o);
    const int rank = H5Sget_simple_extent_ndims(s);
    H5Sclose(s);
    for (int i = 0; i < rank; ++i) {
      char label[64] = {};
      H5DSget_label(o, static_cast<unsigned>(i), label, sizeof label);
      d.labels.emplace_back(label);
    }
    static_cast<std::vector<dataset_note>*>(data)->push_back(d);
  }
  H5Oclose(o);
  return 0;
}

}  // namespace

TEST_CASE("every dataset says its units and matrices name their axes; the root says where the job ran") {
  temp_dir tmp;
  const std::string path = (tmp.path / "notes.h5").string();
  const std::uint32_t n = 3;
  {
    io::results_file f(path, false, n, "rdmamesh");
    f.write_provenance({{"kernel", "Linux 6.1"}, {"SLURM_JOB_ID", "42"}});
    fabric::port_choice port;
    port.device = "mlx5_0";
    port.fw_ver = "16.35.2000";
    port.node_guid = 0x0c42a10300abcdefULL;
    port.line_rate_bps = fabric::line_rate_bps(32, 2);  // EDR 4x
    std::vector<fabric::rank_info> ranks;
    for (std::uint32_t r = 0; r < n; ++r) {
      mpi::node_info node;
      node.node = static_cast<int>(r / 2);
      ranks.push_back(fabric::make_rank_info("node" + std::to_string(r / 2), &port, nullptr, node, false));
    }
    std::vector<stats::setup_times> setup(n);
    for (std::uint32_t r = 0; r < n; ++r) setup[r][2] = 0.5 + r;  // buffers
    const std::vector<stats::setup_resources> held(n, {4, 512, 1 << 20});
    f.write_ranks(ranks, setup, held);
    options o;
    o.sizes = {1024, 2048};
    io::run_record r0 = sample(n);
    io::run_record r1 = sample(n, 2048);
    r1.index = 1;
    const std::vector<std::int32_t> node_of = {0, 0, 1};
    const auto found = stats::find_outliers(*r0.bw, r0.size, node_of, {});
    r0.outliers = found;
    f.write_run(o, r0);
    f.write_run(o, r1);
    f.write_sweep(o, pattern_kind::mesh, {&r0, &r1});
    f.write_scaling(pattern_kind::mesh, {1024}, {1, 2}, {&r0, &r1}, node_of, 2);
    f.finish(true, "ok");
  }
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  std::vector<dataset_note> all;
  REQUIRE(H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, collect, &all) >= 0);
  CHECK(all.size() > 30);
  for (const auto& d : all) {
    CAPTURE(d.path);
    CHECK_FALSE(d.units.empty());
    for (const auto& l : d.labels) CHECK_FALSE(l.empty());
  }
  auto find = [&](const std::string& p) {
    auto it = std::find_if(all.begin(), all.end(), [&](const dataset_note& d) { return d.path == p; });
    REQUIRE(it != all.end());
    return *it;
  };
  CHECK(find("runs/0000/tx_bw").units == "bytes/s");
  CHECK(find("ranks/cpu_group").units == "index");
  CHECK(find("runs/0000/tx_bw").labels == std::vector<std::string>{"src", "dst"});
  CHECK(find("sweeps/mesh/tx_bw").labels == std::vector<std::string>{"size", "src", "dst"});
  CHECK(find("scaling/mesh/node_bw").labels == std::vector<std::string>{"size", "step", "node"});
  CHECK(find("scaling/mesh/node_port_bw").labels == std::vector<std::string>{"size", "step", "node"});
  CHECK(find("scaling/mesh/node_loopback_bw").units == "bytes/s");
  CHECK(find("scaling/mesh/node_port_msg_rate").units == "messages/s");
  CHECK(find("ranks/line_rate_bps").units == "bit/s");
  CHECK(find("ranks/setup_s").labels == std::vector<std::string>{"rank", "phase"});
  CHECK(find("ranks/setup_s").units == "s");
  CHECK(find("ranks/registered_bytes").units == "bytes");
  {
    std::vector<hsize_t> d;
    const auto t = read_dataset<double>(file, "ranks/setup_s", H5T_NATIVE_DOUBLE, &d);
    CHECK(d == std::vector<hsize_t>{n, stats::setup_phases});
    CHECK(t[1 * stats::setup_phases + 2] == doctest::Approx(1.5));
    hid_t ds = H5Dopen2(file, "ranks/setup_s", H5P_DEFAULT);
    CHECK(read_string_attr(ds, "phases") == "placement,device,buffers,qps,exchange,connect,receives,barrier");
    H5Dclose(ds);
    const auto q = read_dataset<std::uint64_t>(file, "ranks/qps", H5T_NATIVE_UINT64, &d);
    CHECK(q == std::vector<std::uint64_t>(n, 4));
  }

  CHECK(read_string_attr(file, "kernel") == "Linux 6.1");
  CHECK(read_string_attr(file, "SLURM_JOB_ID") == "42");
  CHECK(read_int_attr(file, "n_nodes") == 2);
  CHECK_FALSE(read_string_attr(file, "finished").empty());
  CHECK_FALSE(read_string_attr(file, "hdf5_version").empty());
  std::vector<hsize_t> dims;
  const auto rate = read_dataset<double>(file, "ranks/line_rate_bps", H5T_NATIVE_DOUBLE, &dims);
  CHECK(rate[0] == doctest::Approx(100e9));
  H5Fclose(file);
}
