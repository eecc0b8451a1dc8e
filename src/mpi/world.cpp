// MPI wrappers: every failure names the call and carries MPI's own error string.
#include "rdmamesh/mpi/world.hpp"

#include <sched.h>

#include <climits>
#include <cstdio>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace rdmamesh::mpi {

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS) return "?";
  std::string v(text, static_cast<std::size_t>(len));
  return v.substr(0, v.find('\n'));
}

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw mpi_error(fmt::format("{} failed: {}", call, std::string(text, static_cast<std::size_t>(len))));
}

void world::wait(MPI_Request& r, const char* call) {
  for (;;) {
    int done = 0;
    check(MPI_Test(&r, &done, MPI_STATUS_IGNORE), call);
    if (done != 0) return;
    sched_yield();
  }
}

environment::environment(int& argc, char**& argv) {
  check(MPI_Init(&argc, &argv), "MPI_Init");
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
}

environment::~environment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

request::request(request&& o) noexcept : reqs_(std::exchange(o.reqs_, {})), receives_(std::exchange(o.receives_, 0)) {}

request& request::operator=(request&& o) noexcept {
  if (this != &o) {
    drop();
    reqs_ = std::exchange(o.reqs_, {});
    receives_ = std::exchange(o.receives_, 0);
  }
  return *this;
}

request::~request() {
  drop();
}

void request::drop() noexcept {
  for (std::size_t i = 0; i < reqs_.size(); ++i) {
    if (reqs_[i] == MPI_REQUEST_NULL) continue;
    if (i < receives_) MPI_Cancel(&reqs_[i]);
    MPI_Request_free(&reqs_[i]);
  }
  reqs_.clear();
}

bool request::test() {
  if (reqs_.empty()) return true;
  int done = 0;
  check(MPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
  return done != 0;
}

world::world() {
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

node_info world::node() const {
  node_info info;
  MPI_Comm local = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local), "MPI_Comm_split_type(SHARED)");
  const int rc_rank = MPI_Comm_rank(local, &info.local_rank);
  const int rc_size = MPI_Comm_size(local, &info.local_size);
  // node index: how many nodes' leaders come before ours
  int leader = info.local_rank == 0 ? 1 : 0;
  int before = 0;
  MPI_Request r = MPI_REQUEST_NULL;
  int rc_scan = MPI_Iexscan(&leader, &before, 1, MPI_INT, MPI_SUM, comm_, &r);
  if (rc_scan == MPI_SUCCESS) wait(r, "MPI_Iexscan");
  if (rank_ == 0) before = 0;  // MPI_Exscan leaves rank 0's result undefined
  info.node = before;
  int rc_bcast = MPI_Ibcast(&info.node, 1, MPI_INT, 0, local, &r);
  if (rc_bcast == MPI_SUCCESS) wait(r, "MPI_Ibcast(node)");
  int rc_sum = MPI_Iallreduce(&leader, &info.nodes, 1, MPI_INT, MPI_SUM, comm_, &r);
  if (rc_sum == MPI_SUCCESS) wait(r, "MPI_Iallreduce(nodes)");
  MPI_Comm_free(&local);
  check(rc_rank, "MPI_Comm_rank(node)");
  check(rc_size, "MPI_Comm_size(node)");
  check(rc_scan, "MPI_Iexscan");
  check(rc_bcast, "MPI_Ibcast(node)");
  check(rc_sum, "MPI_Iallreduce(nodes)");
  return info;
}

void world::barrier() const {
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(comm_, &r), "MPI_Ibarrier");
  wait(r, "MPI_Ibarrier");
}

request world::ibarrier() const {
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(comm_, &r), "MPI_Ibarrier");
  return request(r);
}

bool world::all_true(bool mine) const {
  int in = mine ? 1 : 0;
  int out = 0;
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_LAND, comm_, &r), "MPI_Iallreduce(MPI_LAND)");
  wait(r, "MPI_Iallreduce(MPI_LAND)");
  return out != 0;
}

request world::iall_true(const int& in, int& out) const {
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_LAND, comm_, &r), "MPI_Iallreduce(MPI_LAND)");
  return request(r);
}

double world::max(double mine) const {
  double out = 0;
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(&mine, &out, 1, MPI_DOUBLE, MPI_MAX, comm_, &r), "MPI_Iallreduce(MPI_MAX)");
  wait(r, "MPI_Iallreduce(MPI_MAX)");
  return out;
}

