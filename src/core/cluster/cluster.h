// The cluster commands' logic, used by Core::apply. Each function reads the state, works on a
// Draft, and returns the changed objects or a rejection (changing nothing).
#pragma once

#include <map>
#include <tuple>
#include <vector>

#include "common/error.h"
#include "common/limits.h"
#include "core/kernel/handler.h"
#include "core/kernel/lifecycle.h"

namespace allot {

// The part of an instance's spec that says what it asks for and where: GPUs or a share of one,
// known models, and the region wishes (core/admission/quote.h). Shared by instances and quotes.
[[nodiscard]] Status check_gpu_request(const InstanceSpec& spec);

[[nodiscard]] Handler<CreateJoinToken> apply;
[[nodiscard]] Handler<RevokeJoinToken> apply;
[[nodiscard]] Handler<JoinNode> apply;
[[nodiscard]] Handler<NodeHeartbeat> apply;
[[nodiscard]] Handler<SetNodeAdmin> apply;
[[nodiscard]] Handler<RevokeNodeCredential> apply;
// Refused with kConflict while work is placed on the node.
[[nodiscard]] Handler<DeleteNode> apply;
[[nodiscard]] Handler<CreateInstance> apply;
[[nodiscard]] Handler<StopInstance> apply;
// The timer's cluster phases (core/tick.cc): nodes silent past the heartbeat timeout are lost
// with their work; running work past its maximum run time is asked to stop.
void lose_silent_nodes(Draft& draft, TimeMs now_ms, const CoreOptions& options);
void stop_overrun_work(Draft& draft, TimeMs now_ms);

// Shared by the functions above (instances.cc).

// Binds an instance to its placement: the node's GPUs, CPU and memory are taken; it is scheduled.
void bind(Draft& draft, Instance& instance, const Placement& placement, TimeMs now_ms);
// Tries to place queued instances: on-demand and reserved before spot, then the tenant with the
// smallest dominant share, then the oldest; bounded backfill past a blocked head; on-demand work
// that fits nowhere may preempt spot work; quotas and reservations admit first (see queue.cc).
void schedule_queue(Draft& draft, TimeMs now_ms, const Placing& placing);

enum class Outcome { kPlaced, kNoRoom, kNotAdmitted };

// The request shapes that found no room in one scheduling pass, with the reason.
struct FailedShapes {
  using Key = std::tuple<int, int, std::vector<std::string>, int64_t, int64_t, std::string,
                         PriceClass, int64_t, std::vector<std::string>, Prefer, std::string, bool>;
  // `process_nodes`: whether the request's tenant may use process-runtime nodes.
  static Key key_of(const InstanceSpec& s, bool process_nodes) {
    return {s.gpus,       s.gpu_milli, s.gpu_models,  s.cpu_milli,
            s.memory_mib, s.region,    s.price_class, s.max_price_micros,
            s.regions,    s.prefer,    s.from,        process_nodes};
  }
  std::map<Key, std::string> why;
};

// Places one queued instance (or, given rank 0, its whole gang) if the rules admit it and it
// fits, preempting spot work for on-demand and reserved work where that is the only way; else
// records why it waits.
Outcome try_place(Draft& draft, const std::string& id, TimeMs now_ms, const Placing& placing,
                  FailedShapes* failed = nullptr);
// Places every member of a gang on its own node, all at once or none (gang.cc).
Outcome place_gang(Draft& draft, const std::vector<std::string>& members, TimeMs now_ms,
                   const Placing& placing);

// Keep a row of the cluster domain in the state, with its indexes.
void put(State& state, const JoinToken& token);
void put(State& state, const Node& node);
void put(State& state, const Instance& instance);

}  // namespace allot
