#include "rdmamesh/fabric/pcie.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

namespace rdmamesh::fabric {
namespace {

std::string first_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

int parse_width(std::string_view text) {
  if (!text.empty() && (text.front() == 'x' || text.front() == 'X')) text.remove_prefix(1);
  int w = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), w);
  return ec == std::errc() ? w : 0;
}

std::string speed_text(double gts) {
  return fmt::format("{:g} GT/s", gts);
}

}  // namespace

double parse_gts(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && v > 0 ? v : 0;
}

std::vector<pcie_end> read_pcie_path(const std::filesystem::path& device_dir) {
  std::vector<pcie_end> out;
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::canonical(device_dir, ec);
  if (ec) return out;
  // up the device tree until a folder without a link (the host bridge, the root of sysfs)
  for (; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    if (!std::filesystem::exists(dir / "current_link_speed", ec)) {
      if (!out.empty()) break;
      continue;  // a NIC's function folder may sit below a plain node: keep looking up
    }
    pcie_end e;
    e.device = dir.filename().string();
    e.gts = parse_gts(first_line(dir / "current_link_speed"));
    e.max_gts = parse_gts(first_line(dir / "max_link_speed"));
    e.width = parse_width(first_line(dir / "current_link_width"));
    e.max_width = parse_width(first_line(dir / "max_link_width"));
    out.push_back(std::move(e));
  }
  return out;
}

std::string link_text(const pcie_end& e) {
  if (e.gts <= 0 || e.width <= 0) return "";
  return fmt::format("{} x{}", speed_text(e.gts), e.width);
}

std::string trained_down(std::span<const pcie_end> path) {
  for (std::size_t i = 0; i + 1 < path.size(); i += 2) {
    const pcie_end& down = path[i];
    const pcie_end& up = path[i + 1];
    const double can_gts = std::min(down.max_gts, up.max_gts);
    const int can_width = std::min(down.max_width, up.max_width);
    const bool slow = down.gts > 0 && can_gts > 0 && down.gts < can_gts;
    const bool narrow = down.width > 0 && can_width > 0 && down.width < can_width;
    if (slow || narrow) {
      return fmt::format("{}: {} x{}, where both ends can {} x{}", down.device, speed_text(down.gts), down.width,
                         speed_text(can_gts), can_width);
    }
  }
  return "";
}

}  // namespace rdmamesh::fabric
