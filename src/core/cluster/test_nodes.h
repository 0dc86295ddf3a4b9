// Nodes for the core's tests: a join of GPUs of one model (8 unless said), as an agent would send
// it. Defined in test_nodes.cc, not here: lists of commands copied in a file that includes this
// one would make the compiler write the command variant's copy and move for every command, there.
#pragma once

#include <string>
#include <vector>

#include "core/kernel/command.h"
#include "core/kernel/gpu_models.h"

namespace allot {

JoinNode gpu_join(const std::string& id, const std::string& name, const std::string& region,
                  const std::string& model, const std::string& token_hash, int gpus);

JoinNode eight_gpu_join(const std::string& id, const std::string& name, const std::string& region,
                        const std::string& model, const std::string& token_hash);

// A tenant ("acme") with one project ("p"), and a join token for its nodes.
std::vector<Command> one_tenant(const std::string& tenant, const std::string& project,
                                const std::string& token_hash);

// What most of the core's tests start from: a tenant with one project ("p"), a join token, and one
// node of eight H100s in region eu (named "a") that has reported once.
std::vector<Command> one_node_cloud(const std::string& tenant, const std::string& project,
                                    const std::string& node, const std::string& token_hash);

// Work is placed only where a price covers it. Tests of placement alone price every catalog model
// of `region` at 0 (an explicit free price) in every class, from `at_ms` on.
std::vector<Command> free_prices(const std::string& region, TimeMs at_ms);

}  // namespace allot
