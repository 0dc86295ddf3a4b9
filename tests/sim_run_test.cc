// `allot sim run` on the month in examples/billing-month.json, checked against a calculation made
// here from the charge rule alone: when each instance ran is worked out by hand from the
// scenario's events, and every invoice line must match to the micro-unit.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/int128.h"
#include "support/daemon.h"
#include "support/temp_dir.h"

namespace allot::testing {
namespace {

using nlohmann::json;

const std::string kScenario = std::string(ALLOT_SOURCE_DIR) + "/examples/billing-month.json";
constexpr int64_t kDay = 86'400;
constexpr int64_t kDecember = 16 * kDay;  // The scenario starts on 15 November.
constexpr int64_t kEnd = 30 * kDay;

struct Rate {
  std::string model, region, price_class;
  int64_t from_s;
  int64_t micros_per_gpu_hour;
};

// The scenario's prices, as written there.
const std::vector<Rate> kRates = {
    {"H100-80GB", "eu", "on-demand", 0, 2'500'000},
    {"H100-80GB", "eu", "on-demand", 864'000, 3'000'000},
    {"H100-80GB", "us", "on-demand", 0, 2'000'000},
    {"H100-80GB", "us", "spot", 0, 1'000'000},
    {"H100-80GB", "us", "spot", 432'000, 1'600'000},
    {"A100-80GB", "asia", "on-demand", 0, 1'600'000},
};

struct Usage {
  std::string id, tenant, project, model, region, price_class;
  int64_t milli, start_s, end_s;
  std::string state;
};

// When each instance ran, from the scenario's events and the rules of virtual time.
const std::vector<Usage> kRuns = {
    // 20 days, across the price change on day 10 and the month's end.
    {"train", "acme", "llm", "H100-80GB", "eu", "on-demand", 8000, 0, 1'728'000, "succeeded"},
    // Its node fails at 500,005 s: billing ends at the last heartbeat, 500,000 s.
    {"infer", "acme", "serving", "A100-80GB", "asia", "on-demand", 2000, 0, 500'000, "lost"},
    {"burst", "acme", "llm", "H100-80GB", "us", "on-demand", 8000, 259'200, 345'600, "succeeded"},
    {"infer2", "acme", "serving", "A100-80GB", "asia", "on-demand", 1000, 600'000, 1'204'800,
     "succeeded"},
    // 500 prepaid at 8 per hour: 62.5 hours.
    {"web", "beta", "site", "H100-80GB", "us", "on-demand", 4000, 0, 225'000, "stopped"},
    {"web2", "beta", "site", "H100-80GB", "us", "on-demand", 1000, 518'400, 554'400, "succeeded"},
    // Preempted for burst, which needs the whole node.
    {"spot1", "gamma", "sweep", "H100-80GB", "us", "spot", 4000, 3'600, 259'200, "preempted"},
    // Preempted when the spot price (1.60) passes its maximum (1.50).
    {"spot2", "gamma", "sweep", "H100-80GB", "us", "spot", 2000, 345'600, 432'000, "preempted"},
};

int64_t rule(int64_t rate, int64_t milli, int64_t seconds) {
  return static_cast<int64_t>(Int128{rate} * milli * seconds / 3'600'000);
}

// What the run costs within [from_s, to_s): each stretch of one price rated from its own start.
int64_t charge(const Usage& run, int64_t from_s, int64_t to_s) {
  std::vector<Rate> rates;
  for (const Rate& r : kRates) {
    if (r.model == run.model && r.region == run.region && r.price_class == run.price_class) {
      rates.push_back(r);
    }
  }
  int64_t total = 0;
  for (size_t i = 0; i < rates.size(); ++i) {
    const int64_t next = i + 1 < rates.size() ? rates[i + 1].from_s : INT64_MAX;
    const int64_t start = std::max(rates[i].from_s, run.start_s);
    const int64_t end = std::min(next, run.end_s);
    if (start >= end) continue;
    auto upto = [&](int64_t at) { return std::clamp(at, start, end) - start; };
    total += rule(rates[i].micros_per_gpu_hour, run.milli, upto(to_s)) -
             rule(rates[i].micros_per_gpu_hour, run.milli, upto(from_s));
  }
  return total;
}

std::string decimal(int64_t micros) {
  const char* sign = micros < 0 ? "-" : "";
  const int64_t m = micros < 0 ? -micros : micros;
  return fmt::format("{}{}.{:06}", sign, m / 1'000'000, m % 1'000'000);
}

RunResult sim_run(const std::vector<std::string>& args) {
  return run_program(bin_dir() + "/src/cli/allot", args, {"HOME=/nonexistent"});
}

TEST(SimRunTest, AMonthOfTenantsPricesPreemptionsANodeLossAndARunDryPrepaidIsBilledExactly) {
  const RunResult result = sim_run({"-o", "json", "sim", "run", kScenario});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json out = json::parse(result.out, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << result.out;

  std::map<std::string, json> instances;
  for (const json& i : out.at("instances")) instances[i.at("id")] = i;
  std::map<std::string, int64_t> spent;
  for (const Usage& run : kRuns) {
    SCOPED_TRACE(run.id);
    const json& got = instances.at(run.id);
    EXPECT_EQ(got.at("state"), run.state) << got.at("reason");
    EXPECT_EQ(got.at("billed_seconds"), run.end_s - run.start_s);
    EXPECT_EQ(got.at("charge"), decimal(charge(run, 0, kEnd)));
    EXPECT_EQ(got.at("posted"), got.at("charge"));
    spent[run.tenant] += charge(run, 0, kEnd);
  }
  // No new work starts on a prepaid balance that is used up.
  EXPECT_EQ(instances.at("late").at("state"), "refused");
  EXPECT_NE(instances.at("late").at("reason").get<std::string>().find("insufficient_funds"),
            std::string::npos);

  // Invoices: lines per project x model x region x class, for November and December.
  const std::map<std::string, int64_t> credits = {{"gamma", 5'000'000}};
  for (const json& tenant : out.at("tenants")) {
    const std::string name = tenant.at("name");
    SCOPED_TRACE(name);
    ASSERT_EQ(tenant.at("invoices").size(), 2u);
    for (const auto& [index, from, to] :
         {std::tuple<size_t, int64_t, int64_t>{0, 0, kDecember}, {1, kDecember, kEnd + 1}}) {
      using Key = std::tuple<std::string, std::string, std::string, std::string>;
      std::map<Key, std::pair<int64_t, int64_t>> lines;  // amount, GPU milli-seconds
      for (const Usage& run : kRuns) {
        const int64_t seconds =
            std::max<int64_t>(0, std::min(run.end_s, to) - std::max(run.start_s, from));
        if (run.tenant != name || seconds == 0) continue;
        auto& line = lines[{run.project, run.model, run.region, run.price_class}];
        line.first += charge(run, from, to);
        line.second += run.milli * seconds;
      }
      const json& invoice = tenant.at("invoices").at(index);
      EXPECT_EQ(invoice.at("month"), index == 0 ? "2026-11" : "2026-12");
      ASSERT_EQ(invoice.at("lines").size(), lines.size()) << invoice.dump();
      int64_t subtotal = 0;
      for (const json& line : invoice.at("lines")) {
        const auto& want = lines.at(
            {line.at("project"), line.at("gpu_model"), line.at("region"), line.at("class")});
        EXPECT_EQ(line.at("amount"), decimal(want.first)) << line.dump();
        // Micro-GPU-hours, rounded half up.
        EXPECT_EQ(line.at("gpu_hours"), decimal((want.second * 1'000 + 1'800) / 3'600))
            << line.dump();
        subtotal += want.first;
      }
      const int64_t applied = index == 0 && credits.contains(name) ? credits.at(name) : 0;
      EXPECT_EQ(invoice.at("subtotal"), decimal(subtotal));
      EXPECT_EQ(invoice.at("credits_applied"), decimal(applied));
      EXPECT_EQ(invoice.at("total"), decimal(subtotal - applied));
    }
    // Balances: prepaid paid in 600 and never goes below zero; postpaid owes what it used less
    // its credits.
    const int64_t paid_in = name == "beta" ? 600'000'000 : 0;
    const int64_t credit = credits.contains(name) ? credits.at(name) : 0;
    EXPECT_EQ(tenant.at("balance"), decimal(paid_in + credit - spent.at(name)));
    EXPECT_EQ(tenant.at("unposted"), "0.000000");
  }
  EXPECT_EQ(spent.at("beta"), 520'000'000);  // 500 to the second, then 20 after a top-up.
  EXPECT_EQ(out.at("ledger").at("sum"), "0.000000");
  EXPECT_EQ(out.at("ledger").at("pending"), "0.000000");
}

TEST(SimRunTest, AMalformedScenarioIsRefusedWithTheFieldThatIsWrong) {
  const TempDir dir;
  std::ifstream in(kScenario);
  const json good = json::parse(in);
  auto refused_for = [&](const std::function<void(json&)>& spoil) {
    json doc = good;
    spoil(doc);
    const std::string path = (dir.path() / "bad.json").string();
    std::ofstream(path) << doc.dump();
    const RunResult result = sim_run({"sim", "run", path});
    EXPECT_EQ(result.exit_code, 2);
    return result.err;
  };
  EXPECT_NE(refused_for([](json& d) { d.erase("until"); }).find("until"), std::string::npos);
  EXPECT_NE(
      refused_for([](json& d) { d["tenants"][1]["topups"][0]["amount"] = "-5"; }).find("amount"),
      std::string::npos);
  EXPECT_NE(
      refused_for([](json& d) { d["tenants"][1]["topups"][0]["amount"] = "0"; }).find("amount"),
      std::string::npos);
  EXPECT_NE(refused_for([](json& d) {
              d["tenants"][1]["topups"][0]["amount"] = "99999999999999999999";
            }).find("amount"),
            std::string::npos);
  EXPECT_NE(refused_for([](json& d) { d["events"][0]["tenant"] = "nobody"; }).find("nobody"),
            std::string::npos);
  EXPECT_NE(refused_for([](json& d) { d["nodes"][0]["gpus"] = "8xB9000"; }).find("nodes[0].gpus"),
            std::string::npos);
  EXPECT_NE(refused_for([](json& d) { d["prices"][0].erase("region"); }).find("region"),
            std::string::npos);
  EXPECT_NE(refused_for([](json& d) { d["events"][1]["type"] = "explode"; }).find("type"),
            std::string::npos);
  const TempDir other;
  const std::string not_json = (other.path() / "x.json").string();
  std::ofstream(not_json) << "{ nope";
  EXPECT_EQ(sim_run({"sim", "run", not_json}).exit_code, 2);
}

}  // namespace
}  // namespace allot::testing
