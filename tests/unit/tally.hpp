// Element checks in a loop, reported as one assertion. doctest records every CHECK it runs, so
// millions of element checks in a schedule test cost most of the unit tests' time under the
// sanitizers; a tally costs a comparison each, and its one assertion still says how many
// elements broke the rule and shows the first.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include <doctest/doctest.h>
#include <fmt/format.h>

namespace rdmamesh::test {

class tally {
 public:
  // Counts one element; `what` (formatted only when it fails) says which element and why.
  // Returns ok, so a loop can skip an element whose later checks would index out of range.
  template <typename... Args>
  bool expect(bool ok, fmt::format_string<Args...> what, Args&&... args) {
    if (!ok && failed_++ == 0) first_ = fmt::format(what, std::forward<Args>(args)...);
    return ok;
  }
  std::size_t failed() const { return failed_; }
  const std::string& first() const { return first_; }

 private:
  std::size_t failed_ = 0;
  std::string first_;
};

}  // namespace rdmamesh::test

// One assertion for the whole tally: passes when no element failed.
#define CHECK_TALLY(t) CHECK_MESSAGE((t).failed() == 0, (t).failed(), " element(s) failed; the first: ", (t).first())
