// Why a cause: its category from the ports' counters and the hosts' CPU figures over the runs that
// named it, as an operator reads it in the console, the verdict JSON and the drain reason.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "rdmamesh/engine/host.hpp"
#include "rdmamesh/fabric/port_counters.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/io/verdict.hpp"
#include "rdmamesh/stats/verdict.hpp"
#include "rdmamesh/stats/why.hpp"

using namespace rdmamesh;

namespace {

// three nodes, two ranks each, one NIC per node (rxe_nodeK), port 1
std::vector<fabric::rank_info> three_nodes() {
  std::vector<fabric::rank_info> out(6);
  for (int i = 0; i < 6; ++i) {
    auto& r = out[static_cast<std::size_t>(i)];
    r.node = i / 2;
    r.rail = 0;
    r.port = 1;
    const std::string host = "node" + std::to_string(i / 2 + 1);
    const std::string dev = "rxe_" + host;
    std::strncpy(r.host.data(), host.c_str(), r.host.size() - 1);
    std::strncpy(r.device.data(), dev.c_str(), r.device.size() - 1);
  }
  return out;
}

// one reading per node, by its first rank
std::vector<fabric::port_reading> ports(const std::vector<fabric::counter_set>& per_node) {
  std::vector<fabric::port_reading> out;
  for (std::size_t n = 0; n < per_node.size(); ++n) {
    out.push_back({static_cast<std::int32_t>(2 * n), "rxe_node" + std::to_string(n + 1), 1, per_node[n]});
  }
  return out;
}

// every rank had `share` of a CPU over 2 s, except those listed with their own
std::vector<engine::host_use> hosts(double share, const std::vector<std::pair<std::size_t, double>>& except = {}) {
  std::vector<engine::host_use> out(6);
  for (auto& h : out) {
    h.known = true;
    h.wall_s = 2;
    h.cpu_s = 2 * share;
  }
  for (const auto& [r, s] : except) out[r].cpu_s = 2 * s;
  return out;
}

// node 1 (node2) named by run 0, its sends at 45-55 %
stats::job_verdict node2_slow() {
  stats::job_verdict v;
  v.status = stats::health::degraded;
  v.runs = v.runs_judged = 1;
  stats::folded_cause c;
  c.kind = stats::outlier_kind::node;
  c.node = 1;
  c.runs = {0};
  c.labels = {"mesh 4K"};
  c.send_lo = 45;
  c.send_hi = 55;
  c.recv_lo = c.recv_hi = std::nan("");
  c.pairs = 8;
  c.counted = true;
  v.causes.push_back(c);
  return v;
}

stats::explanation explained(stats::job_verdict v, const std::vector<fabric::port_reading>& p,
                             const std::vector<engine::host_use>& h, const std::vector<fabric::rank_info>& ranks) {
  const std::vector<stats::run_evidence> runs{{0, h, p}};
  stats::explain(v, runs, ranks);
  return v.causes.front().why;
}

}  // namespace

