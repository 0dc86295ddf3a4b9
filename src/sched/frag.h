// Fragmentation as the FGD paper (Weng et al., USENIX ATC '23) defines it, and the placement that
// increases it least. Pure functions of a node's facts and the typical shapes.
#pragma once

#include "sched/internal.h"

namespace allot::sched::internal {

// The free GPU milli on a node that a typical shape could not use, weighted by the shapes'
// frequencies: for a shape that cannot fit at all (CPU, memory, model, GPU count), or that needs no
// GPU, all free milli; otherwise the free milli of GPUs below the shape's threshold (its share, or
// 1000 for whole GPUs) plus that of GPUs whose model the shape does not accept.
double node_frag(const ShapeTable& shapes, const NodeFacts& facts);

// The same for one shape, for tests and explanations.
double shape_frag(const ShapeTable& shapes, size_t shape, const NodeFacts& facts);

// FGD's score as the paper's simulator computes it from the fall in fragmentation (before minus
// after, in GPU milli): 100 x sigmoid(fall / 1000), truncated to a whole number from 0 to 100.
// One step is about 40 milli near no change and grows with the change; every increase past about
// 4.6 GPUs scores 0. Equal scores tie, and the tie goes to the earlier node.
double paper_score(double fall_milli);

struct FragOptions {
  // The paper's whole-number score (paper_score) for the node and for the GPU within it, instead
  // of the exact fall. It is what made the published numbers: ties between near-equal nodes go to
  // the earlier node, which packs work into fewer nodes than the exact fall does.
  bool paper_score = false;
  // Allot's additions; all zero is FGD exactly.
  double pack_weight = 0;   // Prefers already used GPUs/nodes when deltas (nearly) tie.
  double cpu_weight = 0;    // Charges placements that leave CPU or memory too short for GPUs.
  double model_weight = 0;  // Keeps unconstrained work off models that constrained shapes need.
};

// Where on this node the request increases fragmentation least, with `before` the node's current
// fragmentation. Returns the score (minus the increase, plus Allot's terms) and sets `pick`.
// Candidates are tried in GPU order and only a strictly better one replaces the best, so ties go
// to the lowest GPU.
double frag_place(const ShapeTable& shapes, const CompiledRequest& request, const NodeFacts& facts,
                  double before, const FragOptions& options, Pick& pick);

// The node's facts after placing `need` on `pick`.
NodeFacts after_pick(const NodeFacts& facts, const Need& need, Pick pick);

}  // namespace allot::sched::internal
