// The driver: the layers in order for one MPI job. The flags are parsed on every rank (help and
// version print once), setup makes everything once (app/setup.hpp), then the job runs every
// pattern and size over those connections (app/job.hpp); rank 0 prints and writes each run as
// it ends, so a later failure loses nothing already measured.
#include "rdmamesh/app/run.hpp"

#include <fmt/format.h>

#include "rdmamesh/app/agree.hpp"
#include "rdmamesh/app/context.hpp"
#include "rdmamesh/app/job.hpp"
#include "rdmamesh/app/setup.hpp"
#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/util/error.hpp"

namespace rdmamesh::app {

int run(const mpi::world& w, int argc, char** argv) {
  const parse_outcome parsed = parse_command_line(argc, argv);
  const int code = agree(w, parsed.opts ? exit_ok : parsed.exit_code, parsed.opts ? std::string() : parsed.text);
  if (!w.all_true(parsed.opts.has_value())) {
    if (w.rank() == 0 && code == exit_ok) print(parsed.text);
    return code;
  }
  const options& o = *parsed.opts;
  setup s;
  if (const int setup_code = prepare(w, o, argc, argv, s); setup_code != exit_ok) return setup_code;
  return run_job(w, o, s);
}

}  // namespace rdmamesh::app