TEST_CASE("a port that drops packets is a link cause: its retransmits apart from the other ports'") {
  const auto ranks = three_nodes();
  // netem loss on node2's egress, as rxe counted it in the emulated cluster: every port
  // retransmits a little under emulation, node2's far more
  const auto p = ports({{{"completer_retry_err", 7}, {"rcvd_seq_err", 1}},
                        {{"completer_retry_err", 299}, {"rcvd_seq_err", 240}},
                        {{"completer_retry_err", 3}, {"rcvd_seq_err", 0}}});
  const auto why = explained(node2_slow(), p, hosts(0.35), ranks);
  CHECK(why.cat == stats::category::link);
  CHECK(why.text == "completer_retry_err +299, rcvd_seq_err +240 on rxe_node2 (the other ports' median: 5, 1)");
  CHECK(why.brief == "completer_retry_err +299");

  SUBCASE("on ingress the senders retransmit; the receiver's sequence errors set its port apart") {
    const auto q = ports({{{"completer_retry_err", 150}, {"rcvd_seq_err", 2}},
                          {{"completer_retry_err", 6}, {"rcvd_seq_err", 180}},
                          {{"completer_retry_err", 140}, {"rcvd_seq_err", 1}}});
    const auto w = explained(node2_slow(), q, hosts(0.35), ranks);
    CHECK(w.cat == stats::category::link);
    CHECK(w.brief == "rcvd_seq_err +180");
  }
  SUBCASE("retransmits every port counts alike are the emulator's, not the cause's") {
    const auto q = ports({{{"completer_retry_err", 40}}, {{"completer_retry_err", 55}}, {{"completer_retry_err", 35}}});
    CHECK(explained(node2_slow(), q, hosts(0.35), ranks).cat == stats::category::rate);
  }
  SUBCASE("a handful of errors on a real link is not evidence: ten at least") {
    const auto q = ports({{{"symbol_error", 0}}, {{"symbol_error", 9}}, {{"symbol_error", 0}}});
    CHECK(explained(node2_slow(), q, hosts(0.35), ranks).cat == stats::category::rate);
    const auto r = ports({{{"symbol_error", 0}}, {{"symbol_error", 12}}, {{"symbol_error", 0}}});
    CHECK(explained(node2_slow(), r, hosts(0.35), ranks).cat == stats::category::link);
  }
}

TEST_CASE("congestion notifications without errors are congestion; slow with neither is rate") {
  const auto ranks = three_nodes();
  const auto cnp = ports({{{"np_cnp_sent", 0}, {"out_of_sequence", 0}},
                          {{"np_cnp_sent", 5000}, {"out_of_sequence", 0}},
                          {{"np_cnp_sent", 20}, {"out_of_sequence", 0}}});
  const auto c = explained(node2_slow(), cnp, hosts(0.35), ranks);
  CHECK(c.cat == stats::category::congestion);
  CHECK(c.text == "np_cnp_sent +5000 on rxe_node2 (the other ports' median: 10), no error counter apart");

  // tc tbf on node2's port: slow, nothing counted apart, its ranks had their share of a CPU
  const auto quiet = ports({{{"rcvd_seq_err", 2}}, {{"rcvd_seq_err", 3}}, {{"rcvd_seq_err", 2}}});
  const auto r = explained(node2_slow(), quiet, hosts(0.35, {{2, 0.36}, {3, 0.32}}), ranks);
  CHECK(r.cat == stats::category::rate);
  CHECK(r.text ==
        "no error or congestion counter apart; its ranks had 34 % of a CPU while measured, the median rank 35 %");
  CHECK(r.counters == std::vector<std::pair<std::string, std::uint64_t>>{{"rcvd_seq_err", 3}});
  CHECK(r.others == std::vector<std::pair<std::string, std::uint64_t>>{{"rcvd_seq_err", 2}});

  SUBCASE("no counters read at all: still rate, and it says so") {
    const auto w = explained(node2_slow(), {}, hosts(0.35), ranks);
    CHECK(w.cat == stats::category::rate);
    CHECK(w.text.starts_with("no error or congestion counter apart (no counters read);"));
  }
}

TEST_CASE("a rank that waited for a CPU is a host cause: its CPU deficit explains its shortfall") {
  const auto ranks = three_nodes();
  stats::job_verdict v = node2_slow();
  v.causes.front().kind = stats::outlier_kind::rank;
  v.causes.front().rank = 3;
  // a CPU hog on rank 3's core: it ran 16 % of the time where the median rank ran 35 %, and
  // moved half: the host's deficit (54 %) is more than half of the rate's (50 %)
  const auto quiet = ports({{}, {}, {}});
  const auto h = explained(v, quiet, hosts(0.35, {{3, 0.16}}), ranks);
  CHECK(h.cat == stats::category::host);
  CHECK(h.text == "its ranks had 16 % of a CPU while measured, the median rank 35 %: the host, not the network");
  CHECK(h.cpu_share == doctest::Approx(0.16));
  CHECK(h.others_cpu_share == doctest::Approx(0.35));

  SUBCASE("a small CPU deficit does not explain a large shortfall: the network's") {
    CHECK(explained(v, quiet, hosts(0.35, {{3, 0.30}}), ranks).cat == stats::category::rate);
  }
  SUBCASE("without schedstat there is no host evidence: rate") {
    auto unknown = hosts(0.35, {{3, 0.16}});
    for (auto& u : unknown) u.known = false;
    CHECK(explained(v, quiet, unknown, ranks).cat == stats::category::rate);
  }
  SUBCASE("errors on its port outweigh the host") {
    const auto lossy =
        ports({{{"completer_retry_err", 1}}, {{"completer_retry_err", 300}}, {{"completer_retry_err", 2}}});
    CHECK(explained(v, lossy, hosts(0.35, {{3, 0.16}}), ranks).cat == stats::category::link);
  }
}