std::vector<std::uint64_t> world::reduce_sum(std::span<const std::uint64_t> mine, int root) const {
  std::vector<std::uint64_t> out(rank_ == root ? mine.size() : 0);
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Ireduce(mine.data(), rank_ == root ? out.data() : nullptr, bytes(mine.size()), MPI_UINT64_T, MPI_SUM, root,
                    comm_, &r),
        "MPI_Ireduce(MPI_SUM)");
  wait(r, "MPI_Ireduce(MPI_SUM)");
  return out;
}

request world::ibcast(std::span<std::byte> buf) const {
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Ibcast(buf.data(), bytes(buf.size()), MPI_BYTE, 0, comm_, &r), "MPI_Ibcast");
  return request(r);
}

request world::ireduce_sum(std::span<const std::uint64_t> mine, std::span<std::uint64_t> out) const {
  if (rank_ == 0 && out.size() != mine.size()) throw mpi_error("ireduce_sum: out has the wrong length");
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Ireduce(mine.data(), rank_ == 0 ? out.data() : nullptr, bytes(mine.size()), MPI_UINT64_T, MPI_SUM, 0, comm_,
                    &r),
        "MPI_Ireduce(MPI_SUM)");
  return request(r);
}

std::vector<std::string> world::allgather_strings(const std::string& mine) const {
  const int len = bytes(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size_));
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Iallgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm_, &r), "MPI_Iallgather(lengths)");
  wait(r, "MPI_Iallgather(lengths)");
  std::vector<int> displs(lens.size());
  long long total = 0;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    displs[i] = static_cast<int>(total);
    total += lens[i];
  }
  if (total > INT_MAX) throw mpi_error("allgather_strings: more than 2 GiB of text");
  std::string flat(static_cast<std::size_t>(total), '\0');
  check(MPI_Iallgatherv(mine.data(), len, MPI_CHAR, flat.data(), lens.data(), displs.data(), MPI_CHAR, comm_, &r),
        "MPI_Iallgatherv");
  wait(r, "MPI_Iallgatherv");
  std::vector<std::string> out;
  out.reserve(lens.size());
  for (std::size_t i = 0; i < lens.size(); ++i) {
    out.push_back(flat.substr(static_cast<std::size_t>(displs[i]), static_cast<std::size_t>(lens[i])));
  }
  return out;
}

std::string world::bcast_string(const std::string& from_root) const {
  int len = rank_ == 0 ? bytes(from_root.size()) : 0;
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Ibcast(&len, 1, MPI_INT, 0, comm_, &r), "MPI_Ibcast(length)");
  wait(r, "MPI_Ibcast(length)");
  std::string out = rank_ == 0 ? from_root : std::string(static_cast<std::size_t>(len), '\0');
  check(MPI_Ibcast(out.data(), len, MPI_CHAR, 0, comm_, &r), "MPI_Ibcast");
  wait(r, "MPI_Ibcast");
  return out;
}

void world::abort(int code) const {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(comm_, code);
  std::abort();  // MPI_Abort does not return; keep [[noreturn]] honest
}

int world::bytes(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX)) throw mpi_error(fmt::format("MPI message of {} bytes exceeds INT_MAX", n));
  return static_cast<int>(n);
}

request world::iexchange_bytes(std::span<const std::uint32_t> partners, const std::byte* send, std::byte* recv,
                               std::size_t per_partner) const {
  constexpr int tag = 0x524d;  // no other point-to-point traffic on this communicator
  // receives first: a request dropped unfinished cancels those, and frees the sends
  std::vector<MPI_Request> reqs(2 * partners.size(), MPI_REQUEST_NULL);
  try {
    for (std::size_t i = 0; i < partners.size(); ++i) {
      check(MPI_Irecv(recv + i * per_partner, bytes(per_partner), MPI_BYTE, static_cast<int>(partners[i]), tag, comm_,
                      &reqs[i]),
            fmt::format("MPI_Irecv(from={}, bytes={})", partners[i], per_partner).c_str());
    }
    for (std::size_t i = 0; i < partners.size(); ++i) {
      check(MPI_Isend(send + i * per_partner, bytes(per_partner), MPI_BYTE, static_cast<int>(partners[i]), tag, comm_,
                      &reqs[partners.size() + i]),
            fmt::format("MPI_Isend(to={}, bytes={})", partners[i], per_partner).c_str());
    }
  } catch (...) {
    request posted(std::move(reqs), partners.size());  // what was posted is cancelled and freed
    throw;
  }
  return request(std::move(reqs), partners.size());
}

void world::check_alltoall_shape(std::size_t n, std::size_t per_rank) const {
  if (n != per_rank * static_cast<std::size_t>(size_)) {
    throw mpi_error(fmt::format("alltoall: {} elements is not {} per rank x {} ranks", n, per_rank, size_));
  }
}

}  // namespace rdmamesh::mpi
