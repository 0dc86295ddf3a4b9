// The operator's pre-pulls: asking the nodes of a pool to pull an image, and recording what each
// node's agent says of it (core/model/image.h).
#pragma once

#include <string>
#include <vector>

#include "core/kernel/command.h"
#include "core/kernel/draft.h"
#include "core/kernel/handler.h"
#include "core/kernel/row.h"
#include "core/kernel/state.h"

namespace allot {

// - RequestImagePull: adds the pull for each container node heard from and not lost or deleted (in
//   `pool`, if named). Refuses invalid_id, already_exists, invalid_argument (bad or localhost/
//   image, bad pool name), conflict (no node to pull onto), limit_exceeded
//   (limits::kMaxOpenImagePulls unfinished pulls).
ALLOT_HANDLERS(RequestImagePull);

// Records an agent's reports of its pulls. A report for a pull the node was not asked for, or one
// already finished, changes nothing.
void record_pull_reports(Draft& draft, const std::string& node_id,
                         const std::vector<PullReport>& reports, TimeMs now_ms);

// The pulls `node_id` has yet to finish, oldest first: what its agent is handed.
std::vector<const ImagePull*> pulls_for_node(const State& state, const std::string& node_id);

void put(State& state, const ImagePull& pull);

}  // namespace allot
