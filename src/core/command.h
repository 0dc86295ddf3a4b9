// Commands are the only way the core's state changes. Each carries everything it needs from the
// outside world: ids, hashes and (through Core::apply) the time.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "core/budget.h"
#include "core/cluster.h"
#include "core/finance.h"
#include "core/image.h"
#include "core/invoice.h"
#include "core/latency.h"
#include "core/model.h"
#include "core/pool.h"
#include "core/registry.h"
#include "core/spot_rule.h"
#include "meter/rating.h"

namespace allot {

struct CreateTenant {
  std::string id;
  std::string name;
  bool is_operator = false;
};

struct CreateProject {
  std::string id;
  std::string tenant_id;
  std::string name;
};

struct DeleteProject {
  std::string id;
};

struct CreateUser {
  std::string id;
  std::string tenant_id;
  std::string name;
  std::string email;
  Role role = Role::kViewer;
};

// Changes the fields that are set.
struct UpdateUser {
  std::string id;
  std::optional<std::string> name;
  std::optional<Role> role;
  std::optional<bool> disabled;
};

struct CreateKey {
  std::string id;
  std::string user_id;
  std::string name;
  std::string prefix;
  std::string token_hash;
};

struct RevokeKey {
  std::string id;
};

struct CreateJoinToken {
  std::string id;
  std::string name;
  std::string token_hash;
  TimeMs expires_at_ms = 0;
};

struct RevokeJoinToken {
  std::string id;
};

struct GpuReport {
  int index = 0;
  std::string uuid;
  std::string name;
  std::string model;
  int64_t memory_bytes = 0;
  std::string pci_bus_id;
  bool mig_enabled = false;
};

// An agent joins with a join token. A node of the same name whose GPUs have the same UUIDs is the
// same machine coming back: it keeps its id and gets the new credential.
struct JoinNode {
  std::string node_id;  // Used when the node is new.
  std::string join_token_hash;
  std::string credential_hash;
  std::string name;
  std::string address;  // Node::address.
  std::string region;
  std::map<std::string, std::string> labels;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  std::string backend;
  std::string runtime = "container";  // The API reads "process" for agents that do not say.
  std::string agent_version;
  std::vector<GpuReport> gpus;
  std::string gpu_problem;  // Node::gpu_problem, said from the start.
};

// kStarting: on its node but not running its command yet (its image is being pulled).
enum class WorkloadReportState { kRunning, kStarting, kExited, kFailedToStart };

// What the agent's runtime says of one workload.
struct WorkloadReport {
  std::string instance_id;
  WorkloadReportState state = WorkloadReportState::kRunning;
  int exit_code = -1;
  int signal = 0;
  std::string message;
};

struct GpuHeartbeat {
  int index = 0;
  GpuTelemetry telemetry;
  // False when the agent could not read the GPU's utilisation: idle stop counts it as busy.
  bool utilization_read = true;
  bool lost = false;
  std::vector<int> xids;
};

// A node's periodic report: telemetry of every GPU and every workload its runtime knows.
struct NodeHeartbeat {
  std::string node_id;
  std::vector<GpuHeartbeat> gpus;
  std::vector<WorkloadReport> workloads;
  std::string gpu_problem;  // Node::gpu_problem; empty: none.
  // The node's image store, sent when it changed: images_reported says whether it was.
  bool images_reported = false;
  std::vector<NodeImage> images;
  ImageStoreUse image_store;
  std::vector<PullReport> pulls;
};

struct SetNodeAdmin {
  std::string node_id;
  NodeAdmin admin = NodeAdmin::kNone;
};

// The node's credential stops working; its agent must join again with a join token.
struct RevokeNodeCredential {
  std::string node_id;
};

// Takes an empty node out of the fleet for good: it takes no work, its credential stops working,
// and it stays in the store for the books, in service until now.
struct DeleteNode {
  std::string node_id;
};

struct CreateInstance {
  std::string id;
  std::string tenant_id;
  std::string project_id;
  std::string user_id;
  InstanceSpec spec;
  // For a gang (spec.nodes > 1): the ids of ranks 1..nodes-1; `id` is rank 0 and names the gang.
  std::vector<std::string> member_ids;
};

// Stopping a gang's member stops the whole gang.
struct StopInstance {
  std::string id;
};

// Sets the tenant's quota for (project, model), replacing the one there is; `id` is used when
// there is none.
struct SetQuota {
  std::string id;
  std::string tenant_id;
  std::string project_id;
  std::string gpu_model;
  int64_t gpu_milli = 0;
};

struct DeleteQuota {
  std::string id;
};

struct CreateReservation {
  std::string id;
  std::string tenant_id;
  std::string gpu_model;
  int gpus = 0;
  TimeMs starts_at_ms = 0;
  TimeMs ends_at_ms = 0;
};

struct CancelReservation {
  std::string id;
};

// A price for a GPU model x region x price class from `price.effective_ms` on (0: now).
struct SetPrice {
  meter::Price price;
};

// Money paid in (or, as `credit`, a promotional credit given) to a tenant. `id` is the caller's
// idempotency key: the same top-up again changes nothing; another with the same id is refused.
struct Topup {
  std::string id;
  std::string tenant_id;
  int64_t amount_micros = 0;
  bool credit = false;
  TimeMs expires_at_ms = 0;  // A credit: when what is left of it lapses; 0: never.
};

// How a tenant pays: prepaid, or postpaid with a credit limit (0: none).
struct SetBilling {
  std::string tenant_id;
  BillingMode mode = BillingMode::kPostpaid;
  int64_t credit_limit_micros = 0;
};

struct SetTenantWeight {
  std::string tenant_id;
  int64_t weight = 1;
};

// Replaces the tenant's billing details (what its invoices say about it as a customer).
struct SetBillingDetails {
  std::string tenant_id;
  BillingDetails details;
};

// Drafts the tenant's invoice for the month starting at month_ms with lines from the billing
// drafter; re-drafting the month's draft replaces its lines (and keeps its id). `id` is used when
// the month has no invoice that is not void.
struct DraftInvoice {
  std::string id;
  std::string tenant_id;
  TimeMs month_ms = 0;
  TimeMs period_start_ms = 0;  // Within the month: see Invoice.
  TimeMs period_end_ms = 0;
  std::vector<InvoiceLine> lines;
  int64_t credits_micros = 0;
  bool prepaid = false;
  BalancePayments payments;
  BillingDetails customer;  // The tenant's billing details as drafted.
};

// Numbers a draft and makes it immutable. Before the month has ended only when `early`: the
// invoice then bills usage up to where its draft read it, and the next month's invoice the rest.
struct FinalizeInvoice {
  std::string id;
  bool early = false;
};

struct MarkInvoicePaid {
  std::string id;
};

// A draft or final invoice that is not paid stops counting; a final one keeps its number.
struct VoidInvoice {
  std::string id;
};

// Gives back part or all of what is left un-credited of a final or paid invoice.
struct CreateCreditNote {
  std::string id;
  std::string invoice_id;
  int64_t amount_micros = 0;
  std::string reason;
};

// Sets the budget of a tenant, or of one of its projects, replacing the one there is; `id` is
// used when there is none.
struct SetBudget {
  std::string id;
  std::string tenant_id;
  std::string project_id;  // Empty: the whole tenant.
  int64_t amount_micros = 0;
  std::vector<int64_t> thresholds_pct = {50, 80, 100};
  std::string webhook_url;  // Empty: no webhook.
  std::string webhook_secret;
  Enforcement enforcement = Enforcement::kNone;
};

struct DeleteBudget {
  std::string id;
};

// The operator's books (core/books.cc). A new asset: a node or a batch of nodes, its cost,
// depreciation and financing.
struct CreateAsset {
  finance::Asset asset;
};

// A change of estimate, from the month `change.from_month_ms` holds on.
struct ChangeAssetEstimate {
  std::string asset_id;
  finance::EstimateChange change;
};

struct RetireAsset {
  std::string asset_id;
  TimeMs retired_ms = 0;  // 0: now.
  int64_t proceeds_micros = 0;
};

// A region's PUE and colocation price; a field left empty keeps what it was.
struct SetSite {
  std::string region;
  std::optional<int64_t> pue_milli;
  std::optional<int64_t> colocation_micros_per_kw_month;
};

enum class SiteRate { kPowerPrice, kCarbonIntensity };

// A new step of a region's energy price or grid intensity, from `point.from_ms` (0: now) on;
// never dated in the past, so what was metered stays true.
struct AddSiteRate {
  std::string region;
  SiteRate rate = SiteRate::kPowerPrice;
  RatePoint point;
};

struct AddFixedCost {
  FixedCost cost;
};

struct DeleteFixedCost {
  std::string id;
};

struct SetRentalPrice {
  RentalPrice price;
};

// Node pools (core/pools.cc).
struct CreatePool {
  Pool pool;  // Its settings; the core sets the times and counters.
};

// Changes the settings that are set.
struct UpdatePool {
  std::string id;
  std::optional<int> min_nodes;
  std::optional<int> max_nodes;
  std::optional<int64_t> boot_timeout_ms;
  std::optional<int64_t> idle_timeout_ms;
  std::optional<int64_t> cooldown_ms;
};

// Only a pool with no live nodes: scale it to zero first.
struct DeletePool {
  std::string id;
};

struct PoolLaunch {
  std::string pool_node_id;
  std::string name;
  std::string join_token_id;
  std::string token_hash;
};

// The autoscaler asks for new nodes: each gets its own join token, good until the boot timeout.
struct ScaleUpPool {
  std::string pool_id;
  std::vector<PoolLaunch> launches;
  std::string reason;
};

// The autoscaler takes a node away: refused unless the node runs nothing; its node is cordoned in
// the same step, so no work can land on it after the check.
struct RetirePoolNode {
  std::string id;
  std::string reason;
};

enum class PoolNodeOutcome { kCreated, kCreateFailed, kBootTimedOut, kDeleted, kDeleteFailed };

// What a provider answered, or a boot that took too long.
struct RecordPoolNode {
  std::string id;
  PoolNodeOutcome outcome = PoolNodeOutcome::kCreated;
  std::string detail;        // The error, or the reason.
  std::string provider_ref;  // kCreated: what the provider called the node.
};

// Sets (or replaces) the spot price rule of its model and region.
struct SetSpotRule {
  SpotRule rule;
};

struct DeleteSpotRule {
  std::string model;
  std::string region;
};

// The latency table (core/latency.cc): sets the round trip from `from` to `region`, replacing
// the one there is.
struct SetLatency {
  std::string from;
  std::string region;
  int64_t rtt_ms = 0;
};

struct DeleteLatency {
  std::string from;
  std::string region;
};

// Sets (or, with no policy, clears) the idle-stop policy of a project's instances.
struct SetProjectIdle {
  std::string project_id;
  std::optional<IdlePolicy> policy;
};

// The timer: heartbeat deadlines, maximum run times, money, and a scheduling pass.
struct Tick {
  bool post_all = false;  // Posts every tenant's usage so far now (closing the books).
};

using Command =
    std::variant<CreateTenant, CreateProject, DeleteProject, CreateUser, UpdateUser, CreateKey,
                 RevokeKey, CreateJoinToken, RevokeJoinToken, JoinNode, NodeHeartbeat, SetNodeAdmin,
                 RevokeNodeCredential, DeleteNode, CreateInstance, StopInstance, SetQuota,
                 DeleteQuota, CreateReservation, CancelReservation, SetTenantWeight, SetPrice,
                 Topup, SetBilling, Tick, DraftInvoice, FinalizeInvoice, MarkInvoicePaid,
                 VoidInvoice, CreateCreditNote, SetBudget, DeleteBudget, CreateAsset,
                 ChangeAssetEstimate, RetireAsset, SetSite, AddSiteRate, AddFixedCost,
                 DeleteFixedCost, SetRentalPrice, CreatePool, UpdatePool, DeletePool, ScaleUpPool,
                 RetirePoolNode, RecordPoolNode, SetSpotRule, DeleteSpotRule, SetLatency,
                 DeleteLatency, SetProjectIdle, SetBillingDetails, SetRegistryCredential,
                 DeleteRegistryCredential, RequestImagePull>;

}  // namespace allot
