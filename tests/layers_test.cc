// The source tree's layers: no production file includes a header of a layer above its own, and
// the core's domains include only the domains below them (docs/architecture.md, "One machine,
// many rooms"). Tests and their support files may reach anywhere.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

// Each room's rank: a file may include its own room and rooms of a lower rank, nothing else.
// Rooms of one rank do not include each other.
const std::map<std::string, int> kRanks = {
    {"common", 0},         {"ledger", 1},       {"meter", 1},        {"finance", 1},
    {"forecast", 1},       {"client", 1},       {"core/model", 2},   {"core/kernel", 3},
    {"core/identity", 4},  {"core/money", 4},   {"core/books", 4},   {"core/pools", 4},
    {"core/admission", 5}, {"core/regions", 6}, {"core/cluster", 7}, {"core", 8},
    {"sched", 9},          {"store", 9},        {"reports", 9},      {"sim", 10},
    {"api", 10},           {"agent", 10},       {"daemon", 11},      {"cli", 11},
};

// The room of a path below src/: core's domains and layers are rooms of their own; elsewhere the
// first folder is the room (api/routes is api).
std::string room_of(const std::string& path) {
  const size_t slash = path.find('/');
  std::string top = path.substr(0, slash);
  if (top != "core" || slash == std::string::npos) return top;
  const size_t next = path.find('/', slash + 1);
  return next == std::string::npos ? "core" : path.substr(0, next);
}

bool is_test_file(const std::string& name) {
  return name.ends_with("_test.cc") || name.starts_with("test_") ||
         name.find("test_support") != std::string::npos || name.starts_with("fake_");
}

struct Edge {
  std::string file, include;
};

std::vector<Edge> includes_of_production_files(const fs::path& src) {
  const std::regex quoted(R"re(^#include "([^"]+)")re");
  std::vector<Edge> edges;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || is_test_file(name)) continue;
    if (!name.ends_with(".cc") && !name.ends_with(".h")) continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch match;
      if (std::regex_search(line, match, quoted)) {
        edges.push_back({fs::relative(entry.path(), src).string(), match[1]});
      }
    }
  }
  return edges;
}

TEST(Layers, EveryRoomHasARank) {
  for (const Edge& edge : includes_of_production_files(fs::path(ALLOT_SOURCE_DIR) / "src")) {
    EXPECT_TRUE(kRanks.contains(room_of(edge.file))) << edge.file;
  }
}

TEST(Layers, NoIncludeRunsUpALayerOrAcrossOne) {
  const std::vector<Edge> edges = includes_of_production_files(fs::path(ALLOT_SOURCE_DIR) / "src");
  ASSERT_GT(edges.size(), 500U);  // The tree was found and read.
  std::ostringstream wrong;
  for (const Edge& edge : edges) {
    const std::string from = room_of(edge.file);
    const std::string to = room_of(edge.include);
    if (from == to || !kRanks.contains(from) || !kRanks.contains(to)) continue;
    if (kRanks.at(to) >= kRanks.at(from)) {
      wrong << edge.file << " includes " << edge.include << " (" << from << " may not include "
            << to << ")\n";
    }
  }
  EXPECT_EQ(wrong.str(), "");
}

TEST(Layers, RoomsAreReadAsTheDocsName) {
  EXPECT_EQ(room_of("core/cluster/nodes.cc"), "core/cluster");
  EXPECT_EQ(room_of("core/machine.cc"), "core");
  EXPECT_EQ(room_of("api/routes/pool_routes.cc"), "api");
  EXPECT_EQ(room_of("common/money.h"), "common");
}

}  // namespace
