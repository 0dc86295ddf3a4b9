// The one Policy implementation: filters in order, then a weighted sum of scores; the first score
// plugin picks the GPUs. The Placer calls its compiled forms directly.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sched/plugins.h"

namespace allot::sched::internal {

class PluginPolicy final : public Policy {
 public:
  PluginPolicy(std::string name, std::vector<std::unique_ptr<Filter>> filters,
               std::vector<std::pair<std::unique_ptr<Score>, double>> scores);
  std::string_view name() const override { return name_; }
  std::optional<Choice> place(const CycleState& cycle, const Request& request,
                              const std::vector<NodeView>& nodes, std::string& why) const override;

  bool passes(const CompiledRequest& request, const NodeView& node, const NodeFacts& facts) const;
  double evaluate(Env& env, const CompiledRequest& request, size_t index, const NodeFacts& facts,
                  Pick& pick) const;
  // Why no node fits: for each filter that turned nodes away, how many and one node's reason,
  // most common first.
  std::string explain(const CompiledRequest& request, const std::vector<NodeView>& nodes,
                      const std::vector<NodeFacts>& facts) const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<Filter>> filters_;
  std::vector<std::pair<std::unique_ptr<Score>, double>> scores_;
};

}  // namespace allot::sched::internal
