// The console report: header facts, aligned rows, matrices, and the problems of each run.
#include <doctest/doctest.h>

#include "text.hpp"

#include <cmath>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "rdmamesh/app/provenance.hpp"
#include "rdmamesh/io/report.hpp"
#include "rdmamesh/io/verdict.hpp"
#include "rdmamesh/stats/outliers.hpp"

using namespace rdmamesh;

namespace {

io::run_record bw_record(std::uint32_t n, pattern_kind p) {
  std::vector<stats::pair_counters> rows(std::size_t{n} * n);
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t q = 0; q < n; ++q) {
      if (r != q) {
        rows[r * n + q] = {
            .tx_msgs = 10, .rx_msgs = 10, .tx_total = 12, .rx_total = 12, .tx_seconds = 1, .rx_seconds = 1, .round = 0};
      }
    }
  }
  io::run_record rec;
  rec.pattern = p;
  rec.size = 12500000;  // 10 messages a second: 1 Gb/s per pair
  rec.rounds = rec.rounds_done = 1;
  rec.bw = stats::assemble(rows, n, rec.size, true);
  return rec;
}

// ranks 0, 1, 2 on hosts a, b, c, each on its node's rxe0
std::vector<fabric::rank_info> three_ranks() {
  fabric::port_choice port;
  port.device = "rxe0";
  const mpi::node_info a0{0, 1, 0, 3}, b0{0, 1, 1, 3}, c0{0, 1, 2, 3};
  return {fabric::make_rank_info("a", &port, nullptr, a0, false),
          fabric::make_rank_info("b", &port, nullptr, b0, false),
          fabric::make_rank_info("c", &port, nullptr, c0, false)};
}

}  // namespace

TEST_CASE("header names ranks, hosts, device, mode, pattern and the data-path settings") {
  fabric::port_choice port;
  port.device = "rxe0";
  port.port = 1;
  port.ethernet = true;
  port.mtu = IBV_MTU_1024;
  port.gid_index = 1;
  const mpi::node_info a0{0, 2, 0, 2}, a1{1, 2, 0, 2}, b0{0, 1, 1, 2};
  fabric::placement pinned;
  pinned.source = fabric::bound_by::rdmamesh;
  pinned.core = 3;
  pinned.pu = 6;
  pinned.numa = 1;
  pinned.cpus = {6};
  std::vector<fabric::rank_info> ranks{fabric::make_rank_info("a", &port, &pinned, a0, true),
                                       fabric::make_rank_info("a", &port, nullptr, a1, false),
                                       fabric::make_rank_info("b", &port, nullptr, b0, false)};
  options o;
  o.duration_s = 2;
  o.patterns = {pattern_kind::mesh, pattern_kind::pairs};
  const std::string h = io::format_header(o, ranks, 220);
  CHECK(has(h, "# ranks 3  hosts 2: a (2 ranks), b (1 ranks)"));
  CHECK(has(h, "# device rxe0 port 1 (RoCE) gid_index 1"));
  CHECK(has(h, "mtu 1024"));
  CHECK(has(h, "# rank 0   a  local 0  core 3  cpus 6  bound by rdmamesh  numa 1\n"));
  CHECK(has(h, "# rank 1   a  local 1  not bound\n"));
  CHECK(has(h, "mode bw  op write_imm  pattern mesh,pairs"));
  CHECK(has(h, "tx_depth 128  rx_depth auto"));
  CHECK(has(h, "inline up to 220 B"));
  CHECK(has(h, "sizes 64K"));
  CHECK(has(h, "duration 2 s"));
  std::size_t pos = 0;
  while (pos < h.size()) {  // every line is a `#` line
    CHECK(h[pos] == '#');
    pos = h.find('\n', pos) + 1;
  }
  o.mode = mode_kind::lat;
  CHECK(has(io::format_header(o, ranks, 0), "half the ping-pong round trip"));
  o.op = op_kind::read;
  CHECK(has(io::format_header(o, ranks, 0), "READ takes to complete"));
}

