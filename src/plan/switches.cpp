// Slurm's tree topology: host lists, topology.conf lines, the job's hosts under its leaves.
#include "rdmamesh/plan/switches.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rdmamesh/util/error.hpp"
#include "rdmamesh/util/runs.hpp"

namespace rdmamesh::plan {
namespace {

constexpr std::size_t max_hosts = 1 << 20;  // a host list that expands past this is a typo

std::string lower(std::string_view s) {
  std::string out(s);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Top-level commas only: "a[1,2],b" -> "a[1,2]", "b".
std::vector<std::string_view> split_top(std::string_view list) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) throw usage_error(fmt::format("host list '{}': a ']' without its '['", list));
    if (c == ',' && depth == 0) {
      if (i > start) out.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) throw usage_error(fmt::format("host list '{}': a '[' without its ']'", list));
  return out;
}

std::uint64_t number(std::string_view digits, std::string_view list) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) {
    throw usage_error(fmt::format("host list '{}': '{}' is not a number (ranges are like [1-4,7])", list, digits));
  }
  return v;
}

// One name with bracket groups: the first group expanded, the rest recursively.
void expand_one(std::string_view name, std::string_view list, std::vector<std::string>& out) {
  const auto open = name.find('[');
  if (open == std::string_view::npos) {
    out.emplace_back(name);
    return;
  }
  const auto close = name.find(']', open);
  const std::string_view head = name.substr(0, open), body = name.substr(open + 1, close - open - 1),
                         tail = name.substr(close + 1);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= body.size(); ++i) {
    if (i < body.size() && body[i] != ',') continue;
    const std::string_view item = body.substr(start, i - start);
    start = i + 1;
    const auto dash = item.find('-');
    const std::string_view lo_s = item.substr(0, dash),
                           hi_s = dash == std::string_view::npos ? lo_s : item.substr(dash + 1);
    const std::uint64_t lo = number(lo_s, list), hi = number(hi_s, list);
    if (lo > hi) throw usage_error(fmt::format("host list '{}': the range {} runs backwards", list, item));
    if (out.size() + (hi - lo) >= max_hosts) {
      throw usage_error(fmt::format("host list '{}' names more than {} hosts", list, max_hosts));
    }
    for (std::uint64_t v = lo; v <= hi; ++v) {
      expand_one(fmt::format("{}{:0{}}{}", head, v, lo_s.size(), tail), list, out);
    }
  }
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view list) {
  std::vector<std::string> out;
  for (auto name : split_top(list)) expand_one(name, list, out);
  return out;
}

std::string compress_hostlist(std::span<const std::string> names) {
  // a name's last run of digits is its number; names that share the text around it, and its
  // zero padding (a width, or none), form one bracket group
  struct group {
    std::string prefix, suffix;
    std::size_t width;  // 0: unpadded
    std::vector<std::uint64_t> numbers;
  };
  struct parts {
    std::string prefix, digits, suffix;
  };
  const auto split = [](const std::string& name) -> std::optional<parts> {
    const auto last = name.find_last_of("0123456789");
    if (last == std::string::npos) return std::nullopt;
    const auto first = name.find_last_not_of("0123456789", last) + 1;  // npos + 1 == 0
    if (last + 1 - first > 18) return std::nullopt;
    return parts{name.substr(0, first), name.substr(first, last + 1 - first), name.substr(last + 1)};
  };
  const auto padded = [](const std::string& d) { return d.size() > 1 && d[0] == '0'; };
  // the padded widths seen around each text: an unpadded number as wide joins them (08 and 10)
  std::set<std::tuple<std::string, std::string, std::size_t>> widths;
  for (const auto& name : names)
    if (const auto p = split(name); p && padded(p->digits)) widths.emplace(p->prefix, p->suffix, p->digits.size());
  std::vector<group> groups;
  std::vector<std::string> plain;
  std::vector<std::pair<bool, std::size_t>> order;  // (a group?, its index), first appearance
  for (const auto& name : names) {
    const auto p = split(name);
    if (!p) {
      order.emplace_back(false, plain.size());
      plain.push_back(name);
      continue;
    }
    // (named, not a structured binding: clang before 16 cannot capture one in a lambda)
    const std::string &prefix = p->prefix, &digits = p->digits, &suffix = p->suffix;
    const std::size_t width = padded(digits) || widths.contains({prefix, suffix, digits.size()}) ? digits.size() : 0;
    auto g = std::ranges::find_if(
        groups, [&](const group& x) { return x.prefix == prefix && x.suffix == suffix && x.width == width; });
    if (g == groups.end()) {
      order.emplace_back(true, groups.size());
      g = groups.insert(groups.end(), {prefix, suffix, width, {}});
    }
    g->numbers.push_back(std::stoull(digits));
  }
  std::vector<std::string> out;
  for (const auto& [is_group, i] : order) {
    if (!is_group) {
      out.push_back(plain[i]);
      continue;
    }
    auto& g = groups[i];
    std::sort(g.numbers.begin(), g.numbers.end());
    g.numbers.erase(std::unique(g.numbers.begin(), g.numbers.end()), g.numbers.end());
    const std::string runs = number_runs(g.numbers, g.width);
    out.push_back(g.numbers.size() == 1 ? g.prefix + runs + g.suffix : g.prefix + "[" + runs + "]" + g.suffix);
  }
  return fmt::format("{}", fmt::join(out, ","));
}

