// What must hold of the core's state after every command, checked by the core itself (see
// CoreOptions::check_invariants) and by `allot sim chaos` after every step. A check reads the
// state only; it never repairs it.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/kernel/row.h"
#include "core/kernel/state.h"

namespace allot::kernel {

// One broken invariant: its stable name (e.g. "gpu_milli") and what was found.
struct Violation {
  std::string invariant;
  std::string detail;

  bool operator==(const Violation&) const = default;
};

// Every invariant of the whole state:
//   ledger_sums      the ledger's posted and pending sums are zero;
//   holds            each instance's hold is a pending transfer of its amount, and each tenant's
//                    pending debits are the holds of its instances;
//   prepaid_balance  no prepaid account has less than nothing, its holds counted;
//   gpu_milli        each GPU's allocated milli is within 0..1000 and is the work placed on it;
//   gpu_exclusive    no GPU is held by two whole-GPU instances;
//   node_resources   each node's used CPU and memory are its instances' and within its own;
//   queue_index      the queue holds exactly the queued instances;
//   tenant_index     the active and unsettled counts per tenant are what the instances say.
std::vector<Violation> check_state(const State& state);

// What one command wrote, against the last event number before it: the events it numbered follow
// that number one by one (events).
std::vector<Violation> check_command(int64_t last_event_seq, std::span<const Row> rows);

// Commands reach the core in time order (time): a driver's check, since the core takes the time it
// is given (tests set it freely). The daemon's sequencer never goes back (api/service.cc).
std::vector<Violation> check_time(TimeMs previous_ms, TimeMs now_ms);

// "gpu_milli: node nod_... GPU 0 holds 1200" lines, one per violation.
std::string describe(std::span<const Violation> violations);

}  // namespace allot::kernel
