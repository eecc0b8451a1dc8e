// The fabric's switches, as Slurm's topology.conf (tree plugin) or `scontrol show topology`
// describes them: leaf switches hold nodes, upper switches hold switches. The finder tests each
// switch's uplink (the ranks under it, their pairs out of and into that subtree) beside nodes
// and ranks, so a leaf's degraded uplink is named once instead of as a crowd of its nodes.
//
// Seam for multi-rail fabrics: a leaf is a switch of one rail; rails x leaves become more
// switches here, each with the ranks (not nodes) whose NIC hangs off it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmamesh::plan {

struct switch_desc {
  std::string name;
  std::int32_t parent = -1;        // index of the switch above it; -1: a top switch
  bool leaf = false;               // holds nodes (no Switches=)
  std::vector<std::string> nodes;  // a leaf's nodes, short host names
};

struct switch_tree {
  std::vector<switch_desc> switches;
  std::string source;  // the file, or "scontrol show topology"
  bool empty() const { return switches.empty(); }
};

// Slurm's host list form: "tux[0-3,7],gpu[01-02]-ib,login" -> every name, padding kept.
// Throws usage_error on unbalanced brackets or a bad range.
std::vector<std::string> expand_hostlist(std::string_view list);

// The inverse, as Slurm prints one: {"n0224", …, "n0255"} -> "n[0224-0255]"; names sharing the
// text around their last number and its padding share a bracket, in first-appearance order.
std::string compress_hostlist(std::span<const std::string> names);

// Throws usage_error naming the source, the line and what to fix: a line without SwitchName, an
// unknown key (strict for a file; `scontrol`'s extra keys are skipped), a switch named twice,
// Switches= naming an unknown switch, a switch under two parents or under itself, a node under
// two leaves, no switch at all.
switch_tree parse_switch_tree(std::string_view text, std::string source, bool strict = true);

// The short name (up to the first '.'): Slurm names nodes by it, hostname may say more.
std::string short_host(std::string_view host);

// The job's nodes as Slurm names them (short names), each once, in rank order, with the first
// rank on each: what the header, /topology and the uplinks' names list.
struct job_node {
  std::string name;
  std::uint32_t first_rank;
};
std::vector<job_node> job_nodes(std::span<const std::string> hosts);

// Where the job's hosts sit: each host's leaf index (-1: under no switch of the tree).
std::vector<std::int32_t> leaf_of_hosts(const switch_tree& t, std::span<const std::string> hosts);

// By switch, which ranks sit under it (its subtree), from each rank's leaf.
std::vector<std::vector<std::uint8_t>> ranks_under(const switch_tree& t, std::span<const std::int32_t> leaf_of_rank);

}  // namespace rdmamesh::plan
