// Placement rules; see the header.
#include "rdmamesh/fabric/placement.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rdmamesh/util/error.hpp"

namespace rdmamesh::fabric {
namespace {

bool contains(const std::vector<int>& set, int x) {
  return std::find(set.begin(), set.end(), x) != set.end();
}

bool near(const nic_desc& nic, const core_desc& core) {
  return std::any_of(core.pus.begin(), core.pus.end(), [&](int pu) { return contains(nic.pus, pu); });
}

const core_desc* core_by_index(const topo_desc& topo, int index) {
  for (const auto& c : topo.cores) {
    if (c.core == index) return &c;
  }
  return nullptr;
}

// The NIC of the NICs near `cpus` that rank `local_rank` takes (spread over equally near ones);
// the first one when none is near. Returns its rail and how it was chosen.
std::pair<int, nic_how> closest_nic(const topo_desc& topo, const std::vector<int>& cpus, int local_rank) {
  std::vector<int> close;
  std::size_t best = 0;
  for (std::size_t k = 0; k < topo.nics.size(); ++k) {
    const auto& nic = topo.nics[k];
    const std::size_t shared = static_cast<std::size_t>(
        std::count_if(cpus.begin(), cpus.end(), [&](int pu) { return contains(nic.pus, pu); }));
    if (shared > best) {
      best = shared;
      close.clear();
    }
    if (shared == best && shared > 0) close.push_back(static_cast<int>(k));
  }
  if (topo.nics.size() == 1) return {0, nic_how::only};
  if (close.empty()) return {topo.nics.empty() ? -1 : 0, nic_how::only};
  if (close.size() == 1) return {close.front(), nic_how::nearest};
  return {close[static_cast<std::size_t>(local_rank) % close.size()], nic_how::spread};
}

// --nic-map's entry for a local rank: a rail number or a device name of this node.
int mapped_nic(const topo_desc& topo, const std::vector<std::string>& map, int local_rank) {
  const std::string& e = map[static_cast<std::size_t>(local_rank) % map.size()];
  std::vector<std::string> names;
  for (const auto& n : topo.nics) names.push_back(n.name);
  const auto it = std::find(names.begin(), names.end(), e);
  if (it != names.end()) return static_cast<int>(it - names.begin());
  if (!e.empty() && std::all_of(e.begin(), e.end(), [](char c) { return c >= '0' && c <= '9'; }) && e.size() < 6) {
    const int k = std::stoi(e);
    if (k < static_cast<int>(names.size())) return k;
  }
  throw usage_error(
      fmt::format("--nic-map entry '{}' (local rank {}): this node's NICs are {}; give a rail 0..{} or "
                  "one of these names",
                  e, local_rank, names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")),
                  names.empty() ? 0 : names.size() - 1));
}

// --bind nic with --nic-map: local rank i takes the next free core near its mapped NIC, else the
// next free one of `base`; by local rank (more ranks than cores wrap onto `base`).
std::vector<int> mapped_order(const topo_desc& topo, const std::vector<std::string>& map, int local_size,
                              const std::vector<int>& base) {
  std::set<int> taken;
  std::vector<int> out;
  for (int i = 0; i < local_size; ++i) {
    const nic_desc& nic = topo.nics[static_cast<std::size_t>(mapped_nic(topo, map, i))];
    auto free_near = std::find_if(base.begin(), base.end(), [&](int c) {
      const core_desc* core = core_by_index(topo, c);
      return !taken.count(c) && core != nullptr && near(nic, *core);
    });
    if (free_near == base.end())
      free_near = std::find_if(base.begin(), base.end(), [&](int c) { return !taken.count(c); });
    const int c = free_near != base.end() ? *free_near : base[static_cast<std::size_t>(i) % base.size()];
    taken.insert(c);
    out.push_back(c);
  }
  return out;
}

}  // namespace

const char* to_string(nic_how h) {
  switch (h) {
    case nic_how::only: return "only";
    case nic_how::nearest: return "nearest";
    case nic_how::spread: return "spread";
    case nic_how::map: return "nic-map";
  }
  return "?";
}

const char* to_string(bound_by b) {
  switch (b) {
    case bound_by::none: return "none";
    case bound_by::rdmamesh: return "rdmamesh";
    case bound_by::launcher: return "launcher";
  }
  return "?";
}

std::vector<int> core_order(const topo_desc& topo, bind_kind bind) {
  std::vector<const core_desc*> usable;
  for (const auto& c : topo.cores) {
    // a core is usable if the process may run on any of its PUs
    if (std::any_of(c.pus.begin(), c.pus.end(), [&](int pu) { return contains(topo.allowed_pus, pu); })) {
      usable.push_back(&c);
    }
  }
  std::vector<int> order;
  if (bind != bind_kind::nic || topo.nics.empty()) {
    for (const auto* c : usable) order.push_back(c->core);
    return order;
  }
  // each NIC in turn gives its next near core, so ranks alternate over NICs while near cores
  // last; then the cores near no NIC
  std::set<int> taken;
  std::vector<std::vector<int>> near_lists;
  for (const auto& nic : topo.nics) {
    std::vector<int> list;
    for (const auto* c : usable) {
      if (near(nic, *c)) list.push_back(c->core);
    }
    near_lists.push_back(std::move(list));
  }
  std::vector<std::size_t> next(near_lists.size(), 0);
  bool progressed = true;
  while (progressed) {
    progressed = false;
    for (std::size_t k = 0; k < near_lists.size(); ++k) {
      while (next[k] < near_lists[k].size() && taken.count(near_lists[k][next[k]])) ++next[k];
      if (next[k] < near_lists[k].size()) {
        const int core = near_lists[k][next[k]++];
        taken.insert(core);
        order.push_back(core);
        progressed = true;
      }
    }
  }
  for (const auto* c : usable) {
    if (!taken.count(c->core)) order.push_back(c->core);
  }
  return order;
}

placement place(const topo_desc& topo, int local_rank, int local_size, bind_kind bind,
                const std::vector<std::string>& nic_map) {
  placement p;
  const bool launcher_bound = !topo.bound_pus.empty() && topo.bound_pus.size() < topo.allowed_pus.size();

  if (launcher_bound || bind == bind_kind::none) {
    p.source = launcher_bound ? bound_by::launcher : bound_by::none;
    p.cpus = launcher_bound ? topo.bound_pus : topo.allowed_pus;
    // describe what it is: one core, one PU, one NUMA node, if so
    std::set<int> cores, nodes;
    for (const auto& c : topo.cores) {
      for (int pu : c.pus) {
        if (contains(p.cpus, pu)) {
          cores.insert(c.core);
          nodes.insert(c.numa);
        }
      }
    }
    if (cores.size() == 1) p.core = *cores.begin();
    if (p.cpus.size() == 1) p.pu = p.cpus.front();
    if (nodes.size() == 1) p.numa = *nodes.begin();
  } else {
    const std::vector<int> base = core_order(topo, bind);
    // --nic-map with --bind nic: each rank near the NIC the map gives it
    const std::vector<int> order = !nic_map.empty() && bind == bind_kind::nic && !base.empty()
                                       ? mapped_order(topo, nic_map, local_size, base)
                                       : base;
    if (!order.empty()) {
      const std::size_t i = static_cast<std::size_t>(local_rank) % order.size();
      p.more_ranks_than_cores = static_cast<std::size_t>(local_size) > base.size();
      const core_desc* c = core_by_index(topo, order[i]);
      p.source = bound_by::rdmamesh;
      p.core = c->core;
      // the core's first PU the process may use: one hardware thread, no migration
      for (int pu : c->pus) {
        if (contains(topo.allowed_pus, pu)) {
          p.pu = pu;
          break;
        }
      }
      p.cpus = {p.pu};
      p.numa = c->numa;
    }
  }
  if (!nic_map.empty()) {
    p.rail = mapped_nic(topo, nic_map, local_rank);
    p.how = nic_how::map;
  } else {
    std::tie(p.rail, p.how) = closest_nic(topo, p.cpus, local_rank);
  }
  p.nics = static_cast<int>(topo.nics.size());
  if (p.rail >= 0) p.device = topo.nics[static_cast<std::size_t>(p.rail)].name;
  return p;
}

}  // namespace rdmamesh::fabric
