// The driver. Setup is a sequence of agreed steps (any rank's failure stops all ranks with
// one message). The run itself keeps the same collective sequence on every rank whatever
// fails locally, so a failure on one rank is reported instead of hanging the others.
#include "rdmamesh/app/run.hpp"

#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "rdmamesh/app/agree.hpp"
#include "rdmamesh/app/same_options.hpp"
#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/engine/engine.hpp"
#include "rdmamesh/fabric/endpoint.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/fabric/select.hpp"
#include "rdmamesh/io/report.hpp"
#include "rdmamesh/io/results_file.hpp"
#include "rdmamesh/plan/layout.hpp"
#include "rdmamesh/stats/matrix.hpp"

namespace rdmamesh::app {
namespace {

// Progress the engine until `done` or the deadline; false on timeout.
template <class Done>
bool progress_until(engine::engine& e, Done done, double timeout_s) {
  const auto deadline = engine::clock::now() +
                        std::chrono::duration_cast<engine::clock::duration>(std::chrono::duration<double>(timeout_s));
  while (!done()) {
    e.progress();
    if (engine::clock::now() > deadline) return false;
  }
  return true;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + '\n';
  return out;
}

std::vector<std::string> split_lines(const std::vector<std::string>& blobs) {
  std::vector<std::string> out;
  for (const auto& b : blobs) {
    std::size_t pos = 0;
    while (pos < b.size()) {
      const std::size_t eol = b.find('\n', pos);
      out.push_back(b.substr(pos, eol - pos));
      pos = eol == std::string::npos ? b.size() : eol + 1;
    }
  }
  return out;
}

}  // namespace

int run(const mpi::world& w, int argc, char** argv) {
  const auto n = static_cast<std::uint32_t>(w.size());
  const auto me = static_cast<std::uint32_t>(w.rank());

  // cli: parse everywhere; help and version print once
  const parse_outcome parsed = parse_command_line(argc, argv);
  int code = agree(w, parsed.opts ? exit_ok : parsed.exit_code, parsed.opts ? std::string() : parsed.text);
  if (!w.all_true(parsed.opts.has_value())) {
    if (me == 0 && code == exit_ok) {
      fmt::print("{}", parsed.text);
      std::fflush(stdout);
    }
    return code;
  }
  const options& o = *parsed.opts;

  code = step(w, [&] {
    if (n < 2) {
      throw usage_error(
          "rdmamesh needs at least 2 ranks (one per end of a pair); launch it with mpirun -np N or "
          "srun -n N, N >= 2");
    }
    check_same_options(w, o);
  });
  if (code != exit_ok) return code;

  // plan
  plan::layout layout;
  code = step(w, [&] { layout = plan::make_layout(o, n); });
  if (code != exit_ok) return code;

  // io: the output file exists before any traffic, so a bad path costs nothing
  std::unique_ptr<io::results_file> file;
  code = step(w, [&] {
    if (me == 0 && !o.output.empty()) {
      file = std::make_unique<io::results_file>(o.output, o.force, n, join_command_line(argc, argv));
      file->write_config(describe(o));
    }
  });
  if (code != exit_ok) return code;
  bool run_written = false;
  auto abandon_file = [&] {
    // nothing measured yet: leave no empty file behind to block the corrected rerun
    if (file && !run_written) {
      const std::string path = file->path();
      file.reset();
      std::remove(path.c_str());
    }
  };

  // fabric: device, resources, exchange, connect
  std::optional<fabric::port_choice> port;
  code = step(w, [&] { port = fabric::choose_port(fabric::discover(o.ib_dev), o); });
  const auto ranks = w.allgather(fabric::make_rank_info(fabric::this_host(), port ? &*port : nullptr));
  if (code != exit_ok) return abandon_file(), code;

  std::unique_ptr<fabric::endpoint> ep;
  code = step(w, [&] { ep = std::make_unique<fabric::endpoint>(o, layout, *port, me, n); });
  if (code != exit_ok) return abandon_file(), code;

  const std::vector<fabric::conn_info> mine = ep->local_infos();
  const std::vector<fabric::conn_info> theirs = w.alltoall(std::span<const fabric::conn_info>(mine), 1);
  code = step(w, [&] { ep->connect(theirs); });
  if (code != exit_ok) return abandon_file(), code;

  std::unique_ptr<engine::engine> eng;
  code = step(w, [&] { eng = std::make_unique<engine::engine>(o, layout, me, n, *ep); });
  if (code != exit_ok) return abandon_file(), code;

  if (me == 0) {
    fmt::print("{}", io::format_header(o, ranks));
    std::fflush(stdout);
    if (file) file->write_ranks(ranks);
  }
  w.barrier();

  // engine: traffic, then the drain protocol. Local failures become events; every rank still
  // takes part in each collective below, in the same order.
  std::vector<std::string> local_errors;
  try {
    eng->start();
    while (eng->sending()) eng->progress();
    if (!progress_until(
            *eng, [&] { return eng->drained(); }, o.timeout_s)) {
      local_errors.push_back(fmt::format("rank {}: timed out after {:g} s draining sends (still waiting for {})", me,
                                         o.timeout_s, eng->pending()));
    }
  } catch (const std::exception& e) {
    local_errors.push_back(fmt::format("rank {}: {}", me, e.what()));
  }

  // every rank learns how many messages each peer completed toward it, while still receiving
  const std::vector<std::uint64_t> sent = eng->completed_by_rank();
  std::vector<std::uint64_t> expected(n, 0);
  {
    mpi::request req = w.ialltoall(std::span<const std::uint64_t>(sent), std::span<std::uint64_t>(expected), 1);
    if (!progress_until(
            *eng, [&] { return req.test(); }, o.timeout_s)) {
      const std::string msg = fmt::format(
          "rank {} ({}): timed out after {:g} s waiting for the other ranks to finish "
          "sending; a rank may have died",
          me, fabric::this_host(), o.timeout_s);
      fmt::print(stderr, "rdmamesh: error: {}\n", msg);
      if (file) file->finish(false, msg);
      w.abort(exit_system);
    }
  }
  eng->expect(expected);
  if (!progress_until(
          *eng, [&] { return eng->received_all(); }, o.timeout_s)) {
    local_errors.push_back(
        fmt::format("rank {}: timed out after {:g} s waiting for {}", me, o.timeout_s, eng->pending()));
  }
  eng->verify_final();

  // stats: rank 0 assembles the matrices
  const std::vector<stats::pair_counters> counters = eng->results();
  const auto rows = w.gather(std::span<const stats::pair_counters>(counters));
  std::vector<std::string> events = eng->events();
  events.insert(events.end(), local_errors.begin(), local_errors.end());
  const auto all_events = split_lines(w.allgather_strings(join_lines(events)));

  bool clean = local_errors.empty();
  for (const auto& c : counters) clean = clean && c.flags == 0 && c.verify_errors == 0;
  clean = w.all_true(clean);

  // io
  if (me == 0) {
    const stats::run_matrices m = stats::assemble(rows, n, o.size, receiver_sees_messages(o.op));
    fmt::print("{}{}", io::format_matrix(m.tx_bw, "send bandwidth"), io::format_results(o, m, all_events));
    std::fflush(stdout);
    if (file) {
      file->write_run(0, o, m, all_events);
      run_written = true;
      file->finish(true, clean ? "ok" : "finished with failures");
    }
  }
  w.barrier();  // no rank tears down its QPs while a peer might still touch them
  return clean ? exit_ok : exit_run_failures;
}

}  // namespace rdmamesh::app
