#include <gtest/gtest.h>

#include <utility>

#include "sched/frag.h"
#include "sched/test_util.h"

// Inside the helpers' namespace (sched/test_util.h), so that they need no using-declarations.
namespace allot::sched::testing {
namespace {

// The worked example, by hand. One node, 4 GPUs free [1000, 1000, 600, 200] = 2800 milli, 32000
// CPU milli free. Typical shapes: A = 500 milli share, 4000 CPU (weight 0.5); B = one whole GPU,
// 8000 CPU (0.3); C = two whole GPUs, 40000 CPU (0.2).
//   A fits (a GPU has >= 500 free); GPUs below 500 free: 200           -> 200
//   B fits (two whole GPUs free); partly used GPUs: 600 + 200          -> 800
//   C needs 40000 CPU, 32000 free: all free milli is fragment          -> 2800
//   node: 0.5 x 200 + 0.3 x 800 + 0.2 x 2800 = 100 + 240 + 560         =  900
// Placing a 500 milli share (1000 CPU):
//   on GPU 0 (or 1): [500, 1000, 600, 200]  A 200, B 1300, C 2300 -> 100 + 390 + 460 = 950 (+50)
//   on GPU 2:        [1000, 1000, 100, 200] A 300, B 300,  C 2300 -> 150 +  90 + 460 = 700 (-200)
// so FGD puts it on GPU 2 and the node's fragmentation falls by 200.
struct Worked : ::testing::Test {
  CycleState cycle = worked_cycle();
  internal::ModelTable models;
  internal::NodeFacts facts =
      internal::facts_of(make_node("n", {1000, 1000, 600, 200}, "A100-80GB", 32000), models);
  internal::ShapeTable shapes = internal::compile_shapes(cycle, models);
};

TEST_F(Worked, EachShapeCountsTheFreeMilliItCannotUse) {
  EXPECT_DOUBLE_EQ(internal::shape_frag(shapes, 0, facts), 200);
  EXPECT_DOUBLE_EQ(internal::shape_frag(shapes, 1, facts), 800);
  EXPECT_DOUBLE_EQ(internal::shape_frag(shapes, 2, facts), 2800);
}

TEST_F(Worked, NodeFragmentationIsTheFrequencyWeightedSum) {
  EXPECT_DOUBLE_EQ(internal::node_frag(shapes, facts), 900);
}

TEST_F(Worked, ShareGoesWhereFragmentationFallsMost) {
  const Request request = share(500);
  const internal::CompiledRequest compiled = internal::compile(request, models);
  internal::Pick pick = 0;
  const double score = internal::frag_place(shapes, compiled, facts, 900, {}, pick);
  EXPECT_EQ(pick, internal::Pick{1} << 2);
  EXPECT_DOUBLE_EQ(score, 200);  // Minus the increase: fragmentation went from 900 to 700.
  const internal::NodeFacts on_gpu0 = internal::after_pick(facts, compiled.need, 1);
  EXPECT_DOUBLE_EQ(internal::node_frag(shapes, on_gpu0), 950);
}

TEST_F(Worked, MixedModelNodeCountsRefusedModelsAsFragment) {
  CycleState cycle2;
  Request h100_only = share(500);
  h100_only.models = {"H100"};
  cycle2.typical.emplace_back(h100_only, 1.0);
  NodeView node = make_node("m", {1000, 300}, "H100-80GB");
  node.gpus[1].model = "A100-80GB";
  internal::ModelTable models2;
  const internal::NodeFacts mixed = internal::facts_of(node, models2);
  const internal::ShapeTable shapes2 = internal::compile_shapes(cycle2, models2);
  EXPECT_EQ(mixed.common_model, -1);
  // The H100 has room; the A100's 300 free milli is useless to an H100-only shape.
  EXPECT_DOUBLE_EQ(internal::node_frag(shapes2, mixed), 300);
}

// The paper's score is 100 x sigmoid(fall / 1000), truncated: 50 for no change, one step per about
// 40 milli near there, 0 for any increase past about 4.6 GPUs.
TEST(Frag, PaperScoreIsTheTruncatedSigmoidOfTheFall) {
  EXPECT_DOUBLE_EQ(internal::paper_score(0), 50);
  EXPECT_DOUBLE_EQ(internal::paper_score(200), 54);    // 54.98
  EXPECT_DOUBLE_EQ(internal::paper_score(-50), 48);    // 48.75
  EXPECT_DOUBLE_EQ(internal::paper_score(-1000), 26);  // 26.89
  EXPECT_DOUBLE_EQ(internal::paper_score(-4500), 1);   // 1.10
  EXPECT_DOUBLE_EQ(internal::paper_score(-5000), 0);   // 0.67
  EXPECT_DOUBLE_EQ(internal::paper_score(9000), 99);   // 99.99
}

// Two shapes: a 500 milli share with 1000 CPU (weight 0.99) and a whole GPU with 30000 CPU (0.01).
// A whole GPU with 4000 CPU leaves node a (4 GPUs, 33000 CPU) with 29000 CPU, too little for the
// big shape, so its 3000 free milli become fragment to it: +30. On node b (5 GPUs, 31000 CPU) the
// same happens to 4000 milli: +40. The exact falls differ, the paper's scores do not (49 both).
TEST(Frag, PaperScoreTiesNearEqualFalls) {
  CycleState cycle;
  cycle.typical.emplace_back(share(500, 1000), 0.99);
  cycle.typical.emplace_back(whole(1, 30000), 0.01);
  internal::ModelTable models;
  const internal::NodeFacts a =
      internal::facts_of(make_node("a", {1000, 1000, 1000, 1000}, "A100-80GB", 33000), models);
  const internal::NodeFacts b = internal::facts_of(
      make_node("b", {1000, 1000, 1000, 1000, 1000}, "A100-80GB", 31000), models);
  const internal::ShapeTable shapes = internal::compile_shapes(cycle, models);
  const Request request = whole(1, 4000);
  const internal::CompiledRequest compiled = internal::compile(request, models);
  internal::Pick pick = 0;
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, a, 0, {}, pick), -30);
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, b, 0, {}, pick), -40);
  const internal::FragOptions paper{.paper_score = true};
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, a, 0, paper, pick), 49);
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, b, 0, paper, pick), 49);
  EXPECT_EQ(pick, internal::Pick{1});  // The lowest whole GPU.
}

