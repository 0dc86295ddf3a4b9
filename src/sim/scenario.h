// `allot sim run`: a billing scenario (nodes, prices, tenants and their money, the operator's
// books, and timed events) run through the controller's own core on virtual time. The format is in
// docs/sim.md.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/kernel/command.h"
#include "core/model/books.h"
#include "core/model/pool.h"

namespace allot::sim {

struct ScenarioNode {
  std::string name;
  std::string region;
  int gpus = 0;
  std::string model;
  // What each simulated GPU draws idle and while a running instance holds it, in watts: its
  // energy counter grows by watts x milliseconds (mJ).
  int64_t idle_w = 0;
  int64_t busy_w = 0;
};

// The default power of a catalog GPU model when the scenario gives none: {idle, busy} watts.
std::pair<int64_t, int64_t> default_gpu_power(const std::string& model);

struct ScenarioTopup {
  int64_t at_s = 0;
  std::string tenant;
  int64_t amount_micros = 0;
  bool credit = false;
  int64_t expires_s = 0;  // A credit: when it lapses, in scenario seconds; 0: never.
};

struct ScenarioTenant {
  std::string name;
  BillingMode billing = BillingMode::kPostpaid;
  int64_t credit_limit_micros = 0;
};

enum class EventKind {
  kSubmit,
  kStop,
  kFailNode,
  kRestoreNode,
  kTopup,
  kPrice,
  kPowerPrice,
  kCarbon,
  kRetire,
  kChangeEstimate,
};

// The fields of the events that change the operator's books.
struct BooksEvent {
  std::string region;           // power_price, carbon.
  int64_t value = 0;            // power_price: micro-units per kWh; carbon: g per kWh.
  std::string asset;            // retire, change_estimate: the asset's name.
  int64_t proceeds_micros = 0;  // retire.
  int life_months = 0;          // change_estimate.
  int64_t salvage_micros = 0;   // change_estimate.
};

struct ScenarioEvent {
  int64_t at_s = 0;
  EventKind kind = EventKind::kSubmit;
  std::string id;       // submit, stop: the instance's scenario id.
  std::string tenant;   // submit.
  std::string project;  // submit.
  std::string node;     // fail_node, restore_node.
  InstanceSpec spec;    // submit.
  int64_t run_s = 0;    // submit: runs this long from its start, then exits; 0: until stopped.
  ScenarioTopup topup;  // topup.
  meter::Price price;   // price: effective at at_s.
  BooksEvent books;     // power_price, carbon, retire, change_estimate.
  std::string where;    // "events[3]": names it in errors found while running.
  size_t order = 0;     // Its place in the scenario, for events at the same second.
};

// A node pool the simulated autoscaler grows and shrinks: the pool the scenario creates, whose
// provider makes a node that joins boot_s after it is asked for, with the pool's GPU model and
// shape. Its provider is local, as any but static lets the autoscaler grow it; nothing runs it.
struct ScenarioPool {
  Pool pool{.provider = PoolProvider::kLocal, .cpu_milli = 256'000, .memory_mib = 2'048'000};
  int64_t boot_s = 120;  // From the request to the node's join.
};

// Pre-scaling from an hourly demand forecast per GPU model.
struct ScenarioForecast {
  bool enabled = false;
  bool compare = false;  // Run twice, without and with the forecast, and print both.
  int lead_h = 1;        // Grow to the forecast peak of this many hours from each hour's start.
  int history_h = 336;   // At most this many past hours go to the forecast.
};

// A generated demand with a daily cycle (docs/sim.md); its submits are in Scenario::events.
struct ScenarioWorkload {
  uint64_t seed = 0;
  int64_t jobs = 0;  // How many it generated.
};

struct Scenario {
  TimeMs start_ms = 0;
  int64_t until_s = 0;
  int64_t heartbeat_s = 10;
  int64_t rating_interval_s = 3'600;
  int64_t runway_s = 3'600;
  std::string policy = "allot";
  std::vector<ScenarioNode> nodes;
  std::vector<ScenarioTenant> tenants;
  std::vector<ScenarioEvent> events;  // Prices and top-ups given up front come here too.
  // The operator's books. Assets name their nodes by the scenario's node names.
  std::vector<Site> sites;  // Their rates' steps at real times (start + at).
  std::vector<finance::Asset> assets;
  std::vector<FixedCost> fixed_costs;
  std::vector<RentalPrice> rental_prices;
  std::vector<ScenarioPool> pools;
  int64_t autoscale_interval_s = 30;
  ScenarioForecast forecast;
  std::vector<ScenarioWorkload> workloads;
};

// Reads a scenario; every error names the field, e.g. "events[3].gpus: ...".
[[nodiscard]] Result<Scenario> parse_scenario(const nlohmann::json& doc);

// Runs it and returns per tenant its balance and invoices, per instance its final state, billed
// seconds and charge, the ledger's sum over all accounts, and per pool what the autoscaler did
// and how its GPUs were used. Amounts are decimal strings. Pre-scales from the forecast when
// forecast.enabled.
[[nodiscard]] Result<nlohmann::json> run_scenario(const Scenario& scenario);

// Runs it twice, without and with the forecast: {"without_forecast": REPORT, "with_forecast":
// REPORT}.
[[nodiscard]] Result<nlohmann::json> compare_forecast(const Scenario& scenario);

}  // namespace allot::sim