TEST_CASE("matrix prints Gb/s with '-' on the diagonal") {
  stats::square<double> m(2, std::nan(""));
  m.at(0, 1) = 125e6;  // 1 Gb/s
  m.at(1, 0) = 250e6;
  const std::string s = io::format_matrix(m, "send bandwidth");
  CHECK(has(s, "# send bandwidth [Gb/s], row = source rank, column = destination rank"));
  CHECK(has(s, "       0         -     1.000\n"));
  CHECK(has(s, "       1     2.000         -\n"));
}

TEST_CASE("big meshes are summarized, not printed") {
  stats::square<double> m(io::max_printed_matrix + 1, 1.0);
  CHECK(has(io::format_matrix(m, "send bandwidth"), "not printed"));
}

TEST_CASE("a bw row names the pattern, size, pairs and aggregate; problems follow it") {
  io::run_record rec = bw_record(3, pattern_kind::mesh);
  rec.bw->flags.at(1, 2) = stats::rx_failed;
  rec.bw->verify_errors.at(0, 1) = 3;
  rec.events = {"rank 1 -> rank 2: boom"};
  options o;
  o.verify = true;
  const std::string s = io::format_run(o, rec);
  CHECK(has(s, "    mesh  12500000      1      6      1.000      1.000      1.000       6.000       6.000"));
  CHECK(has(s, "# mesh send bandwidth [Gb/s]"));
  CHECK(has(s, "# failed pairs: 1->2"));
  CHECK(has(s, "# verify: FAILED, 3 mismatching messages"));
  CHECK(has(s, "# event: rank 1 -> rank 2: boom"));
  CHECK_FALSE(rec.clean());
  CHECK(bw_record(3, pattern_kind::mesh).clean());
}

TEST_CASE("an incast row carries the least fair target's Jain index") {
  io::run_record rec = bw_record(3, pattern_kind::incast);
  rec.bw->rx_bw.at(0, 2) = 3e8;  // target 2 gets 3:1 from ranks 0 and 1
  rec.bw->rx_bw.at(1, 2) = 1e8;
  const std::string s = io::format_run(options{}, rec);
  CHECK(has(s, "   0.800\n"));  // (3 + 1)^2 / (2 * (9 + 1))
  CHECK(has(s, "incast share"));
}

TEST_CASE("a latency row prints the percentiles in microseconds") {
  options o;
  o.mode = mode_kind::lat;
  io::run_record rec;
  rec.pattern = pattern_kind::pairs;
  rec.size = 8;
  rec.rounds = rec.rounds_done = 2;
  std::vector<stats::latency_summary> rows(4);
  rows[1] = {.count = 3,
             .min = 1000,
             .p50 = 2000,
             .p90 = 3000,
             .p99 = 3000,
             .p999 = 3000,
             .max = 3000,
             .mean = 2000,
             .stddev = 816};
  rec.lat = stats::assemble_latency(rows, 2);
  rec.lat_flags = stats::square<std::uint8_t>(2, 0);
  for (std::uint64_t v : {1000, 2000, 3000}) rec.lat_all.record(v);
  const std::string s = io::format_run(o, rec);
  // p50 is its bucket's highest equivalent value: 2000 ns reads 2.01 us (within 1/128)
  CHECK(has(s,
            "   pairs         8      2      1         3     1.00     2.01     3.00     3.00     3.00      3.00     "
            "2.00     0.82"));
  CHECK(has(s, "# pairs p50 latency [us]"));
  CHECK(has(io::format_table_header(o), "p99.9"));
}

TEST_CASE("every outlier cause has its text line, failed pairs included (the file's columns stay parallel)") {
  auto ranks = three_ranks();  // five: a link is told from its ends' own effects only among enough pairs
  ranks.push_back(ranks.back());
  ranks.push_back(ranks.back());
  io::run_record rec = bw_record(5, pattern_kind::mesh);
  rec.bw->flags.at(0, 2) = rec.bw->flags.at(2, 0) = stats::tx_failed;
  rec.bw->tx_bw.at(1, 0) = rec.bw->tx_bw.at(1, 0) / 4;
  rec.outliers = stats::find_outliers(*rec.bw, rec.size, std::vector<std::int32_t>{0, 1, 2, 3, 4},
                                      {.slow_pct = 90, .expect_bps = 0, .counted = false});
  const auto lines = io::outlier_lines(rec, ranks);
  REQUIRE(lines.size() == rec.outliers->found.size());
  std::size_t failed = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (rec.outliers->found[i].kind == stats::outlier_kind::failed) {
      ++failed;
      CHECK(has(lines[i], "# failed: rank "));
    }
  }
  CHECK(failed == 2);
  CHECK(has(fmt::format("{}", fmt::join(lines, "\n")), "# suspect: link rank 1 (b, rxe0) -> rank 0 (a, rxe0)"));
}

