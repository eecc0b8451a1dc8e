// Test-only fault injection, so CI can prove what rdmamesh does when things break:
//   RDMAMESH_FAULT=rkey:SRC:DST          SRC uses a wrong rkey toward DST (remote access error)
//   RDMAMESH_FAULT=corrupt:SRC:DST[:N]   SRC flips a byte of its N-th message to DST (default 5);
//                                        with --verify the receiver must report it
//   RDMAMESH_FAULT=kill:RANK[:SECONDS[:RUN]]  RANK kills itself with SIGKILL that long (default
//                                        2) after run RUN (default 0) starts, as `kill -9` would;
//                                        counted from a run, not the launch, so a test knows
//                                        which runs finished however busy the machine is
//   RDMAMESH_FAULT=term[:SECONDS[:RUN]]  every rank sends itself SIGTERM that long (default 2)
//                                        after run RUN (default 0) starts: a batch system's
//                                        time limit, at a moment no busy machine can blur
//   RDMAMESH_FAULT=slow:SRC:DST[:PCT]    SRC holds back its posts to DST (* for every peer) so
//                                        that pair runs at about PCT % (default 50) of its rate
//   RDMAMESH_FAULT=stall:RANK[:RUN]      RANK sleeps from its warm-up's end past its interval's
//                                        end in run RUN (default 0), first round: no CPU for its
//                                        whole window, as on a badly oversubscribed node
// Not a user feature: it is parsed strictly and named in the header when set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rdmamesh {

struct fault {
  enum class kind : std::uint8_t { rkey, corrupt, kill, term, slow, stall };
  kind what = kind::rkey;
  std::uint32_t src = 0;  // kill: the rank that dies; stall: the rank that sleeps
  std::uint32_t dst = 0;
  std::uint64_t message = 5;  // corrupt
  double seconds = 2.0;       // kill, term
  std::uint32_t run = 0;      // kill, term: counted from the start of this run; stall: in it
  bool any_dst = false;       // slow: DST was '*'
  double pct = 50;            // slow

  bool hits(std::uint32_t from, std::uint32_t to) const { return src == from && (any_dst || dst == to); }
};

// nullopt for an empty spec; throws usage_error naming the accepted forms otherwise.
std::optional<fault> parse_fault(std::string_view spec, std::uint32_t n_ranks);

// RDMAMESH_FAULT from the environment.
std::optional<fault> fault_from_env(std::uint32_t n_ranks);

}  // namespace rdmamesh