// Allot's CPU charge. Shapes: a whole GPU with 4000 CPU (0.8) and a CPU-only 2000 (0.2, no GPU, so
// not in the ratio): 0.8 x 4000 / (0.8 x 1000) = 4 CPU milli per GPU milli. A node with 2800 GPU
// milli free and 8000 CPU can feed 2000 of them: 800 are stranded.
CycleState cpu_cycle() {
  CycleState cycle;
  cycle.typical.emplace_back(whole(1, 4000), 0.8);
  cycle.typical.emplace_back(Request{.cpu_milli = 2000}, 0.2);
  return cycle;
}

TEST(Frag, CpuStrandedIsFreeGpuMilliTheFreeCpuCannotFeed) {
  internal::ModelTable models;
  const internal::ShapeTable shapes = internal::compile_shapes(cpu_cycle(), models);
  EXPECT_DOUBLE_EQ(shapes.cpu_per_milli, 4);
  const auto stranded = [&](std::vector<int> free, int64_t cpu) {
    return internal::cpu_stranded(
        shapes, internal::facts_of(make_node("n", std::move(free), "T4", cpu), models));
  };
  EXPECT_DOUBLE_EQ(stranded({1000, 1000, 600, 200}, 8000), 800);
  EXPECT_DOUBLE_EQ(stranded({1000, 1000, 600, 200}, 64000), 0);
  EXPECT_DOUBLE_EQ(stranded({1000, 1000}, 0), 2000);
}

// cpu_cycle's work asks (0.8 x 4000 + 0.2 x 2000) / (0.8 x 1000) = 4.5 CPU milli per GPU milli.
// A node of four GPUs and 16000 CPU has 4 per GPU milli: CPU-bound. A GPU-less node of 4000 CPU
// beside it (CPU-only work can go there) makes 5: not. GPUs that are unhealthy count out.
TEST(Frag, CpuBoundWhenTheWorkAsksMoreCpuPerGpuMilliThanTheNodesHave) {
  internal::ModelTable models;
  const internal::ShapeTable shapes = internal::compile_shapes(cpu_cycle(), models);
  EXPECT_DOUBLE_EQ(shapes.demand_cpu_per_milli, 4.5);
  NodeView gpus = make_node("g", {1000, 1000, 1000, 1000}, "T4", 16000);
  gpus.cpu_milli = 16000;
  NodeView cpu_only = make_node("c", {}, "T4", 4000);
  cpu_only.cpu_milli = 4000;
  std::vector<internal::NodeFacts> facts = {internal::facts_of(gpus, models)};
  EXPECT_TRUE(internal::cpu_bound(shapes, facts));
  facts.push_back(internal::facts_of(cpu_only, models));
  EXPECT_FALSE(internal::cpu_bound(shapes, facts));
  gpus.gpus[3].healthy = false;
  cpu_only.cpu_milli = 2000;
  facts = {internal::facts_of(gpus, models), internal::facts_of(cpu_only, models)};
  EXPECT_FALSE(internal::cpu_bound(shapes, facts));  // 18000 / 3000 = 6.
  EXPECT_FALSE(internal::cpu_bound(shapes, {}));
}

