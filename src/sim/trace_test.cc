#include "sim/trace.h"

#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace allot::sim {
namespace {

constexpr std::string_view kNodes =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "n0,64000,262144,2,P100\n"
    "n1,32000,131072,0,\n";

const std::set<std::string> kModels = {"P100", "T4", "G2"};

TEST(ParseNodes, GivesEachNodeItsWholeFreeGpusAndFullCpuAndMemory) {
  Result<std::vector<sched::NodeView>> nodes = parse_nodes(kNodes, "nodes.csv");
  ASSERT_TRUE(nodes) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 2U);
  const sched::NodeView& node = nodes->front();
  EXPECT_EQ(node.id, "n0");
  EXPECT_EQ(node.cpu_milli, 64000);
  EXPECT_EQ(node.free_cpu_milli, 64000);
  EXPECT_EQ(node.memory_mib, 262144);
  EXPECT_EQ(node.free_memory_mib, 262144);
  EXPECT_TRUE(node.region.empty());
  ASSERT_EQ(node.gpus.size(), 2U);
  EXPECT_EQ(node.gpus[1].index, 1);
  EXPECT_EQ(node.gpus[1].model, "P100");
  EXPECT_EQ(node.gpus[1].free_milli, 1000);
  EXPECT_TRUE((*nodes)[1].gpus.empty());
  EXPECT_EQ(models_of(*nodes), std::set<std::string>{"P100"});
}

TEST(ParseNodes, MatchesColumnsByNameInAnyOrderAndAcceptsCrLf) {
  Result<std::vector<sched::NodeView>> nodes =
      parse_nodes("model,gpu,extra,sn,memory_mib,cpu_milli\r\nT4,1,x,a,100,200\r\n\r\n", "n.csv");
  ASSERT_TRUE(nodes) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 1U);
  EXPECT_EQ(nodes->front().id, "a");
  EXPECT_EQ(nodes->front().cpu_milli, 200);
  EXPECT_EQ(nodes->front().memory_mib, 100);
  EXPECT_EQ(nodes->front().gpus.at(0).model, "T4");
}

TEST(ParsePods, MapsTheTraceKindsOfPodOntoRequests) {
  Result<std::vector<sched::Request>> pods = parse_pods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n"
      "share,6000,12288,1,460,,LS\n"
      "one,12000,16384,1,1000,T4,LS\n"
      "eight,88000,327680,8,1000,G2|P100|G2,LS\n"
      "cpu,4000,8192,0,0,,BE\n",
      "pods.csv", kModels);
  ASSERT_TRUE(pods) << pods.error().message;
  ASSERT_EQ(pods->size(), 4U);
  EXPECT_EQ((*pods)[0].gpu_milli, 460);
  EXPECT_EQ((*pods)[0].gpus, 0);
  EXPECT_EQ((*pods)[0].cpu_milli, 6000);
  EXPECT_EQ((*pods)[0].memory_mib, 12288);
  EXPECT_TRUE((*pods)[0].models.empty());
  EXPECT_EQ((*pods)[1].gpus, 1);
  EXPECT_EQ((*pods)[1].gpu_milli, 0);
  EXPECT_EQ((*pods)[1].models, std::vector<std::string>{"T4"});
  EXPECT_EQ((*pods)[2].gpus, 8);
  EXPECT_EQ((*pods)[2].models, (std::vector<std::string>{"G2", "P100"}));
  EXPECT_EQ((*pods)[3].gpus, 0);
  EXPECT_EQ((*pods)[3].gpu_milli, 0);
  EXPECT_EQ(gpu_milli_of((*pods)[0]), 460);
  EXPECT_EQ(gpu_milli_of((*pods)[2]), 8000);
  EXPECT_EQ(gpu_milli_of((*pods)[3]), 0);
}

TEST(ParsePods, TakesAListWithoutGpuSpecAsTheMultigpuTraceIs) {
  Result<std::vector<sched::Request>> pods =
      parse_pods("gpu_milli,num_gpu,memory_mib,cpu_milli,name\n500,1,10,20,p\n", "p.csv", {});
  ASSERT_TRUE(pods) << pods.error().message;
  EXPECT_EQ(pods->at(0).gpu_milli, 500);
  EXPECT_EQ(pods->at(0).cpu_milli, 20);
}

struct BadInput {
  std::string name;
  bool nodes;  // Otherwise pods.
  std::string text;
  std::string error;  // The message starts with this.
};

