// libFuzzer target: the whole flag parser. The input is an argv, arguments separated by NUL
// bytes. parse_command_line must never throw; it returns either options that pass the same
// validation a run relies on, help/version text (exit 0), or exit 2 with one line of error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "rdmamesh/cli/options.hpp"
#include "rdmamesh/util/error.hpp"

namespace {

void check_options(const rdmamesh::options& o) {
  if (o.sizes.empty() || o.patterns.empty()) std::abort();
  for (auto s : o.sizes) {
    if (s == 0 || s > (std::uint64_t{1} << 31)) std::abort();
  }
  if (o.tx_depth == 0 || o.qps == 0 || o.post_list == 0) std::abort();
  if (!(o.timeout_s > 0) || (o.duration_mode() && !(o.duration_s > 0))) std::abort();
  (void)rdmamesh::describe(o);  // what the header, the file and the cross-rank check read
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"rdmamesh"};
  std::string cur;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.size() > 64) return 0;
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());

  const rdmamesh::parse_outcome out = rdmamesh::parse_command_line(static_cast<int>(argv.size()), argv.data());
  if (out.opts) {
    check_options(*out.opts);
  } else if (out.exit_code == rdmamesh::exit_usage) {
    // one line that says what to do; it is printed once per job as `rdmamesh: error: ...`
    if (out.text.empty() || out.text.find('\n') != std::string::npos) std::abort();
  } else if (out.exit_code != rdmamesh::exit_ok || out.text.empty()) {
    std::abort();
  }
  return 0;
}
