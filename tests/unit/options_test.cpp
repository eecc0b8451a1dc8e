// Flag parsing: defaults, every rejection a clean one-line error, help and version exit 0.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/util/error.hpp"

using namespace rdmamesh;

namespace {

parse_outcome parse(std::vector<std::string> args) {
  args.insert(args.begin(), "rdmamesh");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

void check_rejected(std::vector<std::string> args, const std::string& must_contain) {
  CAPTURE(must_contain);
  const auto out = parse(std::move(args));
  REQUIRE_FALSE(out.opts.has_value());
  CHECK(out.exit_code == exit_usage);
  CHECK(out.text.find(must_contain) != std::string::npos);
  CHECK(out.text.find('\n') == std::string::npos);  // one line
}

}  // namespace

TEST_CASE("defaults: write_imm bw over the mesh, 64K, 5 s after 1 s warm-up, depth 128/512") {
  const auto out = parse({});
  REQUIRE(out.opts.has_value());
  const options& o = *out.opts;
  CHECK(o.op == op_kind::write_imm);
  CHECK(o.mode == mode_kind::bw);
  CHECK(o.patterns == std::vector<pattern_kind>{pattern_kind::mesh});
  CHECK(o.sizes == std::vector<std::uint64_t>{65536});
  CHECK(o.post_list == 1);
  CHECK(o.cq_mod == 0);
  CHECK(o.inline_size == -1);
  CHECK(o.qps == 1);
  CHECK(o.duration_mode());
  CHECK(o.duration_s == 5.0);
  CHECK(o.warmup_s == 1.0);
  CHECK(o.tx_depth == 128);
  CHECK(o.rx_depth == 0);  // auto
  CHECK(o.qp_timeout == 18);
  CHECK(o.gid_index == -1);
  CHECK(o.ib_port == 0);
  CHECK_FALSE(o.verify);
}

TEST_CASE("the issue's command line parses") {
  const auto out = parse({"-s", "64K", "-D", "2", "-o", "mesh.h5", "--op", "write", "-t", "64", "-d", "rxe0", "-i", "1",
                          "-x", "1", "--verify", "--force"});
  REQUIRE(out.opts.has_value());
  const options& o = *out.opts;
  CHECK(o.sizes == std::vector<std::uint64_t>{65536});
  CHECK(o.duration_s == 2.0);
  CHECK(o.output == "mesh.h5");
  CHECK(o.op == op_kind::write);
  CHECK(o.tx_depth == 64);
  CHECK(o.ib_dev == "rxe0");
  CHECK(o.ib_port == 1);
  CHECK(o.gid_index == 1);
  CHECK(o.verify);
  CHECK(o.force);
}

TEST_CASE("-n switches to iterations mode") {
  const auto out = parse({"-n", "1000"});
  REQUIRE(out.opts.has_value());
  CHECK_FALSE(out.opts->duration_mode());
  CHECK(out.opts->iters == 1000);
}

TEST_CASE("bad input is rejected with the flag named") {
  check_rejected({"-s", "12Q"}, "--size");
  check_rejected({"-s", "0"}, "--size");
  check_rejected({"-t", "0"}, "--tx-depth");
  check_rejected({"-r", "0"}, "--rx-depth");
  check_rejected({"-n", "0"}, "--iters");
  check_rejected({"-n", "5", "-D", "2"}, "--iters");
  check_rejected({"-D", "0"}, "--duration");
  check_rejected({"-D", "-1"}, "--duration");
  check_rejected({"--warmup", "-1"}, "--warmup");
  check_rejected({"--op", "atomic"}, "atomic");
  check_rejected({"--bogus"}, "--bogus");
  check_rejected({"-i", "0"}, "--ib-port");
  check_rejected({"-t", "abc"}, "abc");
  check_rejected({"-s", "1M", "--peer-buffer", "64K"}, "--peer-buffer");
  check_rejected({"--qp-timeout", "40"}, "--qp-timeout");
  check_rejected({"--slow", "0"}, "--slow");
  check_rejected({"--slow", "100"}, "--slow");
  check_rejected({"--pattern", "ring"}, "unknown --pattern 'ring'");
  check_rejected({"-b"}, "-b/--bidirectional applies to --pattern pairs");
  check_rejected({"--target", "1"}, "--target applies to --pattern incast");
  check_rejected({"-l", "256"}, "--post-list 256 exceeds --tx-depth 128");
  check_rejected({"--mode", "lat", "-l", "4"}, "--post-list applies to --mode bw");
  check_rejected({"--sizes", "64,0"}, "--size must be at least 1");
  check_rejected({"--sizes", "64,,1K"}, "--sizes entry");
  check_rejected({"-a", "-s", "64K"}, "excludes");
  check_rejected({"-q", "0"}, "--qps");
  check_rejected({"--mode", "latency"}, "latency");
  check_rejected({"-s", "4G"}, "at most 2G");
  check_rejected({"--retest-duration", "1"}, "--retest-duration applies to --retest");
  check_rejected({"--retest", "-n", "100", "--retest-duration", "1"}, "--retest-duration applies to --retest");
  check_rejected({"--retest", "--retest-duration", "-1"}, "--retest-duration must be a positive");
}

TEST_CASE("the verdict is judged at 0.1 % unless --false-alarm says, with or without --retest") {
  const auto plain = parse({"--retest"});
  REQUIRE(plain.opts.has_value());
  CHECK(plain.opts->false_alarm_pct == doctest::Approx(0.1));
  const auto asked = parse({"--retest", "--false-alarm", "1"});
  REQUIRE(asked.opts.has_value());
  CHECK(asked.opts->false_alarm_pct == doctest::Approx(1.0));
  const auto none = parse({});
  REQUIRE(none.opts.has_value());
  CHECK(none.opts->false_alarm_pct == doctest::Approx(0.1));
  const auto run_only = parse({"--false-alarm", "0.01"});
  REQUIRE(run_only.opts.has_value());
  CHECK(run_only.opts->false_alarm_pct == doctest::Approx(0.01));
}

TEST_CASE("--false-alarm is the job's: its level is shared by every mesh, shift or spread run of every size") {
  // the runs that go to the retest: pairs and incast runs never do
  const auto sweep = parse({"--retest", "--pattern", "mesh,pairs,shift", "--sizes", "4K,64K,1M"});
  REQUIRE(sweep.opts.has_value());
  CHECK(sweep.opts->retested_runs() == 6);
  const auto one = parse({"--retest", "--pattern", "spread"});
  REQUIRE(one.opts.has_value());
  CHECK(one.opts->retested_runs() == 1);
  const auto none = parse({"--pattern", "pairs", "--sizes", "4K,64K"});
  REQUIRE(none.opts.has_value());
  CHECK(none.opts->retested_runs() == 1);  // nothing is retested: the level is not divided by zero
}

TEST_CASE("a retest round lasts -D, at most 0.3 s, unless --retest-duration says; its warm-up at most 0.1 s") {
  const auto out = parse({"--retest", "-D", "2", "--warmup", "0.3"});
  REQUIRE(out.opts.has_value());
  CHECK(out.opts->round_seconds(false) == doctest::Approx(2.0));
  CHECK(out.opts->round_seconds(true) == doctest::Approx(0.3));
  CHECK(out.opts->warmup_seconds(false) == doctest::Approx(0.3));
  CHECK(out.opts->warmup_seconds(true) == doctest::Approx(0.1));
  const auto short_run = parse({"--retest", "-D", "0.2", "--warmup", "0.05"});
  REQUIRE(short_run.opts.has_value());
  CHECK(short_run.opts->round_seconds(true) == doctest::Approx(0.2));  // never longer than the run's rounds
  CHECK(short_run.opts->warmup_seconds(true) == doctest::Approx(0.05));
  const auto asked = parse({"--retest", "-D", "2", "--retest-duration", "3"});
  REQUIRE(asked.opts.has_value());
  CHECK(asked.opts->round_seconds(true) == doctest::Approx(3.0));
}

TEST_CASE("sweeps: -a is 2 B to 8 MiB in powers of two; --sizes takes a list") {
  const auto all = parse({"-a"});
  REQUIRE(all.opts.has_value());
  REQUIRE(all.opts->sizes.size() == 23);
  CHECK(all.opts->sizes.front() == 2);
  CHECK(all.opts->sizes.back() == 8ULL << 20);
  for (std::size_t i = 1; i < 23; ++i) CHECK(all.opts->sizes[i] == 2 * all.opts->sizes[i - 1]);
  const auto list = parse({"--sizes", "64,4K,1M"});
  REQUIRE(list.opts.has_value());
  CHECK(list.opts->sizes == std::vector<std::uint64_t>{64, 4096, 1 << 20});
  CHECK(list.opts->max_size() == 1 << 20);
}

TEST_CASE("patterns: a comma list, deduplicated; latency defaults to pairs") {
  const auto out = parse({"--pattern", "mesh,pairs,mesh", "-b"});
  REQUIRE(out.opts.has_value());
  CHECK(out.opts->patterns == std::vector<pattern_kind>{pattern_kind::mesh, pattern_kind::pairs});
  CHECK(out.opts->bidirectional);
  const auto lat = parse({"--mode", "lat", "--op", "send"});
  REQUIRE(lat.opts.has_value());
  CHECK(lat.opts->patterns == std::vector<pattern_kind>{pattern_kind::pairs});
  CHECK(lat.opts->op == op_kind::send);
  const auto incast = parse({"--pattern", "incast", "--target", "3"});
  REQUIRE(incast.opts.has_value());
  CHECK(incast.opts->target == 3);
}

TEST_CASE("data-path flags parse") {
  const auto out = parse({"-l", "8", "-Q", "16", "-I", "64", "-q", "4", "-r", "1024", "--op", "read"});
  REQUIRE(out.opts.has_value());
  CHECK(out.opts->post_list == 8);
  CHECK(out.opts->cq_mod == 16);
  CHECK(out.opts->inline_size == 64);
  CHECK(out.opts->qps == 4);
  CHECK(out.opts->rx_depth == 1024);
  CHECK(out.opts->op == op_kind::read);
}

TEST_CASE("help and version exit 0 with text") {
  const auto help = parse({"--help"});
  CHECK_FALSE(help.opts.has_value());
  CHECK(help.exit_code == exit_ok);
  CHECK(help.text.find("--size") != std::string::npos);
  CHECK(help.text.find("--tx-depth") != std::string::npos);
  const auto ver = parse({"--version"});
  CHECK(ver.exit_code == exit_ok);
  CHECK(ver.text.rfind("rdmamesh ", 0) == 0);
}

TEST_CASE("describe lists every option with a canonical value, and differs when an option does") {
  options a;
  options b;
  b.sizes = {4096};
  const auto da = describe(a);
  const auto db = describe(b);
  CHECK(da != db);
  bool saw_size = false;
  for (const auto& [k, v] : da) {
    if (k == "size") {
      saw_size = true;
      CHECK(v == "64K");
    }
  }
  CHECK(saw_size);
}

TEST_CASE("join_command_line quotes what a shell would split") {
  const char* argv[] = {"rdmamesh", "-o", "my file.h5", "-s", "64K", "it's"};
  CHECK(join_command_line(6, argv) == "rdmamesh -o 'my file.h5' -s 64K 'it'\\''s'");
}

TEST_CASE("--connect: round by default when every pattern is pairwise, all with mesh; either when asked") {
  CHECK(parse({}).opts->connect == connect_kind::all);
  CHECK(parse({"--pattern", "shift"}).opts->connect == connect_kind::round);
  CHECK(parse({"--pattern", "pairs,incast"}).opts->connect == connect_kind::round);
  CHECK(parse({"--mode", "lat"}).opts->connect == connect_kind::round);
  CHECK(parse({"--pattern", "mesh,pairs"}).opts->connect == connect_kind::all);
  CHECK(parse({"--pattern", "shift", "--connect", "all"}).opts->connect == connect_kind::all);
  CHECK(parse({"--connect", "round"}).opts->connect == connect_kind::round);
  CHECK(parse({"--connect", "some"}).exit_code == exit_usage);
}

TEST_CASE("the most partners of a round: what --connect round holds per rank") {
  options o;
  o.patterns = {pattern_kind::pairs};
  CHECK(o.max_partners(8) == 1);
  o.patterns = {pattern_kind::shift};
  CHECK(o.max_partners(8) == 2);
  CHECK(o.max_partners(2) == 1);  // r+1 and r-1 are the same rank
  o.patterns = {pattern_kind::pairs, pattern_kind::incast};
  CHECK(o.max_partners(8) == 7);  // the incast target hears from every rank
  CHECK(o.max_partners(1) == 0);
}

TEST_CASE("--rails aligned connects round by round; --connect all with it is refused; --nic-map is a list") {
  const auto out = parse({"-d", "all", "--rails", "aligned", "--nic-map", "0,1,mlx5_3"});
  REQUIRE(out.opts.has_value());
  CHECK(out.opts->rails == rails_kind::aligned);
  CHECK(out.opts->connect == connect_kind::round);  // cross-rail peers may have no path: never connected
  CHECK(out.opts->nic_map == std::vector<std::string>{"0", "1", "mlx5_3"});
  CHECK(out.opts->ib_dev == "all");
  CHECK(out.opts->ib_devs.empty());  // all: every device the node has, found at run time
  const auto list = parse({"-d", "mlx5_10,mlx5_2"});
  REQUIRE(list.opts.has_value());
  CHECK(list.opts->ib_devs == std::vector<std::string>{"mlx5_10", "mlx5_2"});  // rail k = the k-th
  for (const char* bad : {"mlx5_2,", "mlx5_2,all", ",mlx5_2"}) {
    const auto out_bad = parse({"-d", bad});
    CHECK(out_bad.exit_code == exit_usage);
    CHECK(out_bad.text.find("names separated by commas") != std::string::npos);
  }
  const auto both = parse({"--rails", "aligned", "--connect", "all"});
  CHECK(both.exit_code == exit_usage);
  CHECK(both.text.find("drop --connect all") != std::string::npos);
  CHECK(parse({"--rails", "sideways"}).exit_code == exit_usage);
}
