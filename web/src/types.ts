// The shapes allotd answers (only the fields the dashboard reads).

export interface Tenant {
  id: string;
  name: string;
  is_operator: boolean;
  billing: 'prepaid' | 'postpaid';
  credit_limit: string;
  weight: number;
  created_at: string;
}

export interface User {
  id: string;
  name: string;
  email: string;
  role: 'operator-admin' | 'tenant-admin' | 'member' | 'viewer';
  tenant_id: string;
  disabled: boolean;
}

export interface WhoAmI {
  user: User;
  tenant: Tenant;
  key_id: string;
}

export interface Project {
  id: string;
  name: string;
  tenant_id: string;
  created_at: string;
  deleted_at: string | null;
}

export interface Gpu {
  index: number;
  uuid: string;
  name: string;
  model: string;
  memory_bytes: number;
  memory_used_bytes: number;
  utilization_pct: number;
  power_mw: number;
  temperature_c: number;
  energy_mj: number;
  healthy: boolean;
  health_reason: string;
  used_milli: number;
  ecc_errors: number;
  mig_enabled: boolean;
}

export interface NodeInfo {
  id: string;
  name: string;
  state: string;
  admin: string;
  region: string;
  labels: Record<string, string>;
  backend: string;
  agent_version: string;
  cpu_milli: number;
  used_cpu_milli: number;
  runtime: string;
  memory_mib: number;
  used_memory_mib: number;
  joined_at: string;
  last_heartbeat_at: string;
  lost: boolean;
  gpus: Gpu[];
}

export interface InstanceEvent {
  at: string;
  state: string;
  message: string;
}

export interface InstanceSpec {
  command: string[];
  gpus: number;
  gpu_milli: number;
  gpu_models: string[];
  cpu_milli: number;
  memory_mib: number;
  price_class: string;
  region: string;
  regions: string[];
  interactive: boolean;
  nodes: number;
  labels: Record<string, string>;
  max_run_s: number;
  image?: string;
  from_template: string;
  ports?: { port: number; protocol: string; public: boolean }[];
}

// An instance's published ports with their links (GET /v1/instances/{id}/ports).
export interface PortList {
  instance_id: string;
  state: string;
  items: { port: number; protocol: string; public: boolean; path: string; link: string | null; link_expires_at: string | null }[];
}

// An operator's launch template: create-body fields under a name (GET /v1/templates).
export interface LaunchTemplate {
  name: string;
  description: string;
  fields: Record<string, unknown>;
}

export interface Instance {
  id: string;
  state: string;
  reason: string;
  tenant_id: string;
  project_id: string;
  user_id: string;
  node_id: string;
  gpu_indices: number[];
  gpu_uuids: string[];
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  exit_code: number;
  stop_requested: boolean;
  stop_reason: string;
  billed: string;
  energy_kwh: string;
  carbon_kg: string;
  gang_id: string;
  gang_rank: number;
  idle_since: string | null;
  spec: InstanceSpec;
  events?: InstanceEvent[];
}

export interface Logs {
  offset: number;
  next_offset: number;
  size: number;
  data: string;
  ended: boolean;
}

export interface Balance {
  tenant_id: string;
  billing: string;
  credit_limit: string;
  cash: string;
  credits: string;
  held: string;
  unposted: string;
  available: string | null;
  // What of `available` calls to shared services may spend: promotional credit does not pay for them.
  available_for_services: string | null;
  at: string;
}

export interface UsageItem {
  key: string;
  name: string | null;
  gpu_milli_seconds: number;
  gpu_hours: string;
  storage_gb_hours?: string;
  spend: string;
  energy_kwh?: string;
  carbon_kg?: string;
}

export interface Usage {
  from: string;
  to: string;
  group_by: string;
  items: UsageItem[];
  total: { gpu_hours: string; spend: string; energy_kwh?: string; carbon_kg?: string };
  forecast: { month: string; spent: string; burn_per_hour: string; month_end: string };
}

export interface Budget {
  id: string;
  tenant_id: string;
  project_id: string | null;
  amount: string;
  thresholds_pct: number[];
  enforcement: string;
  webhook_url: string | null;
  month: string;
  spend: string;
  reached_pct: number[];
  deleted_at: string | null;
}

export interface AllotEvent {
  seq: number;
  id?: string;
  kind: string;
  tenant_id: string;
  at: string;
  data: Record<string, unknown>;
  delivery?: { state: string; attempts: number; next_attempt_at: string | null; last_status: number };
}

export interface InvoiceLine {
  project_id: string;
  gpu_model: string;
  region: string;
  price_class: string;
  kind?: 'gpu' | 'storage' | 'service';
  gpu_milli_seconds: number;
  gpu_hours: string;
  gb_seconds?: number;
  gb_hours?: string;
  amount: string;
}

