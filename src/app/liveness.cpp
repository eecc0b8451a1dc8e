// Liveness policy over the beacon: who sends what when, and what silence means.
#include "rdmamesh/app/liveness.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

namespace rdmamesh::app {
namespace {

liveness::clock::duration seconds(double s) {
  return std::chrono::duration_cast<liveness::clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

liveness::liveness(mpi::beacon& b, double timeout_s)
    : b_(b),
      timeout_s_(timeout_s),
      period_s_(std::max(timeout_s / 4, 0.05)),
      last_heard_(static_cast<std::size_t>(b.rank() == 0 ? b.size() : 0)) {}

void liveness::begin_round(clock::time_point now) {
  next_send_ = now;  // the first beat or pulse goes out at once
  next_judge_ = now + seconds(period_s_);
  last_pulse_ = last_tick_ = next_io_ = now;
  std::fill(last_heard_.begin(), last_heard_.end(), now);
}

std::optional<liveness::verdict> liveness::tick(clock::time_point now, bool judge) {
  const bool root = b_.rank() == 0;
  // A gap in our own ticks means this process did not run (SIGSTOP and SIGCONT, a starved
  // core): the silence was ours, so hear everyone afresh rather than accuse them.
  if (now - last_tick_ > seconds(period_s_ * 2)) {
    last_pulse_ = now;
    std::fill(last_heard_.begin(), last_heard_.end(), now);
  }
  last_tick_ = now;
  // MPI progress costs microseconds: a hot loop that ticks after every post looks at most
  // every 10 ms (or a quarter period, if shorter)
  if (now < next_io_) return std::nullopt;
  next_io_ = now + seconds(std::min(period_s_ / 4, 0.01));
  if (now >= next_send_) {
    next_send_ = now + seconds(period_s_);
    if (root) {
      for (int r = 1; r < b_.size(); ++r) b_.post(r, {.kind = mpi::signal_kind::pulse, .rank = -1, .text = {}});
    } else {
      b_.post(0, {.kind = mpi::signal_kind::beat, .rank = -1, .text = {}});
    }
  }
  if (auto v = read(now)) return v;
  if (!judge || now < next_judge_) return std::nullopt;
  next_judge_ = now + seconds(period_s_ / 2);
  const auto silent_for = [&](clock::time_point last) { return std::chrono::duration<double>(now - last).count(); };
  if (!root) {
    if (const double s = silent_for(last_pulse_); s > timeout_s_) {
      return verdict{.rank = 0, .reason = fmt::format("heard nothing from it for {:.0f} s", s)};
    }
    return std::nullopt;
  }
  const auto oldest = std::min_element(last_heard_.begin() + 1, last_heard_.end());
  if (oldest != last_heard_.end() && silent_for(*oldest) > timeout_s_) {
    return verdict{.rank = static_cast<int>(oldest - last_heard_.begin()),
                   .reason = fmt::format("heard nothing from it for {:.0f} s", silent_for(*oldest))};
  }
  return std::nullopt;
}

std::optional<liveness::verdict> liveness::read(clock::time_point now) {
  for (auto& s : b_.poll()) {
    switch (s.kind) {
      // Any beat or pulse is a sign of life, whatever its round: a collective may complete on one
      // rank before another (a rank that died mid-barrier reached some of its peers), so a live
      // peer can be a round behind or ahead. Nothing sits unread while this rank ticks, and
      // begin_round and a gap in our own ticks hear everyone afresh anyway.
      case mpi::signal_kind::beat:
        if (!last_heard_.empty()) last_heard_[static_cast<std::size_t>(s.source)] = now;
        break;
      case mpi::signal_kind::pulse:
        last_pulse_ = now;
        if (!s.text.empty()) return verdict{.rank = s.rank, .reason = std::move(s.text), .from_root = true};
        break;
      case mpi::signal_kind::failure:
        return verdict{.rank = s.rank, .reason = std::move(s.text), .from_root = false, .reporter = s.source};
      case mpi::signal_kind::ack: break;  // only report() waits for one
    }
  }
  return std::nullopt;
}

void liveness::announce(int rank, const std::string& line, double seconds_left) {
  for (int r = 1; r < b_.size(); ++r) b_.post(r, {.kind = mpi::signal_kind::pulse, .rank = rank, .text = line});
  b_.drain(seconds_left);
}

void liveness::acknowledge(int rank) {
  b_.post(rank, {.kind = mpi::signal_kind::ack, .rank = -1, .text = {}});
  b_.drain(1.0);
}

bool liveness::report(int rank, const std::string& reason, double wait_s) {
  const auto until = clock::now() + seconds(wait_s);
  bool sent = false;
  while (clock::now() < until) {
    // the slot to rank 0 may still hold a beat rank 0 has not taken yet
    sent = sent || b_.post(0, {.kind = mpi::signal_kind::failure, .rank = rank, .text = reason});
    for (const auto& s : b_.poll()) {
      if (s.kind == mpi::signal_kind::ack) return true;
      if (s.kind == mpi::signal_kind::pulse && !s.text.empty()) return true;  // rank 0 ends the job anyway
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace rdmamesh::app
