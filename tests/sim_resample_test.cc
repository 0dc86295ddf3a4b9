// `allot sim resample` as an operator runs it: --cpu-scale multiplies every pod's CPU and keeps
// the same pods; a factor out of range is refused with the flag, the value and what it wants,
// exit 2 and nothing on stdout.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/daemon.h"
#include "support/temp_dir.h"

namespace allot::testing {
namespace {

// A node list and a pod list in the trace's columns: two 8-GPU nodes; CPU-only pods, pods that
// share a GPU and one-GPU pods.
struct Trace {
  TempDir dir;
  std::string nodes = (dir.path() / "nodes.csv").string();
  std::string pods = (dir.path() / "pods.csv").string();
  Trace() {
    std::ofstream(nodes) << "sn,cpu_milli,memory_mib,gpu,model\n"
                            "node-1,96000,786432,8,V100M32\nnode-2,64000,524288,8,T4\n";
    std::ofstream out(pods);
    out << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
           "deletion_time,scheduled_time\n";
    for (int i = 0; i < 40; ++i) {
      const int gpus = i % 4 == 0 ? 0 : 1;
      const int milli = i % 4 == 1 ? 250 : 1000;
      out << "pod-" << i << "," << 1000 + 100 * i << ",4096," << gpus << "," << (gpus ? milli : 0)
          << ",,LS,Running,0,100,0\n";
    }
  }
};

// The cpu_milli column of a pod list CSV.
std::vector<long> cpu_column(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_TRUE(line.starts_with("name,cpu_milli,")) << line;
  std::vector<long> cpu;
  while (std::getline(in, line)) {
    const size_t first = line.find(',');
    cpu.push_back(std::stol(line.substr(first + 1, line.find(',', first + 1) - first - 1)));
  }
  return cpu;
}

TEST(SimResampleTest, CpuScaleMultipliesEveryPodsCpuAndKeepsThePods) {
  Trace trace;
  const std::vector<std::string> base = {"sim",    "resample", "--nodes", trace.nodes,
                                         "--pods", trace.pods, "--seed",  "3"};
  const RunResult plain = allot_offline(base);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  std::vector<std::string> scaled_args = base;
  scaled_args.insert(scaled_args.end(), {"--cpu-scale", "2.5"});
  const RunResult scaled = allot_offline(scaled_args);
  ASSERT_EQ(scaled.exit_code, 0) << scaled.err;
  const std::vector<long> before = cpu_column(plain.out);
  const std::vector<long> after = cpu_column(scaled.out);
  ASSERT_EQ(before.size(), 40U);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i] * 5 / 2) << i;
}

TEST(SimResampleTest, AFactorOutOfRangeIsRefusedAndPrintsNothing) {
  Trace trace;
  for (const char* bad : {"0", "-1", "10.5"}) {
    const RunResult result = allot_offline(
        {"sim", "resample", "--nodes", trace.nodes, "--pods", trace.pods, "--cpu-scale", bad});
    EXPECT_EQ(result.exit_code, 2) << bad;
    EXPECT_EQ(result.out, "") << bad;
    EXPECT_NE(result.err.find(std::string("--cpu-scale ") + bad +
                              ": want a factor above 0 and at most 10"),
              std::string::npos)
        << result.err;
  }
  const RunResult word = allot_offline(
      {"sim", "resample", "--nodes", trace.nodes, "--pods", trace.pods, "--cpu-scale", "lots"});
  EXPECT_EQ(word.exit_code, 2);
  EXPECT_EQ(word.out, "");
  EXPECT_NE(word.err.find("--cpu-scale"), std::string::npos) << word.err;
}

}  // namespace
}  // namespace allot::testing
