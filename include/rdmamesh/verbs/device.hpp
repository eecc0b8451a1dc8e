// An open RDMA device (ibv_context) and what rdmamesh asks of it: device limits, port
// attributes and the GID table with each entry's type (IB, RoCE v1, RoCE v2).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <infiniband/verbs.h>

namespace rdmamesh::verbs {

enum class gid_kind : std::uint8_t { ib, roce_v1, roce_v2, other };

struct gid_entry {
  int index = 0;
  std::array<std::uint8_t, 16> raw{};
  gid_kind kind = gid_kind::other;
};

std::string format_gid(const std::array<std::uint8_t, 16>& raw);  // "::ffff:10.0.2.15", "fe80::..."
bool is_ipv4_mapped(const std::array<std::uint8_t, 16>& raw);
const char* to_string(gid_kind k);

// The libibverbs this process loaded, by its file name (libibverbs.so.1.14.44.0: rdma-core 44);
// libibverbs has no version call.
std::string library_version();

// Names of the devices libibverbs can open, in its order. Empty when there are none.
std::vector<std::string> device_names();

class context {
 public:
  explicit context(const std::string& device_name);
  ibv_context* get() const { return ctx_.get(); }
  const std::string& name() const { return name_; }

  const ibv_device_attr& device_attr() const { return dev_attr_; }
  // The board (part) id the driver publishes in sysfs, e.g. "MT_0000000222"; empty if none (rxe).
  std::string board_id() const;
  ibv_port_attr port_attr(int port) const;
  std::vector<gid_entry> gids(int port, int table_len) const;  // valid (non-zero) entries only

 private:
  struct closer {
    void operator()(ibv_context* c) const noexcept;
  };
  std::string name_;
  std::unique_ptr<ibv_context, closer> ctx_;
  ibv_device_attr dev_attr_{};
};

using context_ptr = std::shared_ptr<context>;

}  // namespace rdmamesh::verbs
