// Opening a device by name and reading its port and GID tables.
#include "rdmamesh/verbs/device.hpp"

#include <arpa/inet.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "rdmamesh/verbs/error.hpp"

namespace rdmamesh::verbs {
namespace {

struct device_list {
  ibv_device** list = nullptr;
  int count = 0;
  device_list() {
    errno = 0;
    list = ibv_get_device_list(&count);
    if (list == nullptr) count = 0;  // ENOSYS: no kernel RDMA support at all
  }
  ~device_list() {
    if (list) ibv_free_device_list(list);
  }
  device_list(const device_list&) = delete;
  device_list& operator=(const device_list&) = delete;
};

}  // namespace

std::string format_gid(const std::array<std::uint8_t, 16>& raw) {
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, raw.data(), text, sizeof text) == nullptr) return "?";
  return text;
}

bool is_ipv4_mapped(const std::array<std::uint8_t, 16>& raw) {
  return std::all_of(raw.begin(), raw.begin() + 10, [](std::uint8_t b) { return b == 0; }) && raw[10] == 0xff &&
         raw[11] == 0xff;
}

const char* to_string(gid_kind k) {
  switch (k) {
    case gid_kind::ib: return "IB";
    case gid_kind::roce_v1: return "RoCE v1";
    case gid_kind::roce_v2: return "RoCE v2";
    case gid_kind::other: break;
  }
  return "other";
}

std::vector<std::string> device_names() {
  device_list devs;
  std::vector<std::string> names;
  for (int i = 0; i < devs.count; ++i) names.emplace_back(ibv_get_device_name(devs.list[i]));
  return names;
}

std::string library_version() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&ibv_get_device_list), &info) == 0 || info.dli_fname == nullptr) return "?";
  std::error_code ec;
  const auto real = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::string(info.dli_fname) : real.filename().string();
}

void context::closer::operator()(ibv_context* c) const noexcept {
  if (int rc = ibv_close_device(c); rc != 0)
    fmt::print(stderr, "rdmamesh: warning: ibv_close_device failed ({})\n", rc);
}

context::context(const std::string& device_name) : name_(device_name) {
  device_list devs;
  for (int i = 0; i < devs.count; ++i) {
    if (device_name != ibv_get_device_name(devs.list[i])) continue;
    ctx_.reset(check_ptr(ibv_open_device(devs.list[i]), fmt::format("ibv_open_device({})", device_name)));
    check_rc(ibv_query_device(ctx_.get(), &dev_attr_), fmt::format("ibv_query_device({})", device_name));
    return;
  }
  throw verbs_error(fmt::format("ibv_open_device({}): no such device", device_name), ENODEV);
}

std::string context::board_id() const {
  std::ifstream in(std::string(ctx_->device->ibdev_path) + "/board_id");
  std::string id;
  std::getline(in, id);
  return id;
}

ibv_port_attr context::port_attr(int port) const {
  ibv_port_attr attr{};
  check_rc(ibv_query_port(ctx_.get(), static_cast<std::uint8_t>(port), &attr),
           fmt::format("ibv_query_port({}, port={})", name_, port));
  return attr;
}

namespace {

gid_kind kind_of(std::uint32_t type) {
  switch (type) {
    case IBV_GID_TYPE_IB: return gid_kind::ib;
    case IBV_GID_TYPE_ROCE_V1: return gid_kind::roce_v1;
    case IBV_GID_TYPE_ROCE_V2: return gid_kind::roce_v2;
    default: return gid_kind::other;
  }
}

void add_entry(std::vector<gid_entry>& out, const ibv_gid_entry& e, int index) {
  gid_entry g;
  g.index = index;
  std::copy(std::begin(e.gid.raw), std::end(e.gid.raw), g.raw.begin());
  if (std::all_of(g.raw.begin(), g.raw.end(), [](std::uint8_t b) { return b == 0; })) return;
  g.kind = kind_of(e.gid_type);
  out.push_back(g);
}

}  // namespace

std::vector<gid_entry> context::gids(int port, int table_len) const {
  std::vector<gid_entry> out;
  // One call for the whole table: a port lists up to thousands of slots (rxe: 1 024), nearly all
  // empty, and asking for each in turn costs a system call per slot on every rank at start-up.
  const auto ports = std::max<std::size_t>(1, dev_attr_.phys_port_cnt);
  std::vector<ibv_gid_entry> all(static_cast<std::size_t>(std::max(table_len, 0)) * ports);
  const ssize_t n = all.empty() ? 0 : ibv_query_gid_table(ctx_.get(), all.data(), all.size(), 0);
  if (n >= 0) {
    for (const auto& e : std::span(all).first(static_cast<std::size_t>(n))) {
      if (e.port_num == static_cast<std::uint32_t>(port)) add_entry(out, e, static_cast<int>(e.gid_index));
    }
    std::ranges::sort(out, {}, &gid_entry::index);
    return out;
  }
  // Kernels without the table query: walk the slots; ENODATA marks an empty one
  for (int i = 0; i < table_len; ++i) {
    ibv_gid_entry e{};
    if (ibv_query_gid_ex(ctx_.get(), static_cast<std::uint32_t>(port), static_cast<std::uint32_t>(i), &e, 0) == 0) {
      add_entry(out, e, i);
    }
  }
  return out;
}

}  // namespace rdmamesh::verbs
