// Termination requests: SIGTERM (Slurm's time limit, mpirun passing on a Ctrl-C) or SIGINT.
// The first asks the run to wind down (the engines end the current interval, the driver writes
// what was measured); a second ends the process at once.
#pragma once

#include <string_view>

namespace rdmamesh {

void install_stop_handlers();
bool stop_requested();       // async-signal-safe flag; cheap enough for a progress loop
int stop_signal();           // the signal that asked, 0 if none
void request_stop(int sig);  // as if `sig` arrived (tests)
// Blocks until a stop request arrives (returns its signal) or release_stop_waiter() is called
// (returns 0): a thread can act on a signal at once, while the main thread sits in MPI.
int wait_for_stop();
void release_stop_waiter();
// "SIGTERM", "SIGINT", or "a signal": how the console and the file name what asked.
std::string_view signal_name(int sig);

}  // namespace rdmamesh
