// The shared helpers of the measured job: printing and the line for a silent peer.
#include "rdmamesh/app/context.hpp"

#include <cstdio>
#include <thread>

#include <fmt/ranges.h>

namespace rdmamesh::app {
namespace {

std::string host_of(const context& c, std::uint32_t r) {
  return std::string(fabric::text(c.ranks[r].host));
}

}  // namespace

void print(const std::string& text) {
  fmt::print("{}", text);
  std::fflush(stdout);
}

std::string stuck_line(const context& c, const std::optional<liveness::verdict>& v,
                       const std::vector<std::uint32_t>& suspects, const std::string& what) {
  const std::string me = fmt::format("rank {} ({})", c.me, host_of(c, c.me));
  if (v && v->reporter >= 0 && v->rank < 0) {
    return fmt::format("{}: ended the job because rank {} gave up: {}", me, v->reporter, v->reason);
  }
  if (v && v->rank < 0) return fmt::format("{}: the job ended while {}: {}", me, what, v->reason);
  if (v && v->rank == static_cast<int>(c.me)) {
    // this rank did not run (stopped, starved) and the others named it: it says so, not "itself"
    return fmt::format("{}: named as silent ({}) while {}; results so far are kept", me, v->reason, what);
  }
  if (v) {
    const auto r = static_cast<std::uint32_t>(v->rank);
    return fmt::format("{}: rank {} ({}) stopped answering ({}) while {}; results so far are kept", me, r,
                       host_of(c, r), v->reason, what);
  }
  if (suspects.empty()) {
    return fmt::format(
        "{}: the other ranks stopped answering while {}; a rank died or hangs (see the launcher's messages), or "
        "raise --timeout (now {:g} s)",
        me, what, c.o.timeout_s);
  }
  // What the NIC's evidence supports is a failed path, not a culprit: the peer may have died, or
  // the link or fabric between the two drops. Naming the peer as dead would blame a rank that
  // may have done nothing wrong (several of one rank's paths failing point at that rank's side).
  std::vector<std::string> names;
  for (auto r : suspects) names.push_back(fmt::format("rank {} ({})", r, host_of(c, r)));
  return fmt::format(
      "{}: its RDMA path{} to {} failed (transport retries ran out: a peer that died, or a link or fabric that "
      "drops) and the job stopped while {}; results so far are kept",
      me, suspects.size() == 1 ? "" : "s", fmt::join(names, ", "), what);
}

void wait_listening(const context& c, const engine::core& base, const char* what, mpi::request& req, bool judge) {
  const double bound = collective_bound_s(c.me, c.o.timeout_s) + (judge ? c.o.timeout_s / 2 : 0);
  guarded_wait g(c.dog, stuck_line(c, std::nullopt, base.suspects(), fmt::format("{} (waited {:g} s)", what, bound)),
                 bound);
  while (!req.test()) {
    if (auto v = c.live.tick(engine::clock::now(), judge)) {
      c.give_up(stuck_line(c, v, base.suspects(), what), *v);
    }
    std::this_thread::yield();
  }
}

}  // namespace rdmamesh::app
