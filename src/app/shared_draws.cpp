// Rank 0 drawing a run's healthy look-alikes alone kept every other rank waiting, and where they
// share its cores, spinning on them; the draws are independent, so every rank takes a share.
#include "rdmamesh/app/shared_draws.hpp"

#include <array>
#include <cstddef>
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

namespace rdmamesh::app {
namespace {

// The model's wire form: its scalars, then its pairs and slots as they lie in memory (every rank
// runs the same binary).
struct head {
  std::uint32_t n;
  std::uint64_t msg_size;
  double send_t, recv_t, pair_sd, step;
  std::uint64_t pairs, slots;
};

// Where one rank's draws would take more memory (thousands of ranks: each draw fills n x n
// matrices, on every rank of a node at once), rank 0 draws alone, within the draws' time bound.
constexpr std::size_t max_shared_bytes = std::size_t{64} << 20;

template <class T>
void put(std::vector<std::byte>& out, const T* data, std::size_t count) {
  const auto* p = reinterpret_cast<const std::byte*>(data);
  out.insert(out.end(), p, p + count * sizeof(T));
}

template <class T>
void take(std::span<const std::byte>& in, T* data, std::size_t count) {
  const std::size_t bytes = count * sizeof(T);
  if (bytes > in.size()) throw std::runtime_error("the false-alarm draws' model arrived cut short");
  std::memcpy(data, in.data(), bytes);
  in = in.subspan(bytes);
}

std::vector<std::byte> encode(const stats::draw_model& m) {
  const head h{m.n, m.msg_size, m.send_t, m.recv_t, m.pair_sd, m.step, m.pairs.size(), m.slots.size()};
  std::vector<std::byte> out;
  put(out, &h, 1);
  put(out, m.pairs.data(), m.pairs.size());
  put(out, m.slots.data(), m.slots.size());
  return out;
}

stats::draw_model decode(std::span<const std::byte> in) {
  head h{};
  take(in, &h, 1);
  stats::draw_model m{h.n, h.msg_size, h.send_t, h.recv_t, h.pair_sd, h.step, {}, {}};
  m.pairs.resize(h.pairs);
  m.slots.resize(h.slots);
  take(in, m.pairs.data(), m.pairs.size());
  take(in, m.slots.data(), m.slots.size());
  return m;
}

}  // namespace

stats::false_alarms shared_draws(const context& c, const engine::core& base, const stats::finder_settings& judge,
                                 const stats::draw_model* model) {
  std::vector<std::byte> wire;
  if (model != nullptr && !model->pairs.empty() && stats::draw_bytes(*model) <= max_shared_bytes) wire = encode(*model);
  // its length first: the other ranks wait here while rank 0 judges the run (0: nothing to share)
  std::uint64_t len = wire.size();
  {
    mpi::request req = c.w.ibcast(std::as_writable_bytes(std::span(&len, 1)));
    wait_listening(c, base, "receiving the false-alarm draws' model", req);
  }
  if (len == 0) {
    if (c.me != 0 || model == nullptr) return {};
    return stats::draw_false_alarms(*model, c.node_of, judge, c.uplinks, c.nics, 0, 1);
  }
  wire.resize(len);
  {
    mpi::request req = c.w.ibcast(wire);
    wait_listening(c, base, "receiving the false-alarm draws' model", req);
  }
  // ranks past the draws' number have none to draw (draw_false_alarms returns at once)
  const stats::draw_model received =
      c.me == 0 || c.me >= stats::false_alarm_settings{}.max_draws ? stats::draw_model{} : decode(wire);
  const auto mine =
      stats::draw_false_alarms(c.me == 0 ? *model : received, c.node_of, judge, c.uplinks, c.nics, c.me, c.n);
  const std::array<std::uint64_t, 2> counts{mine.drawn, mine.named};
  std::array<std::uint64_t, 2> sum{};
  {
    mpi::request req = c.w.ireduce_sum(counts, sum);
    wait_listening(c, base, "adding up the false-alarm draws", req, c.me == 0);
  }
  return {static_cast<std::uint32_t>(sum[0]), static_cast<std::uint32_t>(sum[1])};
}

}  // namespace rdmamesh::app