TEST_CASE("retransmits behind the RNR NAKs a starved host sent are the host's, not its cable's") {
  const auto ranks = three_nodes();
  // node2's ranks held to a tenth of a CPU (a cgroup quota), as rxe counted it in the emulated
  // cluster: node2 refused writes with immediate for want of a posted receive, and the resends
  // behind each refusal reached it out of sequence
  const auto starved = ports({{{"send_rnr_err", 2}, {"out_of_seq_request", 7}, {"duplicate_request", 1}},
                              {{"send_rnr_err", 306}, {"out_of_seq_request", 273}, {"duplicate_request", 27}},
                              {{"send_rnr_err", 0}, {"out_of_seq_request", 0}, {"duplicate_request", 1}}});
  const auto quota = hosts(0.33, {{2, 0.05}, {3, 0.05}});
  stats::job_verdict v = node2_slow();
  v.causes.front().send_lo = v.causes.front().send_hi = 14;
  const auto h = explained(v, starved, quota, ranks);
  CHECK(h.cat == stats::category::host);
  CHECK(h.text ==
        "its ranks had 5 % of a CPU while measured, the median rank 33 %; it refused messages for want of a posted "
        "receive (send_rnr_err +306 on rxe_node2 (the other ports' median: 1)), and the resends behind them count "
        "as retransmits: the host, not the network");
  CHECK(h.brief == "5 % of a CPU, the median rank 33 %");

  SUBCASE("the same retransmits with its ranks at their share of a CPU: the link's") {
    CHECK(explained(v, starved, hosts(0.33), ranks).cat == stats::category::link);
  }
  SUBCASE("retransmits without refusals of its own: the link's, however starved the host") {
    auto lossy = starved;
    lossy[1].delta = {{"send_rnr_err", 1}, {"out_of_seq_request", 273}, {"duplicate_request", 27}};
    CHECK(explained(v, lossy, quota, ranks).cat == stats::category::link);
  }
  SUBCASE("a physical error beside the refusals: the link's") {
    auto both = starved;
    both[1].delta.emplace_back("symbol_error", 40);
    CHECK(explained(v, both, quota, ranks).cat == stats::category::link);
  }
  SUBCASE("mlx5 counts a refusal as out_of_buffer at the responder") {
    auto mlx = starved;
    for (auto& p : mlx)
      for (auto& [name, value] : p.delta)
        if (name == "send_rnr_err") name = "out_of_buffer";
    CHECK(explained(v, mlx, quota, ranks).cat == stats::category::host);
  }
}

TEST_CASE("the evidence counts only the runs that named the cause; an uplink is the switch's") {
  const auto ranks = three_nodes();
  stats::job_verdict v = node2_slow();
  const auto lossy =
      ports({{{"completer_retry_err", 1}}, {{"completer_retry_err", 300}}, {{"completer_retry_err", 2}}});
  const auto quiet = ports({{{"completer_retry_err", 1}}, {{"completer_retry_err", 2}}, {{"completer_retry_err", 2}}});
  const auto h = hosts(0.35);
  // run 1 (the lossy one) did not name it: its errors are not its evidence
  std::vector<stats::run_evidence> runs{{0, h, quiet}, {1, h, lossy}};
  stats::explain(v, runs, ranks);
  CHECK(v.causes.front().why.cat == stats::category::rate);

  stats::job_verdict u = node2_slow();
  u.causes.front().kind = stats::outlier_kind::uplink;
  u.causes.front().node = 0;
  u.causes.front().peer = 1;
  stats::explain(u, runs, ranks);
  CHECK(u.causes.front().why.cat == stats::category::fabric_switch);
}

