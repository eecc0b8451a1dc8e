// A port's counters as the kernel keeps them (sysfs: the IB-standard `counters` and the driver's
// `hw_counters`), read by one rank per port before and after each run: what went wrong on the
// wire (symbol and receive errors, link downs), in the transport (retransmits, sequence errors,
// retries that ran out) or in the fabric (congestion notifications) while the run measured.
// Names differ between drivers (mlx5, rxe, ...): every readable counter is kept, and only the
// names known here are sorted into kinds; an unreadable or unknown one is never an error.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rdmamesh::fabric {

// name -> value, sorted by name
using counter_set = std::vector<std::pair<std::string, std::uint64_t>>;

// `device_dir`: /sys/class/infiniband/DEV. Empty when the port has no counters to read.
counter_set read_port_counters(const std::filesystem::path& device_dir, int port);

// How long the kernel serves the port's hw_counters from a cache after a read
// (hw_counters/lifespan, in ms; 0 where the port has none): a read sooner returns the last one's
// values, so a run shorter than this would read its own start again.
std::chrono::milliseconds counters_lifespan(const std::filesystem::path& device_dir, int port);

// after - before for names in both (a counter that went backwards was reset: 0)
counter_set counter_delta(const counter_set& before, const counter_set& after);

enum class counter_kind : std::uint8_t {
  link,        // the physical link: symbol, receive and integrity errors, link downs, discards
  transport,   // RC transport: retransmits, sequence errors, timeouts, retries that ran out
  congestion,  // ECN marks and congestion notifications
  receiver,    // receiver not ready (RNR NAKs, no receive posted): the receiving host's pace
  other,       // traffic and everything not known here
};
counter_kind kind_of(std::string_view name);
// A receiver-kind counter this port counts when it refuses an arriving message for want of a
// posted receive (it sends an RNR NAK): its own host fell behind, not its peer's.
bool refused_for_want_of_receive(std::string_view name);
const char* to_string(counter_kind k);

// "rcvd_seq_err +3, completer_retry_err +14": the counters of a delta that moved, of the kinds
// that say something went wrong (link, transport, congestion, receiver), most first. Empty when none.
std::string moved_line(const counter_set& delta);

// One port's counters over one run, as the rank that read them sends them to rank 0.
struct port_reading {
  std::int32_t rank = -1;  // the rank that read it (the lowest on that port)
  std::string device;
  std::int32_t port = 0;
  counter_set delta;

  std::string to_text() const;
  static std::optional<port_reading> from_text(std::int32_t rank, const std::string& text);
};

}  // namespace rdmamesh::fabric
