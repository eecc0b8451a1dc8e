// The table of units and axis labels, and the walk that applies it to a group's datasets.
#include "rdmamesh/io/annotate.hpp"

#include <hdf5_hl.h>

#include <string>

#include <fmt/format.h>

#include "rdmamesh/io/h5.hpp"

namespace rdmamesh::io {
namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Units of the per-pair quantities a run, a sweep or a time series holds.
std::string_view pair_units(std::string_view n) {
  if (n == "tx_bw" || n == "rx_bw" || n == "tx_bw_t" || n == "rx_bw_t") return "bytes/s";
  if (n == "tx_rate" || n == "rx_rate") return "messages/s";
  if (n == "tx_msgs" || n == "rx_msgs" || n == "tx_total" || n == "rx_total" || n == "verify_errors") return "messages";
  if (n == "tx_bytes" || n == "rx_bytes") return "bytes";
  if (n == "tx_s" || n == "rx_s") return "s";
  if (n == "round") return "index";
  if (n == "flags") return "bitmask";
  if (n == "share") return "fraction";
  if (n == "contention") return "ratio";
  if (n == "lat_count") return "samples";
  if (n.starts_with("lat_") && ends_with(n, "_us")) return "us";
  return {};
}

}  // namespace

annotation annotation_for(group_kind group, std::string_view n, int rank) {
  switch (group) {
    case group_kind::ranks: {
      if (n == "mtu") return {"bytes", {"rank"}};
      if (n == "line_rate_bps") return {"bit/s", {"rank"}};
      if (n == "pid") return {"process id", {"rank"}};
      if (n == "mem_on_numa") return {"flag", {"rank"}};
      if (n == "setup_s") return {"s", {"rank", "phase"}};
      if (n == "qps") return {"QPs", {"rank"}};
      if (n == "cq_entries") return {"CQ entries", {"rank"}};
      if (n == "registered_bytes") return {"bytes", {"rank"}};
      if (n == "nics") return {"NICs", {"rank"}};
      if (n == "port" || n == "gid_index" || n == "node" || n == "local_rank" || n == "core" || n == "pu" ||
          n == "numa" || n == "rail" || n == "cpu_group")
        return {"index", {"rank"}};
      return {"text", {"rank"}};
    }
    case group_kind::outliers:
      if (n == "kind" || n == "text" || n == "basis") return {"text", {"cause"}};
      if (n == "send_pct" || n == "recv_pct")
        return {"percent of the cohort's median (basis noise) or of --expect", {"cause"}};
      if (n == "pairs" || n == "fine") return {"pairs", {"cause"}};
      return {"index", {"cause"}};
    case group_kind::retest:
      if (n == "text") return {"text", {"pair"}};
      if (n == "before_bw" || n == "alone_bw") return {"bytes/s", {"pair"}};
      if (n == "pct" || n == "lo_pct" || n == "hi_pct")
        return {"percent of its path's control pairs alone (their centre)", {"pair"}};
      if (n == "p_slow") return {"probability", {"pair"}};
      if (n == "path_controls") return {"pairs", {"pair"}};
      if (n == "controls_pct") return {"percent of its path's other control pairs' median alone", {"control"}};
      if (n == "still_slow" || n == "fine" || n == "counted" || n == "starved" || n == "named_link")
        return {"flag", {"pair"}};
      if (n == "cpu_share" || n == "controls_cpu_share") return {"share of a CPU", {"pair"}};
      if (n == "idle_share") return {"share of the engine's passes", {"pair"}};
      return {"index", {"pair"}};
    case group_kind::run:
      if (n == "events") return {"text", {"event"}};
      if (n == "fairness") return {"Jain's index", {"dst"}};
      if (n == "active") return {"flag", {"rank"}};
      if (n == "lat_hist_ns") return {"samples", {"bucket"}};
      if (n == "t_s") return {"s", {"t"}};
      if (rank == 3) return {pair_units(n), {"t", "src", "dst"}};
      return {pair_units(n), {"src", "dst"}};
    case group_kind::sweep:
      if (n == "msg_size") return {"bytes", {"size"}};
      if (n == "runs") return {"index", {"size"}};
      return {pair_units(n), {"size", "src", "dst"}};
    case group_kind::retest_parts:
      if (n == "kind") return {"text", {"part"}};
      if (n == "alone_pct" || n == "lo_pct" || n == "hi_pct")
        return {"percent of the control pairs alone (its 95 % interval)", {"part"}};
      if (n == "run_pct") return {"percent of the healthy in the run (the model's effect)", {"part"}};
      if (n == "p_slow") return {"probability", {"part"}};
      if (n == "dof") return {"degrees of freedom", {"part"}};
      if (n == "pairs" || n == "below" || n == "controls" || n == "held") return {"pairs", {"part"}};
      if (n == "sends" || n == "counted" || n == "cleared" || n == "within" || n == "narrowed" || n == "held_back" ||
          n == "explained")
        return {"flag", {"part"}};
      return {"index", {"part"}};
    case group_kind::scaling:
      if (n == "msg_size") return {"bytes", {"size"}};
      if (n == "active_per_node") return {"ranks per node", {"step"}};
      if (n == "runs") return {"index", {"size", "step"}};
      if (n == "node_bw" || n == "node_port_bw" || n == "node_loopback_bw")
        return {"bytes/s", {"size", "step", "node"}};
      if (n == "node_port_msg_rate") return {"messages/s", {"size", "step", "node"}};
      if (n == "rank_bw") return {"bytes/s", {"size", "step", "rank"}};
      return {};
  }
  return {};
}

void annotate_group(hid_t group, group_kind kind) {
  H5G_info_t info{};
  if (H5Gget_info(group, &info) < 0) throw h5::io_error("H5Gget_info failed");
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t len = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (len < 0) throw h5::io_error("H5Lget_name_by_idx failed");
    std::string name(static_cast<std::size_t>(len) + 1, '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT);
    name.resize(static_cast<std::size_t>(len));
    // H5Oopen + H5Iget_type: the same on HDF5 1.10 (Debian 12) and 1.12+
    h5::handle ds(H5Oopen(group, name.c_str(), H5P_DEFAULT), H5Oclose, fmt::format("H5Oopen({})", name));
    if (H5Iget_type(ds.get()) != H5I_DATASET) continue;
    if (H5Aexists(ds.get(), "units") > 0) continue;
    h5::handle space(H5Dget_space(ds.get()), H5Sclose, fmt::format("H5Dget_space({})", name));
    const int rank = H5Sget_simple_extent_ndims(space.get());
    const annotation a = annotation_for(kind, name, rank);
    if (a.units.empty()) continue;
    h5::set_attr(ds.get(), "units", std::string(a.units));
    if (static_cast<int>(a.dims.size()) != rank) continue;
    for (int d = 0; d < rank; ++d) {
      const std::string label(a.dims[static_cast<std::size_t>(d)]);
      if (H5DSset_label(ds.get(), static_cast<unsigned>(d), label.c_str()) < 0)
        throw h5::io_error(fmt::format("H5DSset_label({}, {})", name, d));
    }
  }
}

}  // namespace rdmamesh::io
