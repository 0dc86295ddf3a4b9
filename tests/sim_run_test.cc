// `allot sim run` on the month in examples/billing-month.json, checked against a calculation made
// here from the charge rule alone: when each instance ran is worked out by hand from the
// scenario's events, and every invoice line must match to the micro-unit. And the operator's P&L
// of examples/finance-month.json against its invoices, and its books, energy and carbon worked out
// by hand from the scenario.
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
const std::string kFinance = std::string(ALLOT_SOURCE_DIR) + "/examples/finance-month.json";
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

// "12.345678" -> 12,345,678 micro-units.
int64_t micros(const json& text) {
  const std::string t = text.get<std::string>();
  const bool negative = t.starts_with('-');
  const size_t dot = t.find('.');
  const int64_t whole = std::stoll(t.substr(negative ? 1 : 0, dot - (negative ? 1 : 0)));
  const int64_t fraction = std::stoll(t.substr(dot + 1));
  const int64_t value = whole * 1'000'000 + fraction;
  return negative ? -value : value;
}

json run_json(const std::string& path) {
  const RunResult result = allot_offline({"-o", "json", "sim", "run", path});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return json::parse(result.out, nullptr, false);
}

// Writes the scenario at `path` spoiled by `spoil`, runs it, and returns what it printed on error
// (the exit code must be 2).
std::string refusal(const std::string& path, const std::function<void(json&)>& spoil) {
  const TempDir dir;
  std::ifstream in(path);
  json doc = json::parse(in);
  spoil(doc);
  const std::string spoiled = (dir.path() / "bad.json").string();
  std::ofstream(spoiled) << doc.dump();
  const RunResult result = allot_offline({"sim", "run", spoiled});
  EXPECT_EQ(result.exit_code, 2) << result.out;
  return result.err;
}

