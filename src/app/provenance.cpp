// Versions are read from the libraries this process loaded, not the headers it was built with:
// a file must say what ran.
#include "rdmamesh/app/provenance.hpp"

#include <sys/utsname.h>

#include <cstdint>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "rdmamesh/fabric/topology.hpp"
#include "rdmamesh/mpi/world.hpp"
#include "rdmamesh/verbs/device.hpp"

namespace rdmamesh::app {

std::vector<std::pair<std::string, std::string>> provenance() {
  std::vector<std::pair<std::string, std::string>> out{
      {"mpi_version", mpi::library_version()},
      {"libibverbs", verbs::library_version()},
      {"hwloc_version", fabric::hwloc_version()},
  };
  utsname u{};
  if (uname(&u) == 0)
    out.emplace_back("kernel", fmt::format("{} {} {} {}", u.sysname, u.release, u.version, u.machine));
  for (const char* name : {"SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_NNODES", "SLURM_NTASKS_PER_NODE",
                           "SLURM_TASKS_PER_NODE", "SLURM_CLUSTER_NAME", "SLURM_JOB_PARTITION"}) {
    if (const char* v = std::getenv(name)) out.emplace_back(name, v);
  }
  return out;
}

std::string new_job_id() {
  std::random_device rd;  // the kernel's entropy: two jobs started the same second differ
  const std::uint64_t id = (std::uint64_t{rd()} << 32) | rd();
  return fmt::format("{:016x}", id);
}

}  // namespace rdmamesh::app
