// The only place rdmamesh calls MPI: environment lifetime, typed collectives over trivially
// copyable structs, and non-blocking requests that callers poll while they keep the
// fabric progressing (a blocked rank that stops polling can stall its peers' sends). The
// blocking collectives yield the core while they wait (world::wait).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <mpi.h>

namespace rdmamesh::mpi {

// An MPI call failed; the message names the call and MPI's error string.
class mpi_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check(int rc, const char* call);

// MPI_Get_library_version's first line, e.g. "Open MPI v4.1.4, package: Debian OpenMPI, ...".
std::string library_version();

// MPI_Init / MPI_Finalize. Errors return codes (MPI_ERRORS_RETURN) so they become exceptions.
class environment {
 public:
  environment(int& argc, char**& argv);
  ~environment();
  environment(const environment&) = delete;
  environment& operator=(const environment&) = delete;
};

// Pending non-blocking MPI requests, done when all are; test() is cheap enough to call from a
// progress loop. A collective's request cannot be cancelled: dropped unfinished, it is freed
// and MPI finishes it in the background. Point-to-point receives dropped unfinished are
// cancelled first, so nothing lands in a buffer that is gone.
class request {
 public:
  request() = default;
  explicit request(MPI_Request r) : reqs_{r} {}
  // `reqs`: the receives first (`receives` of them), then the sends
  request(std::vector<MPI_Request> reqs, std::size_t receives) : reqs_(std::move(reqs)), receives_(receives) {}
  request(request&& o) noexcept;
  request& operator=(request&& o) noexcept;
  request(const request&) = delete;
  request& operator=(const request&) = delete;
  ~request();
  bool test();

 private:
  void drop() noexcept;
  std::vector<MPI_Request> reqs_;
  std::size_t receives_ = 0;
};

// Where a rank sits among the ranks of its node (MPI_Comm_split_type SHARED).
struct node_info {
  int local_rank = 0;
  int local_size = 1;
  int node = 0;  // index of the node, 0..nodes-1, in order of their lowest rank
  int nodes = 1;
};

class world {
 public:
  world();  // MPI_COMM_WORLD
  int rank() const { return rank_; }
  int size() const { return size_; }

  node_info node() const;  // collective
  void barrier() const;
  request ibarrier() const;
  bool all_true(bool mine) const;  // logical AND over ranks
  // The same, completing in the background: `out` (1 or 0) is valid once the request is done;
  // `in` and `out` must live until then.
  request iall_true(const int& in, int& out) const;
  double max(double mine) const;

  // Every rank's string, in rank order (on every rank).
  std::vector<std::string> allgather_strings(const std::string& mine) const;
  // Rank 0's string on every rank.
  std::string bcast_string(const std::string& from_root) const;

  template <class T>
  std::vector<T> allgather(const T& mine) const {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> all(static_cast<std::size_t>(size_));
    MPI_Request r = MPI_REQUEST_NULL;
    check(MPI_Iallgather(&mine, sizeof(T), MPI_BYTE, all.data(), sizeof(T), MPI_BYTE, comm_, &r), "MPI_Iallgather");
    wait(r, "MPI_Iallgather");
    return all;
  }

  // Rank r's `mine` (same length everywhere) concatenated on root, empty elsewhere.
  template <class T>
  std::vector<T> gather(std::span<const T> mine, int root = 0) const {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> all(rank_ == root ? mine.size() * static_cast<std::size_t>(size_) : 0);
    MPI_Request r = MPI_REQUEST_NULL;
    check(MPI_Igather(mine.data(), bytes(mine.size() * sizeof(T)), MPI_BYTE, all.data(), bytes(mine.size() * sizeof(T)),
                      MPI_BYTE, root, comm_, &r),
          "MPI_Igather");
    wait(r, "MPI_Igather");
    return all;
  }