TEST_CASE("a slow rank's line names its side, its share of the median and how many slow pairs it explains") {
  io::run_record rec = bw_record(4, pattern_kind::mesh);
  for (std::uint32_t b : {0u, 2u, 3u}) rec.bw->tx_bw.at(1, b) = rec.bw->tx_bw.at(1, b) / 4;
  rec.outliers = stats::find_outliers(*rec.bw, rec.size, std::vector<std::int32_t>{0, 0, 0, 0},
                                      {.slow_pct = 60, .expect_bps = 0, .counted = false});
  auto ranks = three_ranks();
  ranks.push_back(ranks.back());
  const auto lines = io::outlier_lines(rec, ranks);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "# slow: rank 1 (b, rxe0): its sends at 25 % of the median; 3 slow pair(s)");
  CHECK(io::judged_line(*rec.outliers).starts_with("# judged: 12 of 12 pairs judged"));
}

TEST_CASE("a rank that measured less than 90 % of a duration interval gets a short-window line") {
  const auto ranks = three_ranks();
  options o;
  o.duration_s = 1;
  io::run_record rec = bw_record(3, pattern_kind::mesh);
  CHECK(io::window_lines(o, rec, ranks).empty());
  rec.bw->tx_s.at(1, 0) = 0.95;  // within 90 %: not worth a line
  CHECK(io::window_lines(o, rec, ranks).empty());
  rec.bw->tx_s.at(1, 2) = 0.5;
  rec.bw->rx_s.at(0, 2) = 0;  // rank 2 measured nothing as a receiver
  const auto lines = io::window_lines(o, rec, ranks);
  REQUIRE(lines.size() == 2);
  CHECK(has(lines[0], "# short window: rank 1 (b, rxe0) measured 0.5 s of the 1 s interval"));
  CHECK(has(lines[0], "its figures cover what it measured"));
  CHECK(has(lines[1], "rank 2 (c, rxe0) measured 0 s"));
  CHECK(has(lines[1], "its figures are NaN"));
  rec.interrupted = true;  // SIGTERM cut the round: not starvation, and its own line says so
  CHECK(io::window_lines(o, rec, ranks).empty());
  rec.interrupted = false;
  o.iters = 100;  // iterations: every pair has its own interval
  CHECK(io::window_lines(o, rec, ranks).empty());
}

TEST_CASE("a scaling line splits each node's sends into what crossed its port and what stayed inside") {
  // 4 ranks, 2 per node, every pair 1 Gb/s in one round: each node sends 2 x 2 pairs out, 2 inside
  io::run_record rec = bw_record(4, pattern_kind::mesh);
  rec.active_per_node = 2;
  const std::vector<std::int32_t> node_of{0, 0, 1, 1};
  CHECK(io::format_scaling(rec, node_of, 2) ==
        "# scaling: 2 rank(s) per node active: per node 6.000 Gb/s (4.000 through its port, 2.000 within the "
        "node), per rank 3.000 Gb/s (means)\n");
  // one node: nothing crosses a port, and the line says so rather than printing 0
  const std::vector<std::int32_t> one{0, 0, 0, 0};
  CHECK(io::format_scaling(rec, one, 1).find("within the node: one node, nothing crosses a port") != std::string::npos);
}