std::string short_host(std::string_view host) {
  return std::string(host.substr(0, host.find('.')));
}

namespace {

// One logical line's keys (SwitchName=, Nodes=, Switches=); `error` names what is wrong with it.
struct switch_line {
  std::string name, nodes, switches;
  bool has_nodes = false, has_switches = false;
  std::string error;
};

switch_line parse_switch_line(std::string_view l, bool strict) {
  switch_line out;
  std::size_t i = 0;
  while (i < l.size()) {
    while (i < l.size() && std::isspace(static_cast<unsigned char>(l[i]))) ++i;
    if (i >= l.size()) break;
    std::size_t j = i;
    while (j < l.size() && !std::isspace(static_cast<unsigned char>(l[j]))) ++j;
    const std::string_view tok = l.substr(i, j - i);
    i = j;
    const auto eq = tok.find('=');
    if (eq == std::string_view::npos) {
      out.error = fmt::format("'{}' is not Key=Value (lines look like SwitchName=s0 Nodes=node[1-4])", tok);
      return out;
    }
    const std::string key = lower(tok.substr(0, eq));
    const std::string value(tok.substr(eq + 1));
    if (key == "switchname") {
      out.name = value;
    } else if (key == "nodes") {
      out.nodes = value;
      out.has_nodes = true;
    } else if (key == "switches") {
      out.switches = value;
      out.has_switches = true;
    } else if (strict && key != "linkspeed") {
      out.error = fmt::format("unknown key '{}' (the tree form knows SwitchName, Switches, Nodes, LinkSpeed)",
                              tok.substr(0, eq));
      return out;
    }
  }
  return out;
}

// The tree's shape, once every switch is read: each Switches= child defined and under one parent,
// no loop, each node under one leaf. `line_of`: where each switch was defined, for the message.
void check_switch_tree(switch_tree& t, const std::map<std::string, std::int32_t>& index,
                       std::span<const std::pair<std::int32_t, std::string>> children,
                       std::span<const std::size_t> line_of) {
  const auto fail = [&](std::size_t line, const std::string& what) {
    return usage_error(fmt::format("topology {} line {}: {}", t.source, line, what));
  };
  for (const auto& [parent, list] : children) {
    const std::size_t at = line_of[static_cast<std::size_t>(parent)];
    std::vector<std::string> names;
    try {
      names = expand_hostlist(list);
    } catch (const usage_error& e) {
      throw fail(at, e.what());
    }
    for (const auto& child : names) {
      const auto it = index.find(child);
      if (it == index.end())
        throw fail(at, fmt::format("Switches= names '{}', which no SwitchName= line defines", child));
      auto& c = t.switches[static_cast<std::size_t>(it->second)];
      if (it->second == parent) throw fail(at, fmt::format("switch '{}' is under itself", child));
      if (c.parent >= 0) {
        throw fail(at, fmt::format("switch '{}' is under both '{}' and '{}' (a tree has one parent)", child,
                                   t.switches[static_cast<std::size_t>(c.parent)].name,
                                   t.switches[static_cast<std::size_t>(parent)].name));
      }
      c.parent = parent;
    }
  }
  // a cycle has no top: walking up from any switch must end within as many steps as switches
  for (std::size_t s = 0; s < t.switches.size(); ++s) {
    std::int32_t at = static_cast<std::int32_t>(s);
    for (std::size_t steps = 0; at >= 0; ++steps) {
      if (steps > t.switches.size()) {
        throw fail(line_of[s],
                   fmt::format("switch '{}' is in a loop of Switches= (a tree has a top)", t.switches[s].name));
      }
      at = t.switches[static_cast<std::size_t>(at)].parent;
    }
  }
  std::map<std::string, std::size_t> leaf_of;
  for (std::size_t s = 0; s < t.switches.size(); ++s) {
    for (const auto& n : t.switches[s].nodes) {
      if (auto [it, fresh] = leaf_of.emplace(n, s); !fresh) {
        throw fail(line_of[s], fmt::format("node '{}' is under both '{}' and '{}' (one leaf per node; several NICs "
                                           "per node are not read from topology.conf)",
                                           n, t.switches[it->second].name, t.switches[s].name));
      }
    }
  }
}

}  // namespace