export interface Invoice {
  id: string;
  tenant_id: string;
  month: string;
  status: 'draft' | 'final' | 'paid' | 'void';
  number: string | null;
  lines: InvoiceLine[];
  subtotal: string;
  credits: string;
  total: string;
  credited: string;
  paid: string; // What the recorded payment paid in.
  amount_due: string;
  created_at: string;
  drafted_at: string;
  finalized_at: string | null;
  paid_at: string | null;
  voided_at: string | null;
}

// A GPU price, or (gpu_model "storage") a region's storage price with only storage_gb_month.
export interface Price {
  gpu_model: string;
  region: string;
  price_class?: string;
  gpu_hour?: string;
  cpu_hour?: string;
  memory_gib_hour?: string;
  storage_gb_month?: string;
  effective_at: string;
  in_force: boolean;
}

export interface RegionModel {
  gpu_model: string;
  gpus: number;
  free_gpus: number;
  on_demand_gpu_hour: string | null;
  spot_gpu_hour: string | null;
  spot_from_on_demand: boolean;
}

export interface Region {
  region: string;
  models: RegionModel[];
  carbon_g_per_kwh: number | null;
  pue: string | null;
  latency_ms: Record<string, number>;
}

export interface ReportGroup {
  key: string;
  nodes: number;
  gpus: number;
  revenue: string;
  depreciation: string;
  retirement_loss: string;
  interest: string;
  lease: string;
  power: string;
  colocation: string;
  other: string;
  costs: string;
  margin: string;
  principal_repaid: string;
  energy_kwh: string;
  carbon_kg: string;
  available_gpu_hours: string;
  allocated_gpu_hours: string;
  idle_gpu_hours: string;
  utilisation: string;
  idle_cost: string;
  price_per_gpu_hour: string;
  break_even_utilisation: string | null;
  what_if?: { revenue: string; margin: string };
}

export interface Report {
  month: string;
  // While the month runs: the report is the month to date (through now), and the totals carry
  // the whole month at the rate so far.
  through: string;
  month_to_date: boolean;
  note?: string;
  by: string;
  groups: ReportGroup[];
  totals: {
    revenue: string;
    credits: string;
    net_revenue: string;
    costs: string;
    margin: string;
    whole_month_projected?: { net_revenue: string; costs: string; margin: string };
  };
}

export interface PaybackItem {
  asset_id: string;
  name: string;
  cost: string;
  recovered: string;
  last_month_margin: string;
  payback_month: string | null;
  projected: boolean;
}

export interface BuyOrRentItem {
  gpu_model: string;
  owned_costs: string;
  allocated_gpu_hours: string;
  available_gpu_hours: string;
  owned_per_used_gpu_hour: string;
  quotes: { provider: string; price_per_gpu_hour: string; used: string; capacity: string }[];
}

export interface Volume {
  id: string;
  tenant_id: string;
  project_id: string;
  name: string;
  region: string;
  backend: 'local' | 'nfs';
  size_gb: number;
  node_id: string | null;
  mounted_by: string[];
  created_at: string;
  deleted_at: string | null;
}

export interface ServiceReplica {
  instance_id: string;
  revision: number;
  state: string;
  reason: string;
  node_id: string | null;
  ready: boolean;
  in_flight: number;
  served: number;
  last_probe: string | null;
  ready_since: string | null;
  draining: boolean;
}

export interface Service {
  id: string;
  tenant_id: string;
  project_id: string;
  name: string;
  model: string | null;
  url: string;
  min_replicas: number;
  max_replicas: number;
  target_rps: number;
  target_concurrency: number;
  scale_to_zero_after_s: number;
  shared: boolean;
  price_per_request: string;
  price_per_1k_tokens: string;
  revision: number;
  serving_revision: number | null;
  rollout: { state: string; reason: string };
  desired: number;
  ready_replicas: number;
  scale_reason: string;
  restarts: number;
  revisions: { number: number; port: number; readiness: string; image: string; created_at: string }[];
  replicas: ServiceReplica[];
  traffic: { rps: number; rps_recent: number; concurrency: number; in_flight: number; held: number; last_request_at: string | null };
  created_at: string;
}

export interface ServiceCallerUse {
  tenant_id: string;
  tenant: string | null;
  requests: number;
  tokens: number;
  malformed: number;
  failed: number;
  charged: string;
  paid: string;
  owed: string;
}

export interface ServiceMargin {
  requests: number;
  tokens: number;
  malformed: number;
  revenue: string;
  paid: string;
  owed: string;
  replica_gpu_hours: string;
  gpu_cost: string;
  margin: string;
  callers: ServiceCallerUse[];
}
