// The filter and score plugins. Each implements the public plugin interface (on a NodeView) and a
// compiled form (on NodeFacts) that the policies and the Placer call in their loops; the public
// form compiles the node and calls the compiled one, so both give the same answer.
#pragma once

#include <memory>
#include <string>

#include "sched/frag.h"
#include "sched/internal.h"

namespace allot::sched::internal {

class Filter : public FilterPlugin {
 public:
  bool filter(const CycleState& cycle, const Request& request, const NodeView& node,
              std::string& why) const final;
  // `why` may be null when the caller needs no reason (the hot loop), so no string is built.
  virtual bool check(const CompiledRequest& request, const NodeView& node, const NodeFacts& facts,
                     std::string* why) const = 0;
};

class Score : public ScorePlugin {
 public:
  double score(const CycleState& cycle, const Request& request, const NodeView& node,
               std::vector<int>& gpus) const final;
  // Scores node number `index` and sets `pick`. `env.frag_cache`, when set, holds the nodes'
  // current fragmentation (NaN where not yet computed) and is filled in here.
  virtual double eval(Env& env, const CompiledRequest& request, size_t index,
                      const NodeFacts& facts, Pick& pick) const = 0;
};

std::unique_ptr<Filter> region_filter();
std::unique_ptr<Filter> health_filter();
std::unique_ptr<Filter> model_filter();
std::unique_ptr<Filter> resources_filter();

std::unique_ptr<Score> first_fit_score();
std::unique_ptr<Score> best_fit_score();
std::unique_ptr<Score> spread_score();
std::unique_ptr<Score> packing_score();
std::unique_ptr<Score> dot_product_score();
std::unique_ptr<Score> frag_score(std::string name, FragOptions options);
std::unique_ptr<Score> carbon_score();
std::unique_ptr<Score> prefer_score();

// The carbon intensity (g/kWh of IT energy) that the carbon score uses for a node in `region`:
// the cycle's figure for the region, or the worst the cycle knows when it has none, or 0 when it
// knows none at all.
double region_carbon(const CycleState& cycle, const std::string& region);

// Builds an Env for `nodes` (models interned, shapes compiled) and their facts.
Env make_env(const CycleState& cycle, const std::vector<NodeView>& nodes,
             std::vector<NodeFacts>& facts);

}  // namespace allot::sched::internal
