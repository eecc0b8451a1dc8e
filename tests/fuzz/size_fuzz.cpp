// libFuzzer target: parse_size either returns a size whose spelling it accepted, or throws a
// usage_error of one line. Anything else (another exception, a crash, UB) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "rdmamesh/util/error.hpp"
#include "rdmamesh/util/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const std::uint64_t bytes = rdmamesh::parse_size(text);
    // what was accepted reads back to the same value
    if (rdmamesh::parse_size(rdmamesh::format_size(bytes)) != bytes) std::abort();
  } catch (const rdmamesh::usage_error& e) {
    const std::string_view msg = e.what();
    if (msg.empty() || msg.find('\n') != std::string_view::npos) std::abort();
  }
  return 0;
}
