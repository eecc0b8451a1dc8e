// A fabric simulator: complete runs (the matrices rdmamesh writes) drawn from a noise model, with
// an injected fault, for the real judging code to judge at any size without the hardware.
//
// The model is the one the verdict assumes (docs/verdict.md): the log rate of pair (a, b) is its
// class's offset + a sender effect of a + a receiver effect of b + the count's own error. Each
// run draws its own scale for the sender and the receiver effects (how much the ranks differ
// varies from run to run: on the emulated cluster, with how the CPU was shared), and the effects
// themselves from a Student t (a few ranks far off by chance, not a normal's neat tails).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rdmamesh/stats/matrix.hpp"

namespace rdmamesh::sim {

// How one kind of fabric's runs vary. The scales are log-normal across runs: median and sd of
// the log. `tail`: the effects' t degrees of freedom.
struct noise_model {
  std::string name;
  double sender = 0, sender_sd = 0;
  double receiver = 0, receiver_sd = 0;
  double tail = 3;
  double msgs = 300;  // the median pair's count over the measured window (its Poisson error)
};

// Fitted by tools/fit-noise from the emulated cluster's healthy runs (see docs/verdict.md).
noise_model emulator_noise();
// A real NIC fabric: ranks within a few % of one another, long counts.
noise_model nic_noise();

struct fabric_shape {
  std::uint32_t nodes = 3, per_node = 2, rails = 1;
};

enum class fault_kind : std::uint8_t { none, rank, nic, node, link };

struct fault {
  fault_kind kind = fault_kind::none;
  double fraction = 1;  // of its rate left (0.5: half)
};

struct simulated_run {
  stats::run_matrices m;
  std::vector<std::int32_t> node_of, rail_of;
  std::int32_t fault_node = -1, fault_rank = -1, fault_rail = -1, fault_peer = -1;
};

// One mesh run (every pair in one round) of 4 KiB messages over 1 s.
simulated_run generate(const fabric_shape& f, const noise_model& nm, const fault& x, std::mt19937_64& g);

}  // namespace rdmamesh::sim
