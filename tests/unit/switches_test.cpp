// Slurm's tree topology as rdmamesh reads it: host lists, topology.conf and scontrol's form, the
// errors a bad file gets, and which ranks sit under each switch.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "rdmamesh/plan/switches.hpp"
#include "rdmamesh/util/error.hpp"

using namespace rdmamesh;
using namespace rdmamesh::plan;

namespace {

std::string error_of(const std::string& text, bool strict = true) {
  try {
    (void)parse_switch_tree(text, "t.conf", strict);
  } catch (const usage_error& e) {
    return e.what();
  }
  return "";
}

const char* two_leaves = R"(# two leaves under one spine
SwitchName=leaf1 Nodes=node[1-2] LinkSpeed=100
SwitchName=leaf2 Nodes=node3,node4
SwitchName=spine Switches=leaf[1-2]
)";

}  // namespace

TEST_CASE("host lists expand as Slurm writes them, padding kept") {
  CHECK(expand_hostlist("tux[0-2,7],login") == std::vector<std::string>{"tux0", "tux1", "tux2", "tux7", "login"});
  CHECK(expand_hostlist("gpu[08-10]-ib") == std::vector<std::string>{"gpu08-ib", "gpu09-ib", "gpu10-ib"});
  CHECK(expand_hostlist("r[1-2]n[1-2]") == std::vector<std::string>{"r1n1", "r1n2", "r2n1", "r2n2"});
  CHECK(expand_hostlist("").empty());
  CHECK_THROWS_WITH_AS(expand_hostlist("tux[1-3"), "host list 'tux[1-3': a '[' without its ']'", usage_error);
  CHECK_THROWS_WITH_AS(expand_hostlist("tux[3-1]"), "host list 'tux[3-1]': the range 3-1 runs backwards", usage_error);
  CHECK_THROWS_AS(expand_hostlist("tux[a-b]"), usage_error);
  CHECK_THROWS_AS(expand_hostlist("n[0-99999999]"), usage_error);  // a typo, not a cluster
}

TEST_CASE("host lists compress as Slurm prints them, and expand back") {
  using v = std::vector<std::string>;
  const v leaf{"n0224", "n0225", "n0226", "n0227", "n0229", "n0231", "n0230"};
  CHECK(compress_hostlist(leaf) == "n[0224-0227,0229-0231]");
  CHECK(compress_hostlist(v{"gpu08-ib", "gpu09-ib", "gpu10-ib"}) == "gpu[08-10]-ib");  // 10 fits width 2
  CHECK(compress_hostlist(v{"node9", "node10", "login", "node11"}) == "node[9-11],login");
  CHECK(compress_hostlist(v{"node5"}) == "node5");
  CHECK(compress_hostlist(v{"r1n1", "r1n2", "r2n1"}) == "r1n[1-2],r2n1");
  CHECK(compress_hostlist(v{"a", "a"}) == "a,a");  // no number: as given
  CHECK(compress_hostlist(v{}).empty());
  for (const v& names : {leaf, v{"gpu08-ib", "gpu09-ib", "gpu10-ib"}, v{"x001", "x1", "x02", "x100"}}) {
    auto back = expand_hostlist(compress_hostlist(names));
    auto want = names;
    std::sort(back.begin(), back.end());
    std::sort(want.begin(), want.end());
    CHECK(back == want);
  }
}

TEST_CASE("the job's nodes: short names, each once, in rank order, with the first rank on each") {
  const std::vector<std::string> hosts{"node2.cluster", "node1", "node2", "node3.cluster", "node1"};
  const auto nodes = job_nodes(hosts);
  REQUIRE(nodes.size() == 3);
  CHECK(nodes[0].name == "node2");
  CHECK(nodes[0].first_rank == 0);
  CHECK(nodes[1].name == "node1");
  CHECK(nodes[1].first_rank == 1);
  CHECK(nodes[2].name == "node3");
  CHECK(nodes[2].first_rank == 3);
  CHECK(job_nodes({}).empty());
}

