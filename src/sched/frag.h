// Fragmentation as the FGD paper (Weng et al., USENIX ATC '23) defines it, and the placement that
// increases it least. Pure functions of a node's facts and the typical shapes.
#pragma once

#include <vector>

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
  // Allot's additions, each a fragment amount in GPU milli subtracted from the fall before it is
  // scored; both zero is FGD.
  //
  // GPU milli that the node's free CPU can no longer feed (cpu_stranded) counts as fragment with
  // this weight. FGD sees CPU only through whole typical shapes, so it notices a node's CPU running
  // out only when the last shape stops fitting; this charges every CPU milli that brings it closer.
  double cpu_strand_weight = 0;
  // The weight instead when the cluster is CPU-bound (cpu_bound): GPUs are then left unfed
  // whatever the placement, and a full charge for it only moves work about; FGD's own check that
  // typical shapes still fit the node's CPU is what separates good nodes from bad ones there.
  double cpu_bound_strand_weight = 0;
  // GPU milli taken from a model counts as fragment times the model's pressure (model_pressure)
  // and this weight: work that could run anywhere is kept off the models that constrained work
  // needs, and constrained work goes to the least pressed of the models it accepts.
  double model_pressure_weight = 0;
};

// GPU milli on a node that its free CPU cannot feed at the shapes' CPU per GPU milli:
// max(0, free GPU milli - free CPU milli / cpu_per_milli). 0 when the shapes need no GPU.
double cpu_stranded(const ShapeTable& shapes, const NodeFacts& facts);

// Whether the typical work asks for more CPU per GPU milli (CPU-only shapes included) than the
// nodes in `facts` have per healthy GPU milli (the CPU of nodes without GPUs counted too, since
// CPU-only work can go there): then CPU runs out before the GPUs do.
bool cpu_bound(const ShapeTable& shapes, const std::vector<NodeFacts>& facts);

// Per model id, the load that shapes naming models put on the model, relative to the average load:
// a constrained shape's demand (frequency x GPU milli) is spread over the capacity of the models it
// accepts, and the sum on a model is divided by the demand of all GPU shapes over all capacity. 1
// means constrained work alone would load the model as much as all work loads the cluster. The
// capacity is each node's healthy GPUs in `facts`; models no shape names have pressure 0.
std::vector<double> model_pressure(const ShapeTable& shapes, const std::vector<NodeFacts>& facts,
                                   size_t model_count);

// Where on this node the request increases fragmentation least, with `before` the node's current
// fragmentation. Returns the score (the fall less Allot's charges, as paper_score when asked) and
// sets `pick`.
// Candidates are tried in GPU order and only a strictly better one replaces the best, so ties go
// to the lowest GPU.
double frag_place(const ShapeTable& shapes, const CompiledRequest& request, const NodeFacts& facts,
                  double before, const FragOptions& options, Pick& pick);

// The node's facts after placing `need` on `pick`.
NodeFacts after_pick(const NodeFacts& facts, const Need& need, Pick pick);

}  // namespace allot::sched::internal
