#include "core/cluster/image_pulls.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/enum_names.h"
#include "common/image_ref.h"
#include "common/limits.h"
#include "core/kernel/validate.h"

namespace allot {

namespace {

constexpr EnumNames<PullState, 4> kPullStateNames{{"pending", "pulling", "done", "failed"}};

}  // namespace

std::string_view pull_state_name(PullState state) { return kPullStateNames.name(state, "unknown"); }

std::optional<PullState> parse_pull_state(std::string_view name) {
  return kPullStateNames.parse(name);
}

bool is_final(PullState state) { return state == PullState::kDone || state == PullState::kFailed; }

bool ImagePull::finished() const {
  return std::ranges::all_of(targets, [](const PullTarget& t) { return is_final(t.state); });
}

Result<Rows> apply(const State& state, const RequestImagePull& c, TimeMs now_ms,
                   const Placing& /*placing*/) {
  if (auto ok = check_id("pull id", c.id, "ipl"); !ok) return std::unexpected(ok.error());
  if (state.image_pull(c.id) != nullptr) {
    return fail(ErrorCode::kAlreadyExists, "pull " + c.id + " exists");
  }
  auto ref = parse_image_ref(c.image);
  if (!ref) return std::unexpected(ref.error());
  if (ref->registry == "localhost") {
    return fail(ErrorCode::kInvalidArgument,
                "localhost/ images are each node's own and cannot be pulled: name a registry");
  }
  if (!c.pool.empty()) {
    if (auto ok = check_name("pool", c.pool); !ok) return std::unexpected(ok.error());
  }
  // A node that was lost or deleted mid-pull leaves its part unfinished: it does not count.
  const auto open = std::ranges::count_if(state.open_image_pulls, [&](const std::string& id) {
    return std::ranges::any_of(state.image_pulls.at(id).targets, [&](const PullTarget& t) {
      const Node* node = state.node(t.node_id);
      return !is_final(t.state) && node != nullptr && !node->lost;
    });
  });
  if (static_cast<size_t>(open) >= limits::kMaxOpenImagePulls) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("{} pulls are still under way; wait for some to finish", open));
  }
  ImagePull pull{.id = c.id,
                 .image = ref->full(),
                 .pool = c.pool,
                 .tenant_id = c.tenant_id,
                 .created_at_ms = now_ms};
  Draft draft(state);
  for (const auto& [id, node] : state.nodes) {
    if (node.runtime != "container" || node.state() == NodeState::kDeleted ||
        node.state() == NodeState::kLost || node.state() == NodeState::kRegistering) {
      continue;
    }
    const auto label = node.labels.find("pool");
    if (!c.pool.empty() && (label == node.labels.end() || label->second != c.pool)) continue;
    pull.targets.push_back(PullTarget{.node_id = id});
    ++draft.edit_node(id).generation;  // Its agent hears of it at once.
  }
  if (pull.targets.empty()) {
    return fail(ErrorCode::kConflict,
                c.pool.empty() ? std::string("no container node is in service to pull onto")
                               : fmt::format("no container node in service has the label "
                                             "pool={}: nothing would pull the image",
                                             c.pool));
  }
  draft.add_row(std::move(pull));
  return draft.rows();
}

void record_pull_reports(Draft& draft, const std::string& node_id,
                         const std::vector<PullReport>& reports, TimeMs now_ms) {
  const State& state = draft.base();
  std::map<std::string, ImagePull> changed;
  for (const PullReport& report : reports) {
    const ImagePull* known = state.image_pull(report.pull_id);
    if (known == nullptr) continue;
    ImagePull& pull = changed.try_emplace(known->id, *known).first->second;
    for (PullTarget& target : pull.targets) {
      if (target.node_id != node_id || is_final(target.state) || target.state == report.state) {
        continue;
      }
      target.state = report.state;
      target.message = report.message.substr(0, 500);
      if (is_final(report.state)) target.ended_at_ms = now_ms;
    }
  }
  for (auto& [id, pull] : changed) {
    if (pull != *state.image_pull(id)) draft.add_row(std::move(pull));
  }
}

std::vector<const ImagePull*> pulls_for_node(const State& state, const std::string& node_id) {
  std::vector<const ImagePull*> out;
  for (const std::string& id : state.open_image_pulls) {
    const ImagePull& pull = state.image_pulls.at(id);
    const bool open = std::ranges::any_of(pull.targets, [&](const PullTarget& t) {
      return t.node_id == node_id && !is_final(t.state);
    });
    if (open) out.push_back(&pull);
  }
  std::ranges::sort(out, {}, &ImagePull::created_at_ms);
  return out;
}

void put(State& state, const ImagePull& pull) {
  if (pull.finished()) {
    state.open_image_pulls.erase(pull.id);
  } else {
    state.open_image_pulls.insert(pull.id);
  }
  state.image_pulls[pull.id] = pull;
}

}  // namespace allot
