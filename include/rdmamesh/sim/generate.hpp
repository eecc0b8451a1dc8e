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
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rdmamesh/cli/options.hpp"
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
  // A pair alone (--retest, its ports to itself): it keeps `keep` of its run's sender and
  // receiver effects (what outlasts the run: a rank's placement, its core) and draws a fresh
  // effect of its own, of scale `alone` (t of `tail`): the run's contention is gone.
  double keep = 0.5, alone = 0.01;
  // ... and each rank draws, for the whole retest, an effect alone on what it sends and one on
  // what it receives (scales, t of `tail`): what all its pairs alone share (its CPU in the retest)
  double alone_send = 0, alone_recv = 0;
  // ... and each node the same, shared by all its ranks (its device or its kernel in the retest)
  double node_send = 0, node_recv = 0;
  // Every node's ranks pinned by local rank onto these CPUs of one kernel (the emulated cluster's
  // vCPUs; 0: each node its own CPUs). Alone, each ordered pair of them (i, j) is a path whose
  // pairs share an offset the job draws (normal, sd `cpu_path` between two CPUs, `shared_path`
  // on one, about `shared_alone` below: one core's time for both ends), and a pair on one CPU
  // draws its own effect at scale `shared` instead of `alone`.
  std::uint32_t cpus = 0;
  double cpu_path = 0, shared_alone = 0, shared_path = 0, shared = 0;
};

// Fitted by tools/fit-noise from the emulated cluster's healthy runs (see docs/verdict.md).
noise_model emulator_noise();
// A real NIC fabric: ranks within a few % of one another, long counts.
noise_model nic_noise();

// `leaves`: nodes in equal blocks under that many leaf switches (0: no tree); `pods`: the leaves
// in equal blocks under that many aggregation switches, a third tier (0: two tiers). `pattern`:
// mesh (every pair in one round) or spread (--partners rounds of the plan rdmamesh would play).
struct fabric_shape {
  std::uint32_t nodes = 3, per_node = 2, rails = 1, leaves = 0, pods = 0;
  pattern_kind pattern = pattern_kind::mesh;
  std::uint32_t partners = 8;
  bool dense = false;  // a spread run's matrices N x N, as rdmamesh's own run holds them, not its pairs only
};

// uplink: what leaves one leaf for the rest of the fabric; pod: what leaves one pod (its
// aggregation switch's uplink to the core)
enum class fault_kind : std::uint8_t { none, rank, nic, node, link, uplink, pod };

struct fault {
  fault_kind kind = fault_kind::none;
  double fraction = 1;  // of its rate left (0.5: half)
};

struct simulated_run {
  stats::run_matrices m;
  std::vector<std::int32_t> node_of, rail_of, leaf_of, pod_of;
  std::vector<std::int32_t> cpu_of;  // by rank: the CPU of noise_model::cpus it is pinned to (empty: none)
  std::vector<double> send, recv;    // the run's effects, by rank (log)
  std::int32_t fault_node = -1, fault_rank = -1, fault_rail = -1, fault_peer = -1, fault_leaf = -1, fault_pod = -1;
};

// One run of 4 KiB messages over 1 s: a mesh (every pair in one round, sharing each port N-1
// ways) or spread's rounds (a pair has its ports to itself, so it counts N-1 times more).
// `first`: another run of the same job, drawn first: this one has its fault where that one has,
// and keeps `keep` of its effects (their correlation), drawing the rest afresh, as a rank's
// placement and core outlast a run.
simulated_run generate(const fabric_shape& f, const noise_model& nm, const fault& x, std::mt19937_64& g,
                       const simulated_run* first = nullptr);

// Whether the fault slows pair (a, b) of the run.
bool faulted(const simulated_run& r, fault_kind k, std::uint32_t a, std::uint32_t b);

// The retest of run `r`: bytes/s of each of `pairs` alone, as rdmamesh measures them after the run
// (NaN elsewhere), each with its ports to itself (N-1 times a mesh pair's count) and the noise
// model's `keep` and `alone`. Each pair draws from its own stream, seeded by `seed` and the
// pair: what a pair reads alone does not depend on which other pairs the retest plans, so two
// versions of the verdict that plan different retests are judged on the same draws.
stats::square<double> generate_alone(const simulated_run& r, const noise_model& nm, const fault& x,
                                     std::span<const std::pair<std::uint32_t, std::uint32_t>> pairs,
                                     std::uint64_t seed);

}  // namespace rdmamesh::sim
