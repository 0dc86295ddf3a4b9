// The queue's cost as it grows: creates per second on the core alone (no store, no HTTP), with no
// node to place on, so every instance waits; and what one timer pass costs at each length.
//
//   queue_bench [--total 100000] [--window 10000] [--tenants 1] [--shapes 1]
//
// Each window of --window creates is timed on its own; one JSON line per window gives the queue's
// length at its start, creates per second and the microseconds of one Tick at its end.
#include <chrono>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/cluster/test_nodes.h"
#include "core/core.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr allot::TimeMs kT0 = 1'800'000'000'000;

void ok(allot::Core& core, const allot::Command& command, allot::TimeMs at) {
  if (auto rows = core.apply(command, at); !rows) {
    std::cerr << rows.error().message << "\n";
    std::exit(1);
  }
}

double seconds_since(Clock::time_point from) {
  return std::chrono::duration<double>(Clock::now() - from).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"queue cost as it grows"};
  int total = 100'000, window = 10'000, tenants = 1, shapes = 1;
  app.add_option("--total", total);
  app.add_option("--window", window);
  app.add_option("--tenants", tenants, "tenants the creates are spread over");
  app.add_option("--shapes", shapes, "GPU counts (1..8) the creates cycle through");
  CLI11_PARSE(app, argc, argv);

  allot::Core core(allot::CoreOptions{.check_invariants = allot::InvariantCheck::kOff});
  for (int t = 0; t < tenants; ++t) {
    ok(core, allot::CreateTenant{fmt::format("ten_{:016x}", t + 1), fmt::format("t{}", t)}, kT0);
    ok(core,
       allot::CreateProject{fmt::format("prj_{:016x}", t + 1), fmt::format("ten_{:016x}", t + 1),
                            "p"},
       kT0);
  }
  for (const allot::Command& c : allot::free_prices("eu", kT0)) ok(core, c, kT0);
  allot::TimeMs at = kT0 + 1;
  for (int done = 0; done < total;) {
    const size_t queued = core.state().queue.size();
    const auto from = Clock::now();
    for (int i = 0; i < window && done < total; ++i, ++done) {
      const int t = done % tenants;
      allot::InstanceSpec spec{.gpus = 1 + (done % shapes) % 8, .command = {"true"}};
      ok(core,
         allot::CreateInstance{fmt::format("ins_{:016x}", done + 1),
                               fmt::format("ten_{:016x}", t + 1), fmt::format("prj_{:016x}", t + 1),
                               "usr_1", spec},
         ++at);
    }
    const double create_s = seconds_since(from);
    const auto tick_from = Clock::now();
    ok(core, allot::Tick{}, ++at);
    const double tick_s = seconds_since(tick_from);
    std::cout << nlohmann::json{{"queued_at_start", queued},
                                {"creates_per_s", static_cast<int64_t>(window / create_s)},
                                {"tick_us", static_cast<int64_t>(tick_s * 1e6)}}
                     .dump()
              << "\n"
              << std::flush;
  }
  return 0;
}
