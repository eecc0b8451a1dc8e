// Liveness messages: a fixed header and an optional text, packed into one MPI_BYTE message.
#include "rdmamesh/mpi/beacon.hpp"

#include <cstring>

namespace rdmamesh::mpi {
namespace {

constexpr int tag = 7;  // the only tag on the beacon's own communicator

struct header {
  std::int32_t kind;
  std::int32_t rank;
};

}  // namespace

// The bytes of a send stay alive until MPI has completed it.
struct beacon::outgoing {
  MPI_Request req = MPI_REQUEST_NULL;
  std::vector<char> bytes;
};

beacon::beacon(const world& w) : rank_(w.rank()), size_(w.size()) {
  check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup(beacon)");
  check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler(beacon)");
  out_.resize(static_cast<std::size_t>(size_));
}

beacon::~beacon() {
  for (auto& o : out_) {
    if (!o || o->req == MPI_REQUEST_NULL) continue;
    int done = 0;
    MPI_Test(&o->req, &done, MPI_STATUS_IGNORE);
    // a send to a peer that never received it: MPI may still read the bytes, so keep them
    if (!done) (void)o.release();
  }
  poll();  // leave nothing unmatched behind
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

bool beacon::post(int to, const signal& s) {
  auto& slot = out_[static_cast<std::size_t>(to)];
  if (!slot) slot = std::make_unique<outgoing>();
  if (slot->req != MPI_REQUEST_NULL) {
    int done = 0;
    check(MPI_Test(&slot->req, &done, MPI_STATUS_IGNORE), "MPI_Test(beacon send)");
    if (!done) return false;
  }
  const header h{static_cast<std::int32_t>(s.kind), s.rank};
  slot->bytes.resize(sizeof h + s.text.size());
  std::memcpy(slot->bytes.data(), &h, sizeof h);
  std::memcpy(slot->bytes.data() + sizeof h, s.text.data(), s.text.size());
  check(MPI_Isend(slot->bytes.data(), static_cast<int>(slot->bytes.size()), MPI_BYTE, to, tag, comm_, &slot->req),
        "MPI_Isend(beacon)");
  return true;
}

void beacon::drain(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (auto& o : out_) {
    while (o && o->req != MPI_REQUEST_NULL && std::chrono::steady_clock::now() < until) {
      int done = 0;
      if (MPI_Test(&o->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
    }
  }
}

std::vector<signal> beacon::poll() {
  std::vector<signal> got;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    check(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm_, &flag, &st), "MPI_Iprobe(beacon)");
    if (!flag) return got;
    int count = 0;
    check(MPI_Get_count(&st, MPI_BYTE, &count), "MPI_Get_count(beacon)");
    std::vector<char> bytes(static_cast<std::size_t>(count));
    check(MPI_Recv(bytes.data(), count, MPI_BYTE, st.MPI_SOURCE, tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv(beacon)");
    if (bytes.size() < sizeof(header)) continue;  // not ours: nothing else uses this communicator
    header h{};
    std::memcpy(&h, bytes.data(), sizeof h);
    got.push_back({st.MPI_SOURCE, static_cast<signal_kind>(h.kind), h.rank,
                   std::string(bytes.data() + sizeof h, bytes.size() - sizeof h)});
  }
}

}  // namespace rdmamesh::mpi