TEST_CASE("topology.conf: leaves hold nodes, a spine holds leaves") {
  const auto t = parse_switch_tree(two_leaves, "t.conf");
  REQUIRE(t.switches.size() == 3);
  CHECK(t.source == "t.conf");
  CHECK(t.switches[0].name == "leaf1");
  CHECK(t.switches[0].leaf);
  CHECK(t.switches[0].nodes == std::vector<std::string>{"node1", "node2"});
  CHECK(t.switches[0].parent == 2);
  CHECK(t.switches[1].parent == 2);
  CHECK_FALSE(t.switches[2].leaf);
  CHECK(t.switches[2].parent == -1);
}

TEST_CASE("scontrol show topology: upper switches list their nodes too, and extra keys are skipped") {
  const auto t = parse_switch_tree(
      "SwitchName=s0 Level=0 LinkSpeed=1 Nodes=n[1-2]\nSwitchName=s1 Level=0 LinkSpeed=1 Nodes=n[3-4]\n"
      "SwitchName=s2 Level=1 LinkSpeed=1 Nodes=n[1-4] Switches=s[0-1]\n",
      "scontrol show topology", false);
  REQUIRE(t.switches.size() == 3);
  CHECK(t.switches[2].nodes.empty());  // not a leaf: its nodes are its leaves'
  const std::vector<std::string> hosts{"n1.cluster.org", "n3", "n9"};
  CHECK(leaf_of_hosts(t, hosts) == std::vector<std::int32_t>{0, 1, -1});
}

TEST_CASE("a bad topology file gets one line naming the line and the fix") {
  CHECK(error_of("SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n") ==
        "topology t.conf line 2: switch 'a' is named twice");
  CHECK(error_of("SwitchName=a Node=n1\n") ==
        "topology t.conf line 1: unknown key 'Node' (the tree form knows SwitchName, Switches, Nodes, LinkSpeed)");
  CHECK(error_of("SwitchName=a Node=n1\n", false).empty());  // scontrol may say more than a file
  CHECK(error_of("Nodes=n1\n") == "topology t.conf line 1: a switch without SwitchName=");
  CHECK(error_of("SwitchName=top Switches=leaf9\n") ==
        "topology t.conf line 1: Switches= names 'leaf9', which no SwitchName= line defines");
  CHECK(error_of("SwitchName=l Nodes=n1\nSwitchName=a Switches=l\nSwitchName=b Switches=l\n") ==
        "topology t.conf line 3: switch 'l' is under both 'a' and 'b' (a tree has one parent)");
  CHECK(error_of("SwitchName=a Switches=b\nSwitchName=b Switches=a\n").find("is in a loop") != std::string::npos);
  CHECK(error_of("SwitchName=a Switches=a\n") == "topology t.conf line 1: switch 'a' is under itself");
  CHECK(error_of("SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n2\n")
            .starts_with("topology t.conf line 2: node 'n2' is under both 'a' and 'b'"));
  CHECK(error_of("# nothing\n\n") == "topology t.conf: no SwitchName= line; give Slurm's topology.conf (tree form)");
  CHECK(error_of("SwitchName=a Nodes\n").starts_with("topology t.conf line 1: 'Nodes' is not Key=Value"));
  CHECK(error_of("SwitchName=a Nodes=n[1-\n") == "topology t.conf line 1: host list 'n[1-': a '[' without its ']'");
}

TEST_CASE("a line continued with a backslash is one line") {
  const auto t = parse_switch_tree("SwitchName=a \\\n  Nodes=n[1-3]\n", "t.conf");
  REQUIRE(t.switches.size() == 1);
  CHECK(t.switches[0].nodes.size() == 3);
}

TEST_CASE("ranks under a switch: its leaves' ranks, up the tree; a host under no switch is under none") {
  const auto t = parse_switch_tree(two_leaves, "t.conf");
  const std::vector<std::string> hosts{"node1", "node1", "node3", "node4", "node7"};
  const auto leaf = leaf_of_hosts(t, hosts);
  CHECK(leaf == std::vector<std::int32_t>{0, 0, 1, 1, -1});
  const auto under = ranks_under(t, leaf);
  REQUIRE(under.size() == 3);
  CHECK(under[0] == std::vector<std::uint8_t>{1, 1, 0, 0, 0});
  CHECK(under[1] == std::vector<std::uint8_t>{0, 0, 1, 1, 0});
  CHECK(under[2] == std::vector<std::uint8_t>{1, 1, 1, 1, 0});
}
