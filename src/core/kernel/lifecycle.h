// An instance's and a node's lifecycle, as every domain changes it: a transition with its event,
// the end of an instance (giving back what it held, and ending its gang), a stop request, a node
// leaving the fleet. The cluster places work; money, budgets, idle stops and pools end it through
// these.
#pragma once

#include <string>
#include <vector>

#include "core/kernel/draft.h"

namespace allot {

// Moves an instance to `to`, recording the event; final states set ended_at_ms to `at_ms`.
void transition(Instance& instance, InstanceState to, TimeMs at_ms, std::string message);
// Ends a bound or queued instance in a final state and gives back what it held.
void end_instance(Draft& draft, const std::string& id, InstanceState to, TimeMs at_ms,
                  std::string message);
// Asks an instance to stop: one that has not started ends now (stopped, with `message`); a running
// one is told to stop and ends when its agent reports it gone.
void stop_member(Draft& draft, const std::string& id, TimeMs at_ms, const std::string& message);
// All members of a gang, in rank order, as the draft sees them.
std::vector<std::string> gang_members(const Draft& draft, const std::string& gang_id);
// Takes a node out of the fleet for good at now_ms (its machine is gone): work still on it is
// lost, its credential stops working. Shared by DeleteNode and a pool's deletion.
void remove_node(Draft& draft, const std::string& node_id, TimeMs now_ms);

}  // namespace allot