  // Elementwise sum of every rank's `mine` on root (empty elsewhere).
  std::vector<std::uint64_t> reduce_sum(std::span<const std::uint64_t> mine, int root = 0) const;
  // Non-blocking twins, for a wait that listens for dead peers meanwhile: rank 0's `buf` into
  // every rank's (the same length everywhere), and the sum of `mine` into rank 0's `out`. The
  // buffers must live, untouched, until the request completes.
  request ibcast(std::span<std::byte> buf) const;
  request ireduce_sum(std::span<const std::uint64_t> mine, std::span<std::uint64_t> out) const;

  // send holds `per_rank` elements for each destination rank, in rank order; the result holds
  // `per_rank` elements from each source rank.
  template <class T>
  std::vector<T> alltoall(std::span<const T> send, std::size_t per_rank) const {
    static_assert(std::is_trivially_copyable_v<T>);
    check_alltoall_shape(send.size(), per_rank);
    std::vector<T> recv(send.size());
    MPI_Request r = MPI_REQUEST_NULL;
    check(MPI_Ialltoall(send.data(), bytes(per_rank * sizeof(T)), MPI_BYTE, recv.data(), bytes(per_rank * sizeof(T)),
                        MPI_BYTE, comm_, &r),
          "MPI_Ialltoall");
    wait(r, "MPI_Ialltoall");
    return recv;
  }

  // Non-blocking twin of alltoall: `recv` must stay alive and untouched until the request completes.
  template <class T>
  request ialltoall(std::span<const T> send, std::span<T> recv, std::size_t per_rank) const {
    static_assert(std::is_trivially_copyable_v<T>);
    check_alltoall_shape(send.size(), per_rank);
    if (recv.size() != send.size()) throw mpi_error("ialltoall: receive span has the wrong length");
    MPI_Request r = MPI_REQUEST_NULL;
    check(MPI_Ialltoall(send.data(), bytes(per_rank * sizeof(T)), MPI_BYTE, recv.data(), bytes(per_rank * sizeof(T)),
                        MPI_BYTE, comm_, &r),
          "MPI_Ialltoall");
    return request(r);
  }

  // Point-to-point with a few partners only (--connect round): `send[i * per_partner ...]` goes
  // to partners[i] and what partners[i] sent lands in the same place of `received` once `done`
  // tests true. Every partner must list this rank too; O(partners) records, never O(N). `send`
  // must outlive the exchange.
  template <class T>
  struct exchange {
    std::vector<T> received;
    request done;  // declared last: dropped first, before the buffer it may still fill
  };
  template <class T>
  exchange<T> iexchange_with(std::span<const std::uint32_t> partners, std::span<const T> send,
                             std::size_t per_partner) const {
    static_assert(std::is_trivially_copyable_v<T>);
    if (send.size() != partners.size() * per_partner) throw mpi_error("iexchange_with: send has the wrong length");
    exchange<T> x{std::vector<T>(send.size()), {}};
    x.done = iexchange_bytes(partners, reinterpret_cast<const std::byte*>(send.data()),
                             reinterpret_cast<std::byte*>(x.received.data()), per_partner * sizeof(T));
    return x;
  }

  // Ends the whole job now; for use only after results are on disk.
  [[noreturn]] void abort(int code) const;

 private:
  static int bytes(std::size_t n);
  // Waits for a collective this rank posted, yielding its core between tests: where ranks
  // outnumber cores (an oversubscribed node, an emulated cluster), a rank that spins in MPI's
  // progress keeps off the CPU the very peer it waits for; alone on its core, a yield returns
  // at once. Every blocking collective goes through it.
  static void wait(MPI_Request& r, const char* call);
  request iexchange_bytes(std::span<const std::uint32_t> partners, const std::byte* send, std::byte* recv,
                          std::size_t per_partner) const;
  void check_alltoall_shape(std::size_t n, std::size_t per_rank) const;

  MPI_Comm comm_ = MPI_COMM_WORLD;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace rdmamesh::mpi
