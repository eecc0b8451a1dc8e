// Strict parsing of RDMAMESH_FAULT.
#include "rdmamesh/util/fault.hpp"

#include <charconv>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "rdmamesh/util/error.hpp"

namespace rdmamesh {
namespace {

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  while (true) {
    const auto colon = s.find(':');
    out.push_back(s.substr(0, colon));
    if (colon == std::string_view::npos) return out;
    s.remove_prefix(colon + 1);
  }
}

template <class T>
bool number(std::string_view s, T& out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

std::optional<fault> parse_fault(std::string_view spec, std::uint32_t n_ranks) {
  if (spec.empty()) return std::nullopt;
  auto bad = [&](std::string_view why) {
    return usage_error(fmt::format(
        "RDMAMESH_FAULT='{}': {}; use rkey:SRC:DST, corrupt:SRC:DST[:MSG], "
        "kill:RANK[:SECONDS[:RUN]], term[:SECONDS[:RUN]], slow:SRC:DST|*[:PCT] or stall:RANK[:RUN] (ranks 0..{})",
        spec, why, n_ranks ? n_ranks - 1 : 0));
  };
  const auto parts = split(spec);
  fault f;
  auto rank = [&](std::string_view s, std::uint32_t& r) {
    if (!number(s, r)) throw bad(fmt::format("'{}' is not a rank", s));
    if (r >= n_ranks) throw bad(fmt::format("rank {} does not exist", r));
  };
  if (parts[0] == "rkey" || parts[0] == "corrupt") {
    f.what = parts[0] == "rkey" ? fault::kind::rkey : fault::kind::corrupt;
    const std::size_t most = f.what == fault::kind::rkey ? 3 : 4;
    if (parts.size() < 3 || parts.size() > most) throw bad("wrong number of fields");
    rank(parts[1], f.src);
    rank(parts[2], f.dst);
    if (f.src == f.dst) throw bad("source and destination are the same rank");
    if (parts.size() == 4 && !number(parts[3], f.message)) throw bad("the message number is not a number");
  } else if (parts[0] == "kill") {
    f.what = fault::kind::kill;
    if (parts.size() < 2 || parts.size() > 4) throw bad("wrong number of fields");
    rank(parts[1], f.src);
    if (parts.size() == 4 && !number(parts[3], f.run)) throw bad("the run is not a run number");
    if (parts.size() >= 3) {
      char* end = nullptr;
      const std::string s(parts[2]);
      f.seconds = std::strtod(s.c_str(), &end);
      if (end == s.c_str() || *end != '\0' || !(f.seconds >= 0)) throw bad("the delay is not a number of seconds");
    }
  } else if (parts[0] == "term") {
    f.what = fault::kind::term;
    if (parts.size() > 3) throw bad("wrong number of fields");
    if (parts.size() == 3 && !number(parts[2], f.run)) throw bad("the run is not a run number");
    if (parts.size() >= 2) {
      char* end = nullptr;
      const std::string s(parts[1]);
      f.seconds = std::strtod(s.c_str(), &end);
      if (end == s.c_str() || *end != '\0' || !(f.seconds >= 0)) throw bad("the delay is not a number of seconds");
    }
  } else if (parts[0] == "slow") {
    f.what = fault::kind::slow;
    if (parts.size() < 3 || parts.size() > 4) throw bad("wrong number of fields");
    rank(parts[1], f.src);
    if (parts[2] == "*") {
      f.any_dst = true;
    } else {
      rank(parts[2], f.dst);
      if (f.src == f.dst) throw bad("source and destination are the same rank");
    }
    if (parts.size() == 4 && (!number(parts[3], f.pct) || !(f.pct > 0 && f.pct < 100))) {
      throw bad("the rate is not a percentage between 0 and 100");
    }
  } else if (parts[0] == "stall") {
    f.what = fault::kind::stall;
    if (parts.size() < 2 || parts.size() > 3) throw bad("wrong number of fields");
    rank(parts[1], f.src);
    if (parts.size() == 3 && !number(parts[2], f.run)) throw bad("the run is not a run number");
  } else {
    throw bad(fmt::format("unknown fault '{}'", parts[0]));
  }
  return f;
}

std::optional<fault> fault_from_env(std::uint32_t n_ranks) {
  const char* spec = std::getenv("RDMAMESH_FAULT");
  return parse_fault(spec ? spec : "", n_ranks);
}

}  // namespace rdmamesh