// A CPU-only pod of 12000 on two nodes of four free GPUs: a has 20000 CPU, b 64000. FGD sees no
// change on either (a whole GPU with 4000 CPU still fits both) and takes the first; Allot charges
// a the 2000 milli its 8000 CPU left can no longer feed (4000 - 8000 / 4) and takes b.
TEST(Frag, CpuChargeKeepsCpuWorkOffNodesWhoseGpusNeedIt) {
  internal::ModelTable models;
  const internal::NodeFacts a =
      internal::facts_of(make_node("a", {1000, 1000, 1000, 1000}, "T4", 20000), models);
  const internal::NodeFacts b =
      internal::facts_of(make_node("b", {1000, 1000, 1000, 1000}, "T4", 64000), models);
  const internal::ShapeTable shapes = internal::compile_shapes(cpu_cycle(), models);
  const Request cpu_pod{.cpu_milli = 12000};
  const internal::CompiledRequest compiled = internal::compile(cpu_pod, models);
  const internal::FragOptions charge{.cpu_strand_weight = 1};
  internal::Pick pick = 0;
  const double before_a = internal::node_frag(shapes, a);
  const double before_b = internal::node_frag(shapes, b);
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, a, before_a, {}, pick), 0);
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, b, before_b, {}, pick), 0);
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, a, before_a, charge, pick), -2000);
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, b, before_b, charge, pick), 0);
}

// On a CPU-bound cluster the charge takes its own weight: a tenth of the 2000 above.
TEST(Frag, CpuBoundClusterChargesAtItsOwnWeight) {
  internal::ModelTable models;
  const internal::NodeFacts a =
      internal::facts_of(make_node("a", {1000, 1000, 1000, 1000}, "T4", 20000), models);
  internal::ShapeTable shapes = internal::compile_shapes(cpu_cycle(), models);
  const internal::CompiledRequest compiled = internal::compile(Request{.cpu_milli = 12000}, models);
  const internal::FragOptions charge{.cpu_strand_weight = 1, .cpu_bound_strand_weight = 0.1};
  internal::Pick pick = 0;
  const double before = internal::node_frag(shapes, a);
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, a, before, charge, pick), -2000);
  shapes.cpu_bound = true;
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, a, before, charge, pick), -200);
}

// Allot's model charge. Capacity: two T4 nodes of 2 GPUs (4000 milli) and a G2 node of 8 (8000).
// Shapes: any-model whole GPU (0.5, demand 500) and a T4-only 500 share (0.5, demand 250). Average
// load 750 / 12000; the T4-only demand on T4 is 250 / 4000, the same: pressure 1 on T4, 0 on G2.
struct Pressure : ::testing::Test {
  CycleState cycle;
  internal::ModelTable models;
  std::vector<internal::NodeFacts> facts;
  internal::ShapeTable shapes;

  Pressure() {
    cycle.typical.emplace_back(whole(1), 0.5);
    Request t4 = share(500);
    t4.models = {"T4"};
    cycle.typical.emplace_back(t4, 0.5);
    facts.push_back(internal::facts_of(make_node("t4a", {1000, 1000}, "T4"), models));
    facts.push_back(internal::facts_of(make_node("t4b", {1000, 1000}, "T4"), models));
    facts.push_back(internal::facts_of(make_node("g2", std::vector<int>(8, 1000), "G2"), models));
    shapes = internal::compile_shapes(cycle, models);
    shapes.pressure = internal::model_pressure(shapes, facts, models.size());
  }
};

TEST_F(Pressure, IsConstrainedLoadOverAverageLoad) {
  EXPECT_DOUBLE_EQ(shapes.pressure[static_cast<size_t>(models.intern("T4"))], 1.0);
  EXPECT_DOUBLE_EQ(shapes.pressure[static_cast<size_t>(models.intern("G2"))], 0.0);
}

// A whole GPU: on a T4 node FGD sees no change and Allot charges 1000 x 1; on the G2 node both see
// the T4-only shape's fragment there (all 8000 free, weight 0.5) fall by 500.
TEST_F(Pressure, ChargesGpuMilliTakenFromPressedModels) {
  const Request request = whole(1);
  const internal::CompiledRequest compiled = internal::compile(request, models);
  const internal::FragOptions charge{.model_pressure_weight = 1};
  internal::Pick pick = 0;
  const double t4_before = internal::node_frag(shapes, facts[0]);
  const double g2_before = internal::node_frag(shapes, facts[2]);
  EXPECT_DOUBLE_EQ(g2_before, 4000);
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, facts[0], t4_before, {}, pick), 0);
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, facts[0], t4_before, charge, pick),
                   -1000);
  EXPECT_DOUBLE_EQ(internal::frag_place(shapes, compiled, facts[2], g2_before, charge, pick), 500);
}

TEST(Frag, FullNodeHasNoFragmentation) {
  internal::ModelTable models;
  const CycleState cycle = worked_cycle();
  const internal::NodeFacts full = internal::facts_of(make_node("f", {0, 0}), models);
  EXPECT_DOUBLE_EQ(internal::node_frag(internal::compile_shapes(cycle, models), full), 0);
}

}  // namespace
}  // namespace allot::sched::testing