class BadInputTest : public testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, IsRefusedNamingFileLineAndField) {
  const BadInput& input = GetParam();
  const Error error = input.nodes ? parse_nodes(input.text, "nodes.csv").error()
                                  : parse_pods(input.text, "pods.csv", kModels).error();
  EXPECT_EQ(error.code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(error.message.starts_with(input.error)) << error.message;
}

const std::string kPodHeader = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";

// A bad row after kNodes' rows, or after kPodHeader.
BadInput bad_node_row(std::string name, std::string_view row, std::string error) {
  return {std::move(name), true, std::string(kNodes) + std::string(row), std::move(error)};
}
BadInput bad_pod_row(std::string name, std::string_view row, std::string error) {
  return {std::move(name), false, kPodHeader + std::string(row), std::move(error)};
}

INSTANTIATE_TEST_SUITE_P(
    Trace, BadInputTest,
    testing::Values(
        BadInput{"EmptyFile", true, "", "nodes.csv:1: no header"},
        BadInput{"NodeColumnMissing", true, "sn,cpu_milli,memory_mib,gpu\nn,1,1,0\n",
                 "nodes.csv:1: field 'model': missing from the header"},
        BadInput{"ColumnTwice", true, "sn,sn,cpu_milli,memory_mib,gpu,model\n",
                 "nodes.csv:1: field 'sn': named twice"},
        bad_node_row("NodeCpuNotANumber", "n2,lots,1,0,\n",
                     "nodes.csv:4: field 'cpu_milli': bad number 'lots'"),
        bad_node_row("NodeGpuNegative", "n2,1,1,-1,T4\n",
                     "nodes.csv:4: field 'gpu': bad number '-1'"),
        bad_node_row("NodeGpuTooMany", "n2,1,1,5000,T4\n",
                     "nodes.csv:4: field 'gpu': bad number '5000'"),
        bad_node_row("NodeMemoryEmpty", "n2,1,,0,\n",
                     "nodes.csv:4: field 'memory_mib': bad number ''"),
        bad_node_row("NodeGpusWithoutModel", "n2,1,1,2,\n", "nodes.csv:4: field 'model': empty"),
        bad_node_row("NodeWithoutName", ",1,1,0,\n", "nodes.csv:4: field 'sn': empty"),
        bad_node_row("NodeTwice", "n0,1,1,0,\n", "nodes.csv:4: field 'sn': 'n0' also on line 2"),
        bad_node_row("RowTooShort", "n2,1,1\n", "nodes.csv:4: field 'gpu': missing"),
        bad_node_row("RowTooLong", "n2,1,1,0,,x\n", "nodes.csv:4: 6 fields, the header has 5"),
        BadInput{"PodColumnMissing", false, "name,cpu_milli,memory_mib,num_gpu\n",
                 "pods.csv:1: field 'gpu_milli': missing from the header"},
        bad_pod_row("PodNumberWithJunk", "p,1,1,1,5x0,\n",
                    "pods.csv:2: field 'gpu_milli': bad number '5x0'"),
        bad_pod_row("PodNumberTooBig", "p,99999999999999999999,1,1,500,\n",
                    "pods.csv:2: field 'cpu_milli': bad number"),
        bad_pod_row("PodShareOverAWholeGpu", "p,1,1,1,1001,\n",
                    "pods.csv:2: field 'gpu_milli': bad number '1001'"),
        bad_pod_row("PodShareWithoutGpu", "p,1,1,0,500,\n",
                    "pods.csv:2: field 'gpu_milli': not 0 with num_gpu 0"),
        bad_pod_row("PodGpuAskingNothing", "p,1,1,2,0,\n",
                    "pods.csv:2: field 'gpu_milli': 0 on a GPU pod"),
        bad_pod_row("PodUnknownModel", "p,1,1,1,500,T4|H100\n",
                    "pods.csv:2: field 'gpu_spec': model 'H100' is on no node"),
        bad_pod_row("PodEmptyModel", "p,1,1,1,500,T4||G2\n",
                    "pods.csv:2: field 'gpu_spec': empty model in 'T4||G2'"),
        bad_pod_row("PodRowTooShort", "p,1,1,1\n", "pods.csv:2: field 'gpu_milli': missing")),
    [](const testing::TestParamInfo<BadInput>& info) { return info.param.name; });

TEST(ReadFiles, NamesAFileThatCannotBeOpened) {
  Result<std::vector<sched::NodeView>> nodes = read_nodes("/nonexistent/nodes.csv");
  ASSERT_FALSE(nodes);
  EXPECT_EQ(nodes.error().message, "/nonexistent/nodes.csv: cannot open");
  Result<std::vector<sched::Request>> pods = read_pods("/nonexistent/pods.csv", {});
  ASSERT_FALSE(pods);
  EXPECT_EQ(pods.error().message, "/nonexistent/pods.csv: cannot open");
}

// The published trace, where this checkout has it: the counts its README states.
TEST(ReadFiles, ReadsTheOpenbTraceAsPublished) {
  const std::filesystem::path dir = "/work/shared/data/openb";
  if (!std::filesystem::exists(dir / "node_list_gpu_node.csv")) GTEST_SKIP() << "no trace data";
  Result<std::vector<sched::NodeView>> nodes =
      read_nodes((dir / "node_list_gpu_node.csv").string());
  ASSERT_TRUE(nodes) << nodes.error().message;
  EXPECT_EQ(nodes->size(), 1213U);
  size_t gpus = 0;
  for (const sched::NodeView& node : *nodes) gpus += node.gpus.size();
  EXPECT_EQ(gpus, 6212U);
  for (const char* trace : {"default", "gpushare40", "multigpu30", "gpuspec33"}) {
    Result<std::vector<sched::Request>> pods =
        read_pods((dir / fmt::format("pod_list_{}.csv", trace)).string(), models_of(*nodes));
    ASSERT_TRUE(pods) << pods.error().message;
    EXPECT_GT(pods->size(), 0U);
  }
  Result<std::vector<sched::Request>> pods =
      read_pods((dir / "pod_list_default.csv").string(), models_of(*nodes));
  EXPECT_EQ(pods->size(), 8152U);
}

}  // namespace
}  // namespace allot::sim
