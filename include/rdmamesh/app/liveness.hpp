// Silence, not duration, ends a wait for peers. While a round runs, every rank tells rank 0 it
// is alive (a beat every --timeout/4) and rank 0 tells every rank the job goes on (a pulse as
// often). Rank 0 names a rank it has not heard from for --timeout; the others name rank 0 when
// its pulses stop, or whomever rank 0's pulse names. A round that runs for minutes runs for
// minutes; a dead or hung (SIGSTOPped) rank is named about --timeout after it fell silent.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rdmamesh/mpi/beacon.hpp"

namespace rdmamesh::app {

class liveness {
 public:
  using clock = std::chrono::steady_clock;

  // Why a wait must end.
  struct verdict {
    int rank = -1;           // the rank that fell silent or gave up, -1 if none in particular
    std::string reason;      // how this rank knows
    bool from_root = false;  // rank 0 announced it: it needs no report back
    int reporter = -1;       // rank 0: the rank that gave up and said why; answer it with acknowledge()
  };

  liveness(mpi::beacon& b, double timeout_s);

  // Every rank has just passed the round's barrier: start hearing from everyone afresh.
  void begin_round(clock::time_point now);
  // Sends what is due, reads what arrived. With `judge`, silence longer than --timeout is a
  // verdict; off once this rank's exchange is done (peers may then leave the round first).
  std::optional<verdict> tick(clock::time_point now, bool judge);

  // rank 0: every rank learns why the job ends, then the sends get up to `seconds` to leave.
  void announce(int rank, const std::string& line, double seconds);
  void acknowledge(int rank);
  // Others: tell rank 0 why this rank gives up (`rank` fell silent, `reason` says how this
  // rank knows; or rank -1 and the whole line); true once rank 0 has recorded it.
  bool report(int rank, const std::string& reason, double wait_s);

  double period_s() const { return period_s_; }

 private:
  std::optional<verdict> read(clock::time_point now);

  mpi::beacon& b_;
  double timeout_s_;
  double period_s_;
  clock::time_point next_send_{}, next_judge_{}, next_io_{}, last_pulse_{}, last_tick_{};
  std::vector<clock::time_point> last_heard_;  // rank 0: by rank
};

}  // namespace rdmamesh::app