switch_tree parse_switch_tree(std::string_view text, std::string source, bool strict) {
  switch_tree t;
  t.source = std::move(source);
  std::map<std::string, std::int32_t> index;
  std::vector<std::pair<std::int32_t, std::string>> children;  // (switch, its Switches= list)
  std::vector<std::size_t> line_of;
  std::size_t line_no = 0;
  std::string logical;
  const auto fail = [&](std::size_t line, const std::string& what) {
    return usage_error(fmt::format("topology {} line {}: {}", t.source, line, what));
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    raw = raw.substr(0, raw.find('#'));
    const bool more = !raw.empty() && raw.back() == '\\';  // a line continued on the next
    logical += raw.substr(0, raw.size() - (more ? 1 : 0));
    logical += ' ';
    if (more && pos <= text.size()) continue;
    const switch_line l = parse_switch_line(logical, strict);
    logical.clear();
    if (!l.error.empty()) throw fail(line_no, l.error);
    if (l.name.empty() && !l.has_nodes && !l.has_switches) continue;  // blank, a comment, or only extra keys
    if (l.name.empty()) throw fail(line_no, "a switch without SwitchName=");
    if (index.contains(l.name)) throw fail(line_no, fmt::format("switch '{}' is named twice", l.name));
    const auto me = static_cast<std::int32_t>(t.switches.size());
    index[l.name] = me;
    switch_desc d;
    d.name = l.name;
    // scontrol lists an upper switch's nodes too (those below it): its Switches= say where
    d.leaf = !l.has_switches;
    try {
      for (auto& h : d.leaf&& l.has_nodes ? expand_hostlist(l.nodes) : std::vector<std::string>{})
        d.nodes.push_back(short_host(h));
    } catch (const usage_error& e) {
      throw fail(line_no, e.what());
    }
    if (l.has_switches) children.emplace_back(me, l.switches);
    t.switches.push_back(std::move(d));
    line_of.push_back(line_no);
  }
  if (t.switches.empty()) {
    throw usage_error(
        fmt::format("topology {}: no SwitchName= line; give Slurm's topology.conf (tree form)", t.source));
  }
  check_switch_tree(t, index, children, line_of);
  return t;
}

std::vector<job_node> job_nodes(std::span<const std::string> hosts) {
  std::vector<job_node> out;
  std::set<std::string> seen;
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    std::string name = short_host(hosts[r]);
    if (seen.insert(name).second) out.push_back({std::move(name), static_cast<std::uint32_t>(r)});
  }
  return out;
}

std::vector<std::int32_t> leaf_of_hosts(const switch_tree& t, std::span<const std::string> hosts) {
  std::map<std::string, std::int32_t> leaf;
  for (std::size_t s = 0; s < t.switches.size(); ++s) {
    for (const auto& n : t.switches[s].nodes) leaf.emplace(n, static_cast<std::int32_t>(s));
  }
  std::vector<std::int32_t> out;
  for (const auto& h : hosts) {
    const auto it = leaf.find(short_host(h));
    out.push_back(it == leaf.end() ? -1 : it->second);
  }
  return out;
}

std::vector<std::vector<std::uint8_t>> ranks_under(const switch_tree& t, std::span<const std::int32_t> leaf_of_rank) {
  std::vector<std::vector<std::uint8_t>> out(t.switches.size(), std::vector<std::uint8_t>(leaf_of_rank.size(), 0));
  for (std::size_t r = 0; r < leaf_of_rank.size(); ++r) {
    for (std::int32_t s = leaf_of_rank[r]; s >= 0; s = t.switches[static_cast<std::size_t>(s)].parent) {
      out[static_cast<std::size_t>(s)][r] = 1;
    }
  }
  return out;
}

}  // namespace rdmamesh::plan
