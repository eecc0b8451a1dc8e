// Liveness messages on a communicator of their own, so they never match a collective: while
// ranks work through a round, each sends rank 0 a small beat and rank 0 sends every rank a
// pulse that carries its verdict; a rank that gives up sends rank 0 its reason. All sends are
// non-blocking and at most one per destination is in flight, so a silent peer costs nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "rdmamesh/mpi/world.hpp"

namespace rdmamesh::mpi {

enum class signal_kind : std::int32_t {
  beat = 1,     // rank -> 0: still working
  pulse = 2,    // 0 -> rank: the job goes on; `rank` >= 0 names a rank that fell silent
  failure = 3,  // rank -> 0: this rank gives up; the text says why
  ack = 4,      // 0 -> rank: the failure is recorded
};

struct signal {
  int source = -1;
  signal_kind kind = signal_kind::beat;
  std::int32_t rank = -1;
  std::string text;
};

class beacon {
 public:
  explicit beacon(const world& w);  // collective: duplicates MPI_COMM_WORLD
  ~beacon();
  beacon(const beacon&) = delete;
  beacon& operator=(const beacon&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Sends `s` (source ignored) to `to`; false when the previous send to `to` is still in flight.
  bool post(int to, const signal& s);
  // Every signal that has arrived, oldest first; never blocks.
  std::vector<signal> poll();
  // Gives the sends in flight up to `seconds` to complete (before this process exits).
  void drain(double seconds);

 private:
  struct outgoing;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::vector<std::unique_ptr<outgoing>> out_;  // one slot per destination, created on first use
};

}  // namespace rdmamesh::mpi