TEST_CASE("a failed pair: link where its ports counted errors, else no category") {
  const auto ranks = three_nodes();
  stats::job_verdict v;
  v.status = stats::health::failed;
  v.runs = 1;
  stats::folded_cause c;
  c.kind = stats::outlier_kind::failed;
  c.basis = stats::outlier_basis::failed;
  c.rank = 0;
  c.peer = 2;
  c.runs = {0};
  c.counted = true;
  v.causes.push_back(c);
  const auto h = hosts(0.35);
  const auto out = ports({{{"retry_exceeded_err", 1}, {"completer_retry_err", 15}},
                          {{"completer_retry_err", 0}},
                          {{"completer_retry_err", 1}}});
  CHECK(explained(v, out, h, ranks).cat == stats::category::link);
  CHECK(explained(v, ports({{}, {}, {}}), h, ranks).cat == stats::category::unknown);
}

TEST_CASE("the category in the console, the drain reason and the JSON") {
  const auto ranks = three_nodes();
  stats::job_verdict v = node2_slow();
  const auto p = ports({{{"completer_retry_err", 7}}, {{"completer_retry_err", 299}}, {{"completer_retry_err", 3}}});
  const auto h = hosts(0.35);  // named: a run's evidence only views it
  const std::vector<stats::run_evidence> runs{{0, h, p}};
  stats::explain(v, runs, ranks);
  const io::verdict_context ctx{};
  const auto lines = io::verdict_lines(v, ranks, ctx);
  REQUIRE(lines.size() == 3);
  CHECK(lines.at(1).starts_with("#   node node2 (ranks 2,3): its sends at 45–55 % "));
  CHECK(lines.at(2) == "#     why: link: completer_retry_err +299 on rxe_node2 (the other ports' median: 5)");
  const auto d = io::drains(v, ranks, 0);
  REQUIRE(d.size() == 1);
  CHECK(d.front().node == "node2");
  CHECK(d.front().reason.starts_with("rdmamesh: link: its sends at 45–55 % "));
  CHECK(d.front().reason.ends_with(" (completer_retry_err +299)"));
  const std::string json = io::verdict_json(v, ranks, ctx);
  CHECK(json.find("\"category\": \"link\"") != std::string::npos);
  CHECK(json.find("\"completer_retry_err\": 299") != std::string::npos);
  CHECK(json.find("\"others_median\": {\n") != std::string::npos);
}

TEST_CASE("a cause whose retest found its pairs alone fine or held back by their host is the host's") {
  const auto ranks = three_nodes();
  // a healthy fabric on a crowded host (CI's emulated cluster beside a loaded machine): node2
  // named by one run, its port's retransmits apart (rxe resends what a slow host left waiting),
  // and alone its pairs read fine or starved, their busy ends at 38 % of a CPU where the
  // controls' had 60 %
  const auto resent = ports({{{"out_of_seq_request", 3}}, {{"out_of_seq_request", 43}}, {{"out_of_seq_request", 2}}});
  stats::job_verdict v = node2_slow();
  CHECK(explained(v, resent, hosts(0.35), ranks).cat == stats::category::link);  // the run's figures alone
  v.causes.front().held_cpu = 0.38;
  v.causes.front().held_controls_cpu = 0.60;
  const auto h = explained(v, resent, hosts(0.35), ranks);
  CHECK(h.cat == stats::category::host);
  CHECK(h.text ==
        "alone, its pairs read fine or were held back by their host (38 % of a CPU, the controls' 60 %): the "
        "host, not the network");
  CHECK(h.brief == "38 % of a CPU alone, the controls 60 %");
  SUBCASE("a physical error on its port outweighs what the retest saw") {
    auto bad = resent;
    bad[1].delta.emplace_back("symbol_error", 40);
    CHECK(explained(v, bad, hosts(0.35), ranks).cat == stats::category::link);
  }
}
