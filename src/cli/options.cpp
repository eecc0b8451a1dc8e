// Flag parsing with CLI11. Sizes are taken as strings and converted by parse_size so that
// every size flag accepts and rejects exactly the same spellings.
#include "rdmamesh/cli/options.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "rdmamesh/util/error.hpp"
#include "rdmamesh/util/units.hpp"
#include "rdmamesh/version.hpp"

namespace rdmamesh {

std::string_view to_string(op_kind op) {
  switch (op) {
    case op_kind::write_imm: return "write_imm";
    case op_kind::write: return "write";
  }
  return "?";
}

std::vector<std::pair<std::string, std::string>> describe(const options& o) {
  auto num = [](double v) { return fmt::format("{:g}", v); };
  return {
      {"op", std::string(to_string(o.op))},
      {"size", format_size(o.size)},
      {"duration", o.duration_mode() ? num(o.duration_s) : "-"},
      {"warmup", o.duration_mode() ? num(o.warmup_s) : "-"},
      {"iters", o.duration_mode() ? "-" : fmt::format("{}", o.iters)},
      {"tx-depth", fmt::format("{}", o.tx_depth)},
      {"rx-depth", fmt::format("{}", o.rx_depth)},
      {"qp-timeout", fmt::format("{}", o.qp_timeout)},
      {"peer-buffer", o.peer_buffer ? format_size(o.peer_buffer) : "auto"},
      {"ib-dev", o.ib_dev.empty() ? "auto" : o.ib_dev},
      {"ib-port", o.ib_port ? fmt::format("{}", o.ib_port) : "auto"},
      {"gid-index", o.gid_index >= 0 ? fmt::format("{}", o.gid_index) : "auto"},
      {"verify", o.verify ? "yes" : "no"},
      {"timeout", num(o.timeout_s)},
      {"output", o.output.empty() ? "-" : o.output},
      {"force", o.force ? "yes" : "no"},
  };
}

std::string join_command_line(int argc, const char* const* argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string_view a = argv[i];
    if (i) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_./=:,+@%") == std::string_view::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

namespace {

void validate(const options& o) {
  if (o.size == 0) throw usage_error("--size must be at least 1 byte, e.g. -s 64K");
  if (o.tx_depth == 0) throw usage_error("--tx-depth must be at least 1, e.g. -t 128");
  if (o.rx_depth == 0) throw usage_error("--rx-depth must be at least 1, e.g. -r 512");
  if (o.duration_mode() && !(o.duration_s > 0 && std::isfinite(o.duration_s))) {
    throw usage_error("--duration must be a positive number of seconds, e.g. -D 2");
  }
  if (!(o.warmup_s >= 0 && std::isfinite(o.warmup_s))) {
    throw usage_error("--warmup must be zero or a positive number of seconds");
  }
  if (!(o.timeout_s > 0 && std::isfinite(o.timeout_s))) {
    throw usage_error("--timeout must be a positive number of seconds");
  }
  if (o.peer_buffer != 0 && o.peer_buffer < o.size) {
    throw usage_error(fmt::format("--size {} does not fit in --peer-buffer {}; raise --peer-buffer or lower --size",
                                  format_size(o.size), format_size(o.peer_buffer)));
  }
}

}  // namespace

parse_outcome parse_command_line(int argc, const char* const* argv) {
  options o;
  std::string size = "64K";
  std::string peer_buffer;
  std::string op = "write_imm";

  CLI::App app{
      "rdmamesh: full-mesh RDMA communication test. Launch with mpirun or srun; every rank "
      "connects one RC QP to every other rank and all pairs run at once.",
      "rdmamesh"};
  app.set_version_flag("--version", std::string("rdmamesh ") + tool_version);
  app.get_formatter()->column_width(34);

  app.add_option("--op", op, "Operation: write_imm (receiver counts every message) or write (one-sided)")
      ->check(CLI::IsMember({"write_imm", "write"}))
      ->capture_default_str();
  app.add_option("-s,--size", size, "Message size in bytes; units K, M, G (powers of 1024)")->capture_default_str();
  auto* dur = app.add_option("-D,--duration", o.duration_s, "Measured seconds per run")->capture_default_str();
  auto* iters = app.add_option("-n,--iters", o.iters, "Messages per ordered pair instead of a duration");
  dur->excludes(iters);
  app.add_option("--warmup", o.warmup_s, "Unmeasured seconds before a duration run")->capture_default_str();
  app.add_option("-t,--tx-depth", o.tx_depth, "Outstanding work requests per QP")->capture_default_str();
  app.add_option("-r,--rx-depth", o.rx_depth,
                 "Receives posted per QP; deeper than -t so a busy receiver is not a stall")
      ->capture_default_str();
  app.add_option("--qp-timeout", o.qp_timeout, "RC transport timeout exponent: 4.096 us * 2^N per retry (7 retries)")
      ->check(CLI::Range(1, 31))
      ->capture_default_str();
  app.add_option("--peer-buffer", peer_buffer,
                 "Receive buffer per peer (slots rotate inside it); default max(16M, 2 slots)");
  app.add_option("-d,--ib-dev", o.ib_dev, "RDMA device; default: the first with an ACTIVE port");
  app.add_option("-i,--ib-port", o.ib_port, "Device port; default: the first ACTIVE port")->check(CLI::Range(1, 255));
  app.add_option("-x,--gid-index", o.gid_index, "GID index (RoCE); default: a RoCE v2 IPv4-mapped GID")
      ->check(CLI::Range(0, 65535));
  app.add_option("-o,--output", o.output, "Write results to this HDF5 file");
  app.add_flag("--force", o.force, "Overwrite the output file if it exists");
  app.add_flag("--verify", o.verify, "Fill every payload with a (src, dst, seq) pattern and check it on arrival");
  app.add_option("--timeout", o.timeout_s, "Seconds any wait for peers may take before the run is declared failed")
      ->capture_default_str();

  parse_outcome out;
  try {
    app.parse(argc, argv);
    o.op = (op == "write") ? op_kind::write : op_kind::write_imm;
    o.size = parse_size(size, "--size");
    if (!peer_buffer.empty()) o.peer_buffer = parse_size(peer_buffer, "--peer-buffer");
    if (iters->count() && o.iters == 0) throw usage_error("--iters must be at least 1, e.g. -n 1000");
    validate(o);
    out.opts = o;
  } catch (const CLI::CallForHelp&) {
    out.exit_code = exit_ok;
    out.text = app.help();
  } catch (const CLI::CallForVersion&) {
    out.exit_code = exit_ok;
    out.text = std::string("rdmamesh ") + tool_version + "\n";
  } catch (const CLI::ParseError& e) {
    out.exit_code = exit_usage;
    out.text = fmt::format("{} (see rdmamesh --help)", e.what());
  } catch (const usage_error& e) {
    out.exit_code = exit_usage;
    out.text = e.what();
  }
  return out;
}

}  // namespace rdmamesh