TEST_CASE("a NIC counted by the verdict: named by device and rail, its node drained for it, JSON kind nic") {
  // 2 nodes x 2 NICs, one rank each: rank 3 drives node b's rail-1 NIC, named in both runs
  std::vector<fabric::rank_info> ranks;
  for (int r = 0; r < 4; ++r) {
    fabric::port_choice port;
    port.device = fmt::format("mlx5_{}", r % 2);
    fabric::placement where;
    where.rail = r % 2;
    where.nics = 2;
    const mpi::node_info node{r % 2, 2, r / 2, 2};
    ranks.push_back(fabric::make_rank_info(r < 2 ? "a" : "b", &port, &where, node, false));
  }
  stats::outlier_report rep;
  rep.found = {{stats::outlier_kind::nic, stats::outlier_basis::noise, 1, -1, 1, 50, NAN, 3, 0},
               {stats::outlier_kind::link, stats::outlier_basis::noise, -1, 0, 3, 40, NAN, 1, 0}};
  const std::vector<stats::judged_run> runs{{0, "mesh 4 KiB", &rep, true, {}}, {1, "mesh 64 KiB", &rep, true, {}}};
  const std::vector<std::int32_t> node_of{0, 0, 1, 1}, rail_of{0, 1, 0, 1};
  const auto v = stats::fold(runs, node_of, {}, stats::nic_groups(node_of, rail_of));
  CHECK(v.status == stats::health::degraded);
  REQUIRE(v.causes.size() == 2);
  CHECK(v.causes[0].kind == stats::outlier_kind::nic);
  CHECK(v.causes[0].counted);
  CHECK_FALSE(v.causes[1].counted);  // the link into the NIC's rank is the NIC's
  io::verdict_context ctx;
  ctx.job_id = app::new_job_id();
  const auto lines = io::verdict_lines(v, ranks, ctx);
  CHECK(has(lines.at(1), "#   NIC mlx5_1 (rail 1) of b (rank 3): its sends at 50 % of the median in 2 of 2 runs"));
  const auto d = io::drains(v, ranks, 0);
  REQUIRE(d.size() == 1);
  CHECK(d[0].node == "b");
  CHECK(has(d[0].reason, "rdmamesh: NIC mlx5_1 (rail 1): its sends at 50 %"));
  const std::string json = io::verdict_json(v, ranks, ctx);
  CHECK(has(json, "\"kind\": \"nic\""));
  CHECK(has(json, "\"rail\": 1"));
  CHECK(has(json, "\"devices\": [\n        \"mlx5_1\"\n      ]"));
  CHECK(has(json, "\"nodes_tested\": [\n    \"a\",\n    \"b\"\n  ]"));  // every node, named or not
  CHECK(has(json, "\"written\": \"20"));
  // the job's key, as analysis/history files it: 16 hex digits, fresh for every job
  CHECK(ctx.job_id.size() == 16);
  CHECK(ctx.job_id.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(has(json, fmt::format("\"job_id\": \"{}\"", ctx.job_id)));
  CHECK(app::new_job_id() != ctx.job_id);
}

namespace {

// Four ranks, two on host a and two on host b, without devices.
std::vector<fabric::rank_info> two_hosts() {
  std::vector<fabric::rank_info> ranks;
  for (int r = 0; r < 4; ++r) {
    const mpi::node_info node{r % 2, 2, r / 2, 2};
    ranks.push_back(fabric::make_rank_info(r < 2 ? "a" : "b", nullptr, nullptr, node, false));
  }
  return ranks;
}

}  // namespace

TEST_CASE("a node whose retest was held back by its host: listed as undecided with the CPU figures, not drained") {
  const auto ranks = two_hosts();
  stats::outlier_report rep;
  rep.found = {{stats::outlier_kind::node, stats::outlier_basis::noise, 1, -1, -1, 89, NAN, 4, 0}};
  std::vector<stats::judged_run> runs{{0, "mesh 64 KiB", &rep, true, {}}};
  // alone, node b's sends read fine or starved: their busy ends had 42 % of a CPU, the controls' 82 %
  for (std::uint32_t src : {2u, 3u}) {
    for (std::uint32_t dst : {0u, 1u}) {
      stats::retest_verdict v{.src = src, .dst = dst, .before = 1, .alone = 1, .pct = 45, .controls = 4};
      v.starved = true;
      v.cpu_share = 0.42;
      v.controls_cpu_share = 0.82;
      runs[0].alone.push_back(v);
    }
  }
  // the model's part: node b's sends, most of their pairs alone held back, so left out
  stats::lasting_effect held{{stats::outlier_kind::node, 1, -1, -1, true, std::log(0.89), 1e-3, {2, 3}}};
  held.held = 4;
  held.held_back = true;
  runs[0].parts = {held};
  runs[0].retested = true;
  runs[0].alpha = 1e-3;
  const std::vector<std::int32_t> node_of{0, 0, 1, 1};
  const auto v = stats::fold(runs, node_of);
  CHECK(v.status == stats::health::healthy);
  REQUIRE(v.causes.size() == 1);
  CHECK(v.causes[0].undecided);
  const io::verdict_context ctx;
  const auto lines = io::verdict_lines(v, ranks, ctx);
  REQUIRE(lines.size() == 3);
  CHECK(has(lines[0], "# verdict: healthy"));
  CHECK(has(lines[1],
            "false-alarm level of 0.1 % (the chance of counting any healthy rank, NIC, node or uplink in this job)"));
  SUBCASE("a job of several runs says each run's share of the level") {
    runs[0].alpha = 2.5e-4;
    runs[0].alpha_runs = 4;
    const auto split = io::verdict_lines(stats::fold(runs, node_of), ranks, ctx);
    REQUIRE(split.size() == 3);
    CHECK(has(split[1],
              "false-alarm level of 0.1 % (the chance of counting any healthy rank, NIC, node or uplink in this "
              "job; 0.025 % in each of its 4 runs that go to the retest)"));
    CHECK(has(io::verdict_json(stats::fold(runs, node_of), ranks, ctx), "\"runs_sharing\": 4"));
  }
  CHECK(has(lines[2],
            "#   seen, undecided by the retest (alone its pairs were held back by their host, 42 % of a CPU against "
            "the controls' 82 %: a test of its CPU, not of its network): node b (ranks 2,3): its sends at 89 %"));
  CHECK(io::drains(v, ranks, 0).empty());
  const std::string json = io::verdict_json(v, ranks, ctx);
  CHECK(has(json, "\"undecided\": true"));
  CHECK(has(json, "\"counted\": false"));
}

TEST_CASE("a job none of whose bandwidth runs could be judged is unjudged, never healthy; one judged run is enough") {
  std::vector<fabric::rank_info> ranks;
  stats::outlier_report none;  // too few messages: no threshold, nothing found
  none.threshold_pct = NAN;
  std::vector<stats::judged_run> runs{{0, "mesh 64 KiB", &none, false, {}}, {1, "mesh 1 MiB", &none, false, {}}};
  const auto v = stats::fold(runs);
  CHECK(v.status == stats::health::unjudged);
  const io::verdict_context ctx;
  const auto lines = io::verdict_lines(v, ranks, ctx);
  CHECK(has(lines.at(0), "# verdict: unjudged: none of the 2 bandwidth run(s) could be judged"));
  CHECK(has(io::verdict_json(v, ranks, ctx), "\"status\": \"unjudged\""));
  CHECK(has(io::verdict_json(v, ranks, ctx), "\"schema\": \"rdmamesh-verdict/2\""));
  stats::outlier_report judged;
  judged.threshold_pct = 60;
  runs[1].report = &judged;
  runs[1].judged = true;
  CHECK(stats::fold(runs).status == stats::health::healthy);
  CHECK(stats::fold(std::span<const stats::judged_run>{}).status == stats::health::healthy);  // latency only
}

TEST_CASE("a part the job's runs pooled decide: its pooled line, and one no run named alone") {
  const auto ranks = three_ranks();
  stats::job_verdict v;
  v.status = stats::health::degraded;
  v.runs = v.runs_judged = 3;
  stats::folded_cause node{stats::outlier_kind::node,
                           stats::outlier_basis::noise,
                           2,
                           -1,
                           -1,
                           {0, 1, 2},
                           {"mesh 4 KiB", "mesh 64 KiB", "mesh 1 MiB"},
                           71,
                           71,
                           NAN,
                           NAN,
                           0,
                           0,
                           true};
  std::tie(node.by_pool, node.pool_runs, node.pool_pct, node.pool_p) = std::tuple{true, 3U, 71.0, 3.2e-7};
  stats::folded_cause rank{stats::outlier_kind::rank,
                           stats::outlier_basis::noise,
                           0,
                           0,
                           -1,
                           {1},
                           {"mesh 64 KiB"},
                           60,
                           60,
                           NAN,
                           NAN,
                           4,
                           1,
                           false};
  std::tie(rank.pool_runs, rank.pool_pct, rank.pool_p) = std::tuple{3U, 95.0, 0.2};
  v.causes = {node, rank};
  const io::verdict_context ctx;
  const auto lines = io::verdict_lines(v, ranks, ctx);
  const auto text = fmt::format("{}", fmt::join(lines, "\n"));
  CHECK(has(text,
            "#   node c (ranks 2): its sends at 71 % of the median over 3 runs pooled (mesh 4 KiB, mesh 64 "
            "KiB, mesh 1 MiB), named by none alone\n#     pooled: its 3 runs as one fit: 71 % of the median, "
            "p 3.2e-07"));
  CHECK(has(text,
            "#   seen, not counted on its 3 runs pooled: rank 0 (a, rxe0): its sends at 60 % of the median in "
            "1 of 3 runs (mesh 64 KiB); 4 slow pair(s), 1 fine\n#     pooled: its 3 runs as one fit: 95 % "
            "of the median, p 0.2"));
  const auto doc = nlohmann::json::parse(io::verdict_json(v, ranks, ctx));
  CHECK(doc["causes"][0]["pooled"] == nlohmann::json{{"runs", 3}, {"pct", 71.0}, {"p", 3.2e-7}, {"only", true}});
  CHECK(doc["causes"][1]["pooled"] == nlohmann::json{{"runs", 3}, {"pct", 95.0}, {"p", 0.2}, {"only", false}});
}

TEST_CASE("the verdict states the false-alarm level its runs were judged at, with or without --retest") {
  std::vector<fabric::rank_info> ranks;
  stats::outlier_report judged;
  judged.threshold_pct = 60;
  const std::vector<stats::judged_run> runs{{0, "mesh 4 KiB", &judged, true, {}}};
  const auto v = stats::fold(runs);
  REQUIRE(v.status == stats::health::healthy);
  const io::verdict_context ctx{.false_alarm_pct = 0.1};
  CHECK(has(io::verdict_lines(v, ranks, ctx).at(0),
            "# verdict: healthy (1 of 1 bandwidth run(s) judged, each at a false-alarm level of 0.1 %; no cause "
            "beyond their noise)"));
  CHECK(has(io::verdict_json(v, ranks, ctx), "\"false_alarm_pct\": 0.1"));
  // a caller that judged nothing at a level (the NICs' settings alone) states none
  CHECK(has(io::verdict_json(v, ranks, io::verdict_context{}), "\"false_alarm_pct\": null"));
}

TEST_CASE("the host line: who waited for a CPU while runnable, and how much; nothing when no one did") {
  io::run_record r;
  const auto use = [](double wall, double cpu, double wait) {
    engine::host_use h;
    h.wall_s = wall;
    h.cpu_s = cpu;
    h.wait_s = wait;
    h.known = true;
    return h;
  };
  // six ranks on two CPUs: each waits about two thirds of the time
  for (double w : {1.34, 1.36, 1.33, 1.35, 1.34, 1.36}) r.host.push_back(use(2, 2 - w, w));
  CHECK(io::host_line(r) ==
        "# host: every rank waited for a CPU while runnable: 66-68 % of the measured time (median 67 %)");
  // one rank shares its core with a stray process; the others hardly wait
  r.host.assign(4, use(2, 1.99, 0.01));
  r.host[2] = use(2, 1.2, 0.8);
  CHECK(io::host_line(r) ==
        "# host: rank(s) 2 waited for a CPU while runnable: 0-40 % of the measured time (median 0 %)");
  r.host[2] = use(2, 1.9, 0.1);  // 5 %: a daemon's tick, not worth a line
  CHECK(io::host_line(r).empty());
  r.host.assign(4, engine::host_use{.wall_s = 2});  // no schedstat in this kernel
  CHECK(io::host_line(r).empty());
}

TEST_CASE("a pair still slow alone is said to be its link only where the job's test counted it (as the verdict does)") {
  const auto ranks = two_hosts();
  io::run_record r;
  r.retest_of = 0;
  const auto slow_alone = [](std::uint32_t src, std::uint32_t dst, bool named, bool counted) {
    return stats::retest_verdict{.src = src,
                                 .dst = dst,
                                 .before = 1e6,
                                 .alone = 1e6,
                                 .pct = 30,
                                 .lo_pct = 20,
                                 .hi_pct = 45,
                                 .p_slow = 2e-4,
                                 .controls = 8,
                                 .still_slow = true,
                                 .named = named,
                                 .counted = counted};
  };
  r.retest = {slow_alone(2, 0, true, true), slow_alone(0, 1, false, false), slow_alone(1, 3, true, false)};
  const auto lines = io::retest_lines(r, ranks, 90);
  REQUIRE(lines.size() == 3);
  CHECK(has(lines[0], "alone at 30 % of its controls (20–45 %; 8 control(s); "));
  CHECK(has(lines[0], "p 0.0002 were it at 90 %: still slow alone (its link or NIC)"));
  CHECK(has(lines[1], "%: still slow alone (the run named no link here: its part's retest decides)"));
  CHECK(has(lines[2], "%: still slow alone, not at the job's false-alarm level: nothing counted on it"));
  for (const auto i : {1, 2}) CHECK_FALSE(has(lines[static_cast<std::size_t>(i)], "its link or NIC"));
  // no control of its path measured alone: nothing to read it against, and it says so
  io::run_record none = r;
  none.retest = {stats::retest_verdict{.src = 2, .dst = 0, .before = 1e6, .alone = 1e6, .pct = NAN}};
  const auto bare = io::retest_lines(none, ranks, 90);
  REQUIRE(bare.size() == 1);
  CHECK(has(bare[0], "no control of its path measured: undecided alone (nothing to read it against"));
  // and the verdict agrees: a run that named no link counts none, whatever its pairs read alone,
  // and a link the job's test did not count is not counted
  stats::outlier_report rep;
  rep.threshold_pct = 50;
  std::vector<stats::judged_run> runs{{0, "mesh 64 KiB", &rep, true, r.retest}};
  CHECK(stats::fold(runs).status == stats::health::healthy);
  rep.found = {{stats::outlier_kind::link, stats::outlier_basis::noise, -1, 1, 3, 30, NAN, 1, 0}};
  CHECK(stats::fold(runs).status == stats::health::healthy);
  rep.found = {{stats::outlier_kind::link, stats::outlier_basis::noise, -1, 2, 0, 30, NAN, 1, 0}};
  const auto v = stats::fold(runs);
  CHECK(v.status == stats::health::degraded);
  REQUIRE(v.causes.size() == 1);
  CHECK((v.causes[0].kind == stats::outlier_kind::link && v.causes[0].rank == 2 && v.causes[0].peer == 0));
}

TEST_CASE("a retested part's line says why it is undecided: its interval spans --slow, or only the level held it") {
  io::run_record rec = bw_record(3, pattern_kind::mesh);
  rec.retest_of = 0;
  const auto part = [](std::int32_t rank, double effect, double lo, double hi, double p) {
    stats::lasting_effect l;
    l.part.kind = stats::outlier_kind::rank;
    l.part.rank = rank;
    l.part.members = {static_cast<std::uint32_t>(rank)};
    l.effect = std::log(effect);
    l.lo = std::log(lo);
    l.hi = std::log(hi);
    l.pairs = 2;
    l.controls = 4;
    l.p_slow = p;
    return l;
  };
  rec.retest_parts = {part(0, 0.19, 0.08, 0.45, 0.0077), part(1, 0.7, 0.4, 1.2, 0.3)};
  const auto lines = io::retest_part_lines(rec, three_ranks(), 60);
  REQUIRE(lines.size() == 2);
  // the 95 % interval below 60 %, p not below the level's share: the words say so, not "spans"
  CHECK(has(lines[0],
            "alone at 19 % of the controls (8–45 %; 2 pair(s), 4 control(s)), p 0.0077 were it at 60 %: "
            "undecided (below 60 % at 95 %, not at the job's false-alarm level)"));
  CHECK(has(lines[1], "undecided (its interval spans 60 %)"));
}
