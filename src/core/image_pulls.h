// The operator's pre-pulls: asking the nodes of a pool to pull an image, and recording what each
// node's agent says of it (core/image.h).
#pragma once

#include <string>
#include <vector>

#include "core/command.h"
#include "core/draft.h"
#include "core/row.h"
#include "core/state.h"

namespace allot {

// kInvalidArgument for a malformed image reference or pool name; kFailedPrecondition when no ready
// container node matches (nothing would pull it); kLimitExceeded past limits::kMaxOpenImagePulls
// unfinished pulls.
[[nodiscard]] Result<std::vector<Row>> request_image_pull(const State& state,
                                                          const RequestImagePull& c, TimeMs now_ms);

// Records an agent's reports of its pulls. A report for a pull the node was not asked for, or one
// already finished, changes nothing.
void record_pull_reports(Draft& draft, const std::string& node_id,
                         const std::vector<PullReport>& reports, TimeMs now_ms);

// The pulls `node_id` has yet to finish, oldest first: what its agent is handed.
std::vector<const ImagePull*> pulls_for_node(const State& state, const std::string& node_id);

}  // namespace allot
