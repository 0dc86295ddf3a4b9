// Regions as a catalog: what each region offers now (GPU models, free GPUs, prices, the grid's
// carbon and PUE, latencies from client locations), the latency table's commands, and the places
// a request could run, ready for rank_quote (core/admission/quote.h).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/admission/quote.h"
#include "core/kernel/handler.h"

namespace allot {

// - SetLatency: sets the round trip from `from` to the region, replacing the one there is. Refuses
//   invalid_argument (bad from or region name, rtt_ms not 0 to limits::kMaxLatencyMs) and
//   limit_exceeded (a new entry where the table is full).
// - DeleteLatency: removes the round trip from `from` to the region (its row stays in the store,
//   marked deleted); not_found where there is none.
ALLOT_HANDLERS(SetLatency, DeleteLatency);

struct ModelOffer {
  std::string gpu_model;
  int gpus = 0;                             // Healthy GPUs on the region's nodes that take work.
  int free_gpus = 0;                        // Of those, wholly free.
  std::optional<int64_t> on_demand_micros;  // Per GPU-hour, in force now; unset: none.
  std::optional<int64_t> spot_micros;       // What spot work is charged now; unset: none.
  bool spot_from_on_demand =
      false;  // No spot price: the operator lets spot fall back to on-demand.
};

struct RegionInfo {
  std::string region;
  std::vector<ModelOffer> models;             // By model name.
  std::optional<int64_t> carbon_g_per_kwh;    // In force now; unset: no step yet.
  std::optional<int64_t> pue_milli;           // Unset: no site for the region.
  std::map<std::string, int64_t> latency_ms;  // From each client location.
};

// The names of the regions that have nodes (not lost), GPU prices, a site or latencies.
std::set<std::string> known_regions(const State& state);

// Every region that has nodes, prices, a site or latencies, by name, as it stands at `now_ms`.
std::vector<RegionInfo> region_catalog(const State& state, TimeMs now_ms);

// The places `spec` could run at `now_ms`: one per region and GPU model that the spec's models
// allow and that the region has nodes or a price of the spec's class for. Hard limits are not
// applied here; rank_quote applies them.
std::vector<QuoteOption> quote_options(const State& state, const InstanceSpec& spec, TimeMs now_ms);

// A request's hard limits as a node filter: a process-runtime node its tenant may not use, a
// node outside the allowed regions, or with a GPU of an allowed model that has no price for the
// request's class (work there would go uncharged), or one above its maximum, is never chosen. Not
// for use on two threads at once.
NodeFilter hard_limits_filter(const State& state, const Instance& instance, TimeMs now_ms);
// Whether `instance` may run on nodes of the process runtime, whose work is not isolated from the
// host: the operator's own tenant's, or anyone's where the operator allows it.
bool may_use_process_nodes(const State& state, const Instance& instance);

// Why the hard limits leave nodes out, e.g. "2 of 3 ready nodes are not in the allowed regions
// (eu|us)", or empty when they leave out none.
std::string hard_limits_reason(const Draft& draft, const Instance& instance, TimeMs now_ms);

// The grid intensity in force at `at_ms` in g/kWh, or nullopt before the region's first step
// (unknown, not zero).
std::optional<int64_t> intensity_at(const Site& site, TimeMs at_ms);

void put(State& state, const Latency& latency);

}  // namespace allot