TEST(SimRunTest, AMonthOfTenantsPricesPreemptionsANodeLossAndARunDryPrepaidIsBilledExactly) {
  const RunResult result = allot_offline({"-o", "json", "sim", "run", kScenario});
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
  auto refused_for = [](const std::function<void(json&)>& spoil) {
    return refusal(kScenario, spoil);
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
  EXPECT_EQ(allot_offline({"sim", "run", not_json}).exit_code, 2);
}

// examples/finance-month.json, worked out by hand. November 2026 has 2,592,000 seconds; the us
// power price rises from 0.08 to 0.12 per kWh at 1,296,000 s (day 15, on the hour).
constexpr int64_t kMonth = 2'592'000;
constexpr int64_t kUsPriceChange = 1'296'000;

struct Node {
  std::string name;
  int64_t gpus, idle_w, busy_w, pue_milli;
};

const std::vector<Node> kNodes = {
    {"fra-1", 8, 80, 700, 1'200},  // H100: the default 80 W idle, 700 W busy; eu PUE 1.2.
    {"ore-1", 8, 80, 700, 1'500},  // H200: the same defaults; us PUE 1.5.
    {"ore-2", 4, 50, 400, 1'500},  // A100 with the scenario's own 50 W and 400 W.
};

// Each instance: on which node, how many GPUs, and the seconds [start, end) it held them. sweep is
// spot work preempted when tune, on-demand, needs the whole node.
struct Busy {
  std::string id, node;
  int64_t gpus, start_s, end_s;
  int64_t g_per_kwh;  // The grid's intensity while it ran.
};

const std::vector<Busy> kBusy = {
    {"train", "fra-1", 8, 0, 864'000, 300},   {"eval", "fra-1", 4, 1'800'000, 1'836'000, 240},
    {"sweep", "ore-1", 8, 0, 1'000'000, 120}, {"tune", "ore-1", 8, 1'000'000, 1'432'000, 120},
    {"serve", "ore-2", 2, 0, 360'000, 120},
};

// The node's GPUs' energy in [from_s, to_s), in mJ: busy watts while held, idle watts otherwise
// (W x ms = mJ).
int64_t energy_mj(const Node& node, int64_t from_s, int64_t to_s) {
  int64_t busy_gpu_s = 0;
  for (const Busy& b : kBusy) {
    if (b.node != node.name) continue;
    busy_gpu_s +=
        b.gpus * std::max<int64_t>(0, std::min(b.end_s, to_s) - std::max(b.start_s, from_s));
  }
  const int64_t idle_gpu_s = node.gpus * (to_s - from_s) - busy_gpu_s;
  return (node.busy_w * busy_gpu_s + node.idle_w * idle_gpu_s) * 1'000;
}

// Energy x PUE x price per kWh, in micro-units: mJ x pue/1,000 x micro-units per kWh / 3.6e9.
int64_t power_micros(const Node& node) {
  Int128 cost = 0;
  if (node.name == "fra-1") {
    cost = Int128{energy_mj(node, 0, kMonth)} * 250'000;
  } else {
    cost = Int128{energy_mj(node, 0, kUsPriceChange)} * 80'000 +
           Int128{energy_mj(node, kUsPriceChange, kMonth)} * 120'000;
  }
  return static_cast<int64_t>(cost * node.pue_milli / (Int128{3'600'000'000} * 1'000));
}

std::string kg_text(int64_t carbon_ug) { return decimal((carbon_ug + 500) / 1'000); }

TEST(SimRunTest, AMonthsProfitAndLossMatchesItsInvoicesAndTheBooksWorkedByHand) {
  const json out = run_json(kFinance);
  ASSERT_FALSE(out.is_discarded());
  ASSERT_EQ(out.at("pnl").size(), 1u);
  const json& month = out.at("pnl").at(0);
  EXPECT_EQ(month.at("month"), "2026-11");

  // Revenue is what the month's invoices charge, before credits; net revenue what they total.
  int64_t subtotals = 0;
  int64_t totals = 0;
  for (const json& tenant : out.at("tenants")) {
    for (const json& invoice : tenant.at("invoices")) {
      if (invoice.at("month") != "2026-11") continue;
      subtotals += micros(invoice.at("subtotal"));
      totals += micros(invoice.at("total"));
    }
  }
  const json& sums = month.at("totals");
  EXPECT_EQ(micros(sums.at("revenue")), subtotals);
  EXPECT_EQ(micros(sums.at("net_revenue")), totals);
  EXPECT_EQ(sums.at("credits"), "50.000000");  // gamma's promotional credit, all spent.
  // 8 x 3.00 x 240 h + 4 x 3.00 x 10 h; 8 x 1.50 x 1,000,000 s and 8 x 3.50 x 120 h; 2 x 1.80 x
  // 100 h.
  EXPECT_EQ(sums.at("revenue"),
            decimal(5'880'000'000 + 3'333'333'333 + 3'360'000'000 + 360'000'000));

  std::map<std::string, json> nodes;
  for (const json& n : month.at("nodes")) nodes[n.at("node")] = n;
  ASSERT_EQ(nodes.size(), 3u);
  // Straight line: 120,000 over 12 months. Declining balance at twice the straight-line rate:
  // 240,000 x 2 / 48 months in the first month (above (240,000 - 24,000) / 48 = 4,500).
  EXPECT_EQ(nodes.at("fra-1").at("depreciation"), "10000.000000");
  EXPECT_EQ(nodes.at("ore-1").at("depreciation"), "10000.000000");
  EXPECT_EQ(nodes.at("ore-2").at("depreciation"), "0.000000");
  // The loan's first month: 200,000 x 6 % / 12.
  EXPECT_EQ(nodes.at("ore-1").at("interest"), "1000.000000");
  EXPECT_EQ(nodes.at("fra-1").at("interest"), "0.000000");
  // Colocation: 10.2 kW x 150 and 12 kW x 120. Staff, 2,000 per GPU over 20 GPUs: 100 each.
  EXPECT_EQ(nodes.at("fra-1").at("colocation"), "1530.000000");
  EXPECT_EQ(nodes.at("ore-1").at("colocation"), "1440.000000");
  EXPECT_EQ(nodes.at("fra-1").at("other"), "800.000000");
  EXPECT_EQ(nodes.at("ore-2").at("other"), "400.000000");
  for (const Node& node : kNodes) {
    SCOPED_TRACE(node.name);
    const json& got = nodes.at(node.name);
    EXPECT_EQ(got.at("energy_mj"), energy_mj(node, 0, kMonth));
    EXPECT_EQ(got.at("power"), decimal(power_micros(node)));
    EXPECT_EQ(micros(got.at("margin")), micros(got.at("revenue")) - micros(got.at("costs")));
  }
  // The same by hand in round figures: fra-1 used 1,676 kWh x 1.2 x 0.25; ore-1 2,016 kWh before
  // the change x 1.5 x 0.08 and 417.78 kWh after x 1.5 x 0.12; ore-2 142 and 72 kWh.
  EXPECT_EQ(nodes.at("fra-1").at("energy_kwh"), "1676.000000");
  EXPECT_EQ(nodes.at("fra-1").at("power"), "502.800000");
  EXPECT_EQ(nodes.at("ore-1").at("power"), "317.120000");
  EXPECT_EQ(nodes.at("ore-2").at("power"), "30.000000");
  int64_t costs = 0;
  for (const auto& [name, n] : nodes) costs += micros(n.at("costs"));
  EXPECT_EQ(micros(sums.at("costs")), costs);
  EXPECT_EQ(micros(sums.at("margin")), totals - costs);
}

TEST(SimRunTest, AnInstancesEnergyIsBusyWattsTimesItsTimeOnItsGpusAndItsCarbonFollowsThePue) {
  const json out = run_json(kFinance);
  ASSERT_FALSE(out.is_discarded());
  std::map<std::string, json> instances;
  for (const json& i : out.at("instances")) instances[i.at("id")] = i;
  for (const Busy& b : kBusy) {
    SCOPED_TRACE(b.id);
    const Node& node =
        *std::ranges::find_if(kNodes, [&](const Node& n) { return n.name == b.node; });
    const int64_t mj = node.busy_w * (b.end_s - b.start_s) * 1'000 * b.gpus;
    const json& got = instances.at(b.id);
    EXPECT_EQ(got.at("energy_mj"), mj);
    // µg = kWh x PUE x g/kWh x 1e6 = mJ / 3.6e9 x pue/1,000 x g x 1e6.
    EXPECT_EQ(got.at("carbon_kg"),
              kg_text(static_cast<int64_t>(Int128{mj} * node.pue_milli * b.g_per_kwh / 3'600'000)));
  }
  // train: 8 GPUs x 700 W x 240 h = 1,344 kWh; x 1.2 x 300 g = 483.84 kg.
  EXPECT_EQ(instances.at("train").at("energy_kwh"), "1344.000000");
  EXPECT_EQ(instances.at("train").at("carbon_kg"), "483.840000");
  // serve: 2 GPUs x 400 W x 100 h = 80 kWh; x 1.5 x 120 g = 14.4 kg.
  EXPECT_EQ(instances.at("serve").at("energy_kwh"), "80.000000");
  EXPECT_EQ(instances.at("serve").at("carbon_kg"), "14.400000");
  // eval ran after eu's grid fell to 240 g: 4 x 700 W x 10 h = 28 kWh; x 1.2 x 240 g.
  EXPECT_EQ(instances.at("eval").at("carbon_kg"), "8.064000");
}

TEST(SimRunTest, TheTableShowsTheMonthsProfitAndLoss) {
  const RunResult result = allot_offline({"sim", "run", kFinance});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("P&L 2026-11"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("ore-1"), std::string::npos);
  EXPECT_NE(result.out.find("net 12883.333333"), std::string::npos) << result.out;
}

TEST(SimRunTest, BadBooksAreRefusedWithTheFieldThatIsWrong) {
  auto refused_for = [](const std::function<void(json&)>& spoil) {
    return refusal(kFinance, spoil);
  };
  auto names = [&](const std::string& field, const std::function<void(json&)>& spoil) {
    const std::string err = refused_for(spoil);
    EXPECT_NE(err.find(field), std::string::npos) << err;
  };
  names("sites[1].power_prices[0].price_per_kwh",
        [](json& d) { d["sites"][1]["power_prices"][0]["price_per_kwh"] = "-0.08"; });
  names("rental_prices[0].price_per_gpu_hour",
        [](json& d) { d["rental_prices"][0]["price_per_gpu_hour"] = "-4"; });
  names("assets[0].life_months", [](json& d) { d["assets"][0]["life_months"] = 0; });
  names("assets[0].life_months", [](json& d) { d["assets"][0]["life_months"] = -12; });
  names("assets[1].financing.term_months",
        [](json& d) { d["assets"][1]["financing"]["term_months"] = 0; });
  names("assets[0].salvage", [](json& d) { d["assets"][0]["salvage"] = "120000.01"; });
  names("assets[0].nodes[0]", [](json& d) { d["assets"][0]["nodes"][0] = "nowhere"; });
  names("assets[1].nodes[0]", [](json& d) { d["assets"][1]["nodes"][0] = "fra-1"; });
  names("sites[0].pue", [](json& d) { d["sites"][0]["pue"] = "0.95"; });
  names("sites[0].pue", [](json& d) { d["sites"][0]["pue"] = "1.2345"; });
  names("assets[1].financing.annual_rate",
        [](json& d) { d["assets"][1]["financing"]["annual_rate"] = "6"; });
  names("fixed_costs[0].rule", [](json& d) { d["fixed_costs"][0]["rule"] = "by_luck"; });
  names("nodes[2].gpu_busy_w", [](json& d) { d["nodes"][2]["gpu_busy_w"] = 10; });
  names("events[6].asset", [](json& d) {
    d["events"].push_back({{"at", 10}, {"type", "retire"}, {"asset", "no such"}});
  });
  // The core's own checks, while running, name the item too: a rate may not take effect before
  // a later one already given.
  names("events[4]", [](json& d) {
    d["sites"][1]["power_prices"].push_back({{"at", 2'000'000}, {"price_per_kwh", "0.10"}});
  });
}

}  // namespace
}  // namespace allot::testing
