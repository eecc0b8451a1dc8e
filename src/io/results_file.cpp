// Results file writer; see README.md "Output: the HDF5 file" for the schema it implements.
#include "rdmamesh/io/results_file.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

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

}  // namespace

void check_output_path(const std::string& path, bool force) {
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw usage_error(fmt::format("output folder '{}' does not exist; create it or pick another -o", dir.string()));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw usage_error(fmt::format("output folder '{}' is not writable; pick another -o", dir.string()));
  }
  if (fs::is_directory(p, ec)) throw usage_error(fmt::format("output '{}' is a folder; name a file with -o", path));
  if (fs::exists(p, ec) && !force) {
    throw usage_error(fmt::format("output file '{}' exists; pass --force to overwrite it or pick another -o", path));
  }
}

results_file::results_file(const std::string& path, bool force, std::uint32_t n_ranks, const std::string& command_line)
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
  h5::set_attr(root, "n_ranks", static_cast<std::int64_t>(n_ranks));
  h5::set_attr(root, "complete", std::int64_t{0});
  h5::set_attr(root, "status", std::string("running"));
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

void results_file::write_ranks(std::span<const fabric::rank_info> ranks) {
  h5::handle g = h5::create_group(file_.get(), "ranks");
  std::vector<std::string> host, device, gid;
  std::vector<std::int32_t> port, gid_index, mtu;
  for (const auto& r : ranks) {
    host.emplace_back(fabric::text(r.host));
    device.emplace_back(fabric::text(r.device));
    gid.emplace_back(fabric::text(r.gid));
    port.push_back(r.port);
    gid_index.push_back(r.gid_index);
    mtu.push_back(r.mtu);
  }
  const hsize_t dims[1] = {ranks.size()};
  h5::write_strings(g.get(), "hostname", host);
  h5::write_strings(g.get(), "device", device);
  h5::write_strings(g.get(), "gid", gid);
  h5::write(g.get(), "port", dims, std::span<const std::int32_t>(port));
  h5::write(g.get(), "gid_index", dims, std::span<const std::int32_t>(gid_index));
  h5::write(g.get(), "mtu", dims, std::span<const std::int32_t>(mtu));
  flush();
}

void results_file::write_run(std::uint32_t index, const options& o, const stats::run_matrices& m,
                             const std::vector<std::string>& events) {
  h5::handle runs(H5Gopen2(file_.get(), "runs", H5P_DEFAULT), H5Gclose, "H5Gopen2(runs)");
  h5::handle g = h5::create_group(runs.get(), fmt::format("{:04}", index));
  const hid_t r = g.get();
  h5::set_attr(r, "op", std::string(to_string(o.op)));
  h5::set_attr(r, "size", static_cast<std::int64_t>(o.size));
  h5::set_attr(r, "duration_s", o.duration_mode() ? o.duration_s : 0.0);
  h5::set_attr(r, "warmup_s", o.duration_mode() ? o.warmup_s : 0.0);
  h5::set_attr(r, "iters", static_cast<std::int64_t>(o.iters));
  h5::set_attr(r, "tx_depth", static_cast<std::int64_t>(o.tx_depth));
  h5::set_attr(r, "verify", static_cast<std::int64_t>(o.verify ? 1 : 0));
  write_square(r, "tx_bw", m.tx_bw);
  write_square(r, "rx_bw", m.rx_bw);
  write_square(r, "tx_msgs", m.tx_msgs);
  write_square(r, "rx_msgs", m.rx_msgs);
  write_square(r, "tx_bytes", m.tx_bytes);
  write_square(r, "rx_bytes", m.rx_bytes);
  write_square(r, "tx_total", m.tx_total);
  write_square(r, "rx_total", m.rx_total);
  write_square(r, "verify_errors", m.verify_errors);
  write_square(r, "flags", m.flags);
  h5::write_strings(r, "events", events);
  flush();
}

void results_file::finish(bool complete, const std::string& status) {
  h5::set_attr(file_.get(), "complete", static_cast<std::int64_t>(complete ? 1 : 0));
  h5::set_attr(file_.get(), "status", status);
  flush();
}

void results_file::flush() {
  if (H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0) throw h5::io_error(fmt::format("H5Fflush({}) failed", path_));
}

}  // namespace rdmamesh::io
