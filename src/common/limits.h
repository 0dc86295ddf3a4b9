// Every limit in one place, each with the reason for its value. A request past a limit is refused
// with kLimitExceeded or kBodyTooLarge; nothing grows without bound.
#pragma once

#include <cstddef>
#include <cstdint>

namespace allot::limits {

// Request bodies are small JSON documents; 1 MiB leaves room for long commands and environments
// while bounding what one request can make the daemon buffer.
inline constexpr size_t kMaxBodyBytes = 1 << 20;

// Headers beyond 16 KiB are a mistake or an attack.
inline constexpr size_t kMaxHeaderBytes = 16 << 10;
// What a connection buffers of a peer's bytes before a parser takes them: a header, a chunked
// body's trailer or a chunk's line must fit whole. Under the 64 KiB that Beast's field container
// takes for a name or a value (past it, it throws), and twice the header's limit.
inline constexpr size_t kMaxConnectionBufferBytes = 32 << 10;

// Lists are paged; 1000 rows is about 200 KiB of JSON, enough for a screen or a script's batch.
inline constexpr int kDefaultPageSize = 100;
inline constexpr int kMaxPageSize = 1000;

// Names are labels for people, not documents.
inline constexpr size_t kMaxNameBytes = 128;
inline constexpr size_t kMaxEmailBytes = 254;  // RFC 5321's path limit.

// Sized for a large operator: 10,000 tenants, each with up to 1,000 projects and 1,000 users.
inline constexpr size_t kMaxTenants = 10'000;
inline constexpr size_t kMaxProjectsPerTenant = 1'000;
inline constexpr size_t kMaxUsersPerTenant = 1'000;
// A user rotates keys; 50 live keys covers every machine and script one person runs.
inline constexpr size_t kMaxKeysPerUser = 50;

// A key must carry at least 128 bits of secret to be unguessable; its text is at most 256 bytes.
inline constexpr size_t kMinKeyBytes = 24;
inline constexpr size_t kMaxKeyBytes = 256;

// The largest GPU servers hold 8 GPUs; an instance (or each member of a gang) spans one node.
inline constexpr int kMaxGpusPerInstance = 8;
// A node agent reports at most this many GPUs.
inline constexpr size_t kMaxGpusPerNode = 16;
// Members of one gang (a multi-node instance), one per node.
inline constexpr int kMaxGangNodes = 64;
// Quotas and reservations per tenant, and a tenant's fair-share weight.
inline constexpr size_t kMaxQuotasPerTenant = 256;
inline constexpr size_t kMaxReservationsPerTenant = 256;
inline constexpr int64_t kMaxTenantWeight = 1'000;
// One top-up or credit limit: a billion currency units (1e15 micro-units), far above any real
// payment, while thousands of them still fit a balance in int64 micro-units.
inline constexpr int64_t kMaxMoneyMicros = 1'000'000'000'000'000;
// An idempotency key's length.
inline constexpr size_t kMaxIdempotencyKeyBytes = 64;
// Instances a tenant may have queued or running at once, by default (allotd's
// `max_active_instances_per_tenant`), and the most an operator may allow: the queue's passes cost
// the same at a million queued (core/cluster/queue.cc), and a million instances' rows still load
// in a restart of well under a minute.
inline constexpr int64_t kDefaultMaxActiveInstancesPerTenant = 10'000;
inline constexpr int64_t kMaxActiveInstancesPerTenant = 1'000'000;
// A command line of 1,024 arguments is far beyond any real launcher.
inline constexpr size_t kMaxCommandArgs = 1'024;
// A workload's environment: far more variables and bytes than any real launcher sets, and well
// under what a kernel's argument and environment space (about 2 MiB) takes at exec.
inline constexpr size_t kMaxEnvVariables = 256;
inline constexpr size_t kMaxEnvNameBytes = 256;
inline constexpr size_t kMaxEnvBytes = 64 << 10;
// Log bytes an agent ships per instance per heartbeat, and an API log read returns at most.
inline constexpr size_t kMaxLogChunkBytes = 64 << 10;
// An instance's output that the store keeps: its newest 64 MiB (past it, the oldest is dropped
// and a read says so). And what an agent lets wait on the node's disk for shipping: past 16 MiB
// behind, it drops all but the newest 1 MiB of the backlog, and the controller is told the gap.
inline constexpr size_t kMaxStoredLogBytes = 64 << 20;
inline constexpr int64_t kMaxLogBacklogBytes = 16 << 20;
inline constexpr int64_t kLogBacklogKeptBytes = 1 << 20;

// Heartbeats that only bring readings (GPU telemetry, metered energy) are written with the next
// batch that commits anyway, or this long after the first of them at the latest: what a crash
// can lose of them, and what the nodes' next heartbeats make up.
inline constexpr int64_t kReadingsWriteMs = 10'000;

// Group commit: at most this many requests share one store transaction, so one batch's latency
// stays bounded while a burst still amortises the fsync.
inline constexpr size_t kMaxBatchCommands = 4096;
// Requests waiting for the core beyond this many are refused with kUnavailable (backpressure).
inline constexpr size_t kMaxQueuedRequests = 65'536;

// A request line longer than 8 KiB is refused with 414 (the most common limit of servers and
// proxies); every id and filter the API takes fits in far less.
inline constexpr size_t kMaxTargetBytes = 8 << 10;

// HTTP connections (defaults of allotd's settings). Each costs a coroutine, a buffer and a file
// descriptor; allotd raises its descriptor limit at start and keeps this many below it. When the
// cap is reached, the connection that has waited longest for its request (a slow client's, never
// an authenticated one's) is closed to make room, so that an attack cannot lock agents and the
// operator out.
inline constexpr int64_t kDefaultMaxConnections = 10'000;
// Descriptors kept back from connections for the store, logs and webhooks.
inline constexpr int64_t kReservedDescriptors = 512;
// One address may hold this many: a NAT gateway of busy users, yet 40 addresses' worth of
// connections to fill the default cap.
inline constexpr int64_t kDefaultMaxConnectionsPerAddress = 256;
// A client has this long to send a request's header, counted from the connection's opening (on a
// kept-alive one, from the next request's first byte); 408 after. A header is one packet or a
// few, so ten seconds covers any real network.
inline constexpr int64_t kDefaultHeaderTimeoutMs = 10'000;
// And this long for its body: the 1 MiB limit at 35 KB/s.
inline constexpr int64_t kDefaultBodyTimeoutMs = 30'000;
// An idle keep-alive connection is closed after this long.
inline constexpr int64_t kDefaultIdleTimeoutMs = 60'000;

// Budget alerts: a handful of thresholds is what anyone reads; up to ten times the amount lets a
// tenant hear how far past it they went.
inline constexpr size_t kMaxBudgetThresholds = 10;
inline constexpr int64_t kMaxBudgetThresholdPct = 1'000;
// Webhooks: a URL as long as browsers accept, and a secret long enough to be unguessable but
// bounded, since every delivery is signed with it.
inline constexpr size_t kMaxWebhookUrlBytes = 2'048;

// The operator's books. A useful life or a loan or lease term over 50 years is a typing error.
inline constexpr int kMaxLifeMonths = 600;
// PUE above 5 is no data centre anyone runs GPUs in; below 1 is impossible.
inline constexpr int64_t kMaxPueMilli = 5'000;
// A rate over 100 % a year is a typing error (ppm: parts per million).
inline constexpr int64_t kMaxAnnualRatePpm = 1'000'000;
// Declining balance beyond 10x straight-line's rate writes an asset off in a few months.
inline constexpr int64_t kMaxDecliningFactorMilli = 10'000;
// The nodes of one asset (a batch bought together), and assets and fixed costs in all.
inline constexpr size_t kMaxNodesPerAsset = 1'024;
inline constexpr size_t kMaxAssets = 100'000;
inline constexpr size_t kMaxFixedCosts = 10'000;
// Steps of one region's power price or grid intensity series (hourly for over a year).
inline constexpr size_t kMaxRateSteps = 10'000;
inline constexpr size_t kMinWebhookSecretBytes = 16;
inline constexpr size_t kMaxWebhookSecretBytes = 256;
// Events a listing returns at most, like any page.
inline constexpr int kMaxEventsPage = kMaxPageSize;
// Node pools: how many, how large, and the bounds of their timers (a day at most).
inline constexpr size_t kMaxPools = 1'000;
inline constexpr int kMaxPoolNodes = 1'000;
inline constexpr int64_t kMaxPoolTimerMs = 86'400'000;
inline constexpr size_t kMaxPoolCommandBytes = 4'096;
// A pool node's offer: 1,024 CPUs and 16 TiB of memory at most.
inline constexpr int64_t kMaxPoolCpuMilli = 1'024'000;
inline constexpr int64_t kMaxPoolMemoryMib = 16'777'216;
// The latency table: a round trip over a minute is a typing error (the far side of the planet is
// under 400 ms); 10,000 entries covers a hundred client locations times a hundred regions.
inline constexpr int64_t kMaxLatencyMs = 60'000;
inline constexpr size_t kMaxLatencyEntries = 10'000;
// Volumes: live ones per tenant, mounts per instance, a name's and a mount path's length, and the
// largest size the core takes (allotd's max_volume_gb may set a lower one).
inline constexpr size_t kMaxVolumesPerTenant = 256;
inline constexpr size_t kMaxVolumeMounts = 8;
// Ports one instance may publish (api/launch.h).
inline constexpr size_t kMaxPublishedPorts = 8;
inline constexpr size_t kMaxVolumeName = 63;
inline constexpr size_t kMaxVolumePath = 1'024;
inline constexpr int64_t kMaxVolumeGb = 1'000'000;
// Services: live ones per tenant, replicas one may have, revisions kept, a name's and a model
// name's length, a readiness path's, and the targets the autoscaler takes.
inline constexpr size_t kMaxServicesPerTenant = 64;
inline constexpr int kMaxServiceReplicas = 64;
inline constexpr size_t kServiceRevisionsKept = 10;
inline constexpr size_t kMaxServiceName = 63;
inline constexpr size_t kMaxServiceModel = 128;
inline constexpr size_t kMaxReadinessPath = 1'024;
inline constexpr int kMaxServiceTarget = 100'000;
inline constexpr size_t kMaxServiceKeys = 1'000;  // Live keys of one service.
// One report of services' use: at most this many counts, each at most this much.
inline constexpr size_t kMaxServiceUseCounts = 10'000;
inline constexpr int64_t kMaxServiceUseCount = 1'000'000'000'000;
inline constexpr int64_t kMaxScaleToZeroMs = int64_t{30} * 24 * 3'600'000;
inline constexpr int64_t kMinScaleToZeroMs = 10'000;
inline constexpr int64_t kMaxReadyTimeoutMs = int64_t{24} * 3'600'000;
// Registry credentials one tenant may hold.
inline constexpr size_t kMaxRegistryCredentials = 64;
// The ports a gang member's container publishes on its node, for its peers on other nodes: each
// member gets kGangPortsPerMember of them from kGangPortFirst on, kGangPortSlots members a node.
// 28000-29023 lies below Linux's ephemeral ports (32768-60999 by default), where any outgoing
// connection on the node could hold one, and below Kubernetes' node ports (30000-32767).
inline constexpr int kGangPortFirst = 28'000;
inline constexpr int kGangPortsPerMember = 16;
inline constexpr int kGangPortSlots = 64;
inline constexpr int kGangPortLast = kGangPortFirst + kGangPortSlots * kGangPortsPerMember - 1;
// Pre-pulls not yet finished on every node they were asked of.
inline constexpr size_t kMaxOpenImagePulls = 100;
// Images a node's report may list; a node holding more reports its newest.
inline constexpr size_t kMaxNodeImages = 500;
// Regions one request may name as allowed (data residency): more than any operator runs.
inline constexpr size_t kMaxAllowedRegions = 64;

// Spot price rules: one per GPU model and region is plenty; a curve of 16 points draws any shape
// an operator would want; prices on it stay under 1,000,000 per GPU-hour so that interpolating
// them in 64 bits cannot overflow; looking more often than every second would only add history.
inline constexpr size_t kMaxSpotRules = 1'000;
inline constexpr size_t kMaxSpotCurvePoints = 16;
inline constexpr int64_t kMaxSpotPriceMicros = 1'000'000'000'000;
inline constexpr int64_t kMinSpotIntervalMs = 1'000;
inline constexpr int64_t kMaxSpotIntervalMs = 86'400'000;

// Idle stop: a window under a minute would stop work in an ordinary pause (loading data, writing
// a checkpoint), so that is the default floor (the operator may lower it, to 1 s at least); over
// a week, the policy protects nothing.
inline constexpr int64_t kDefaultMinIdleWindowS = 60;
inline constexpr int64_t kMaxIdleWindowS = int64_t{7} * 86'400;
// Payment terms longer than a year are not terms but a loan; the bound also keeps a due date
// (issue + terms) far from overflowing.
inline constexpr int64_t kMaxPaymentTermsDays = 365;

// A tenant's billing details are printed on its invoices: a line (legal name, tax id, email) fits
// any real one in 200 bytes, an address in ten such lines.
inline constexpr size_t kMaxBillingLineBytes = 200;
inline constexpr size_t kMaxBillingAddressBytes = 2'000;

// Pre-scaling from the demand forecast: a day ahead is as far as a pool is worth growing for (a
// node boots in minutes), and eight weeks of hourly history is more than the daily season needs
// while keeping the hourly fit (a grid search over the whole series) well under a second.
inline constexpr int64_t kMaxForecastLeadH = 24;
inline constexpr int64_t kMaxForecastHistoryH = int64_t{8} * 7 * 24;

// The dashboard's files: the largest one served (the bundle is a few hundred KiB).
inline constexpr int64_t kMaxWebFileBytes = int64_t{16} << 20;

}  // namespace allot::limits
