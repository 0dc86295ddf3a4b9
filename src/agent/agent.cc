#include "agent/agent.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/runtime/state_file.h"
#include "common/base64.h"
#include "common/limits.h"

#ifndef ALLOT_VERSION
#define ALLOT_VERSION "dev"
#endif

namespace allot::agent {
namespace {

using nlohmann::json;

int64_t file_size(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

std::string read_range(const std::string& path, int64_t offset, int64_t limit) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(offset);
  std::string data(static_cast<size_t>(limit), '\0');
  in.read(data.data(), limit);
  data.resize(static_cast<size_t>(in.gcount()));
  return data;
}

json gpu_inventory(const GpuBackend& backend) {
  json gpus = json::array();
  for (const GpuInfo& g : backend.gpus()) {
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"name", g.name},
                    {"model", g.model},
                    {"memory_bytes", g.memory_bytes},
                    {"pci_bus_id", g.pci_bus_id},
                    {"mig_enabled", g.mig_enabled}});
  }
  return gpus;
}

json telemetry(GpuBackend& backend, TimeMs now_ms) {
  json out = json::array();
  const auto samples = backend.sample(now_ms);
  for (size_t i = 0; i < samples.size(); ++i) {
    const GpuSample& s = samples[i];
    json gpu = {{"index", static_cast<int>(i)},
                {"memory_used_bytes", s.memory_used_bytes},
                {"power_mw", s.power_mw},
                {"energy_mj", s.energy_mj},
                {"temperature_c", s.temperature_c},
                {"ecc_errors", s.ecc_errors},
                {"lost", s.lost},
                {"xids", s.xids}};
    // A utilisation that was not read is left out, never sent as 0: the controller takes a
    // missing reading as busy.
    if (s.utilization_read && !s.lost) gpu["utilization_pct"] = s.utilization_pct;
    out.push_back(std::move(gpu));
  }
  return out;
}

}  // namespace

Agent::Agent(AgentConfig config, std::unique_ptr<GpuBackend> gpus, std::unique_ptr<Runtime> runtime,
             std::unique_ptr<ImageStore> images, const Clock& clock)
    : config_(std::move(config)),
      gpus_(std::move(gpus)),
      runtime_(std::move(runtime)),
      images_(std::move(images)),
      clock_(clock) {}

Status Agent::ensure_credential() {
  const auto path = std::filesystem::path(config_.state_dir) / "node.json";
  if (std::filesystem::exists(path)) {
    std::ifstream in(path);
    const json saved = json::parse(in, nullptr, false);
    if (saved.is_object() && saved.contains("credential")) {
      // The controller places tenants' work by the runtime a node joined with: a node that
      // changed it would be trusted for walls it no longer has.
      const std::string joined_with = saved.value("runtime", "process");
      if (joined_with != config_.runtime) {
        return fail(ErrorCode::kConflict,
                    fmt::format("this node joined with the {} runtime and now runs the {} one: "
                                "delete the node (allot nodes delete) and {} to join it again",
                                joined_with, config_.runtime, path.string()));
      }
      node_id_ = saved.value("node_id", "");
      credential_ = saved.value("credential", "");
      return {};
    }
  }
  if (config_.join_token.empty()) {
    return fail(ErrorCode::kUnauthenticated, "no saved credential and no --join-token to join");
  }
  json inventory = {{"name", config_.name},
                    {"region", config_.region},
                    {"labels", config_.labels},
                    {"cpu_milli", config_.cpu_milli},
                    {"memory_mib", config_.memory_mib},
                    {"backend", gpus_->kind()},
                    {"runtime", config_.runtime},
                    {"agent_version", ALLOT_VERSION},
                    {"gpus", gpu_inventory(*gpus_)}};
  if (!config_.address.empty()) inventory["address"] = config_.address;
  if (!config_.gpu_problem.empty()) inventory["gpu_problem"] = config_.gpu_problem;
  auto response = client_->send("POST", "/v1/agent/join", inventory.dump(), config_.join_token);
  if (!response) return std::unexpected(response.error());
  const json answer = json::parse(response->body, nullptr, false);
  if (response->status != 201) {
    const std::string message = answer.is_object() ? answer["error"].value("message", "") : "";
    return fail(response->status == 401 ? ErrorCode::kUnauthenticated : ErrorCode::kUnavailable,
                fmt::format("join refused ({}): {}", response->status, message));
  }
  node_id_ = answer.value("node_id", "");
  credential_ = answer.value("credential", "");
  // The credential is the node's password: readable by the agent's user alone from the moment the
  // file exists, and on disk before it replaces anything.
  const json saved = {
      {"node_id", node_id_}, {"credential", credential_}, {"runtime", config_.runtime}};
  auto written =
      write_file_atomically(path.string(), path.string() + ".tmp", saved.dump() + "\n", 0600);
  // Joining again would make a second node: an agent that cannot keep its credential stops.
  if (!written) return fail(ErrorCode::kInternal, "joined but " + written.error().message);
  spdlog::info("msg=\"joined\" node_id={}", node_id_);
  return {};
}

json Agent::workload_reports(std::vector<WorkloadStatus>& statuses) {
  json out = json::array();
  for (const WorkloadStatus& s : statuses) {
    out.push_back({{"instance_id", s.instance_id},
                   {"state", workload_state_name(s.state)},
                   {"exit_code", s.exit_code},
                   {"signal", s.signal},
                   {"message", s.message},
                   {"run", s.run}});
    last_reported_[s.instance_id] = std::string(workload_state_name(s.state));
  }
  return out;
}

json Agent::log_chunks(const std::vector<WorkloadStatus>& statuses) {
  json out = json::array();
  for (const WorkloadStatus& s : statuses) {
    int64_t offset = shipped_.contains(s.instance_id) ? shipped_[s.instance_id] : 0;
    // An instance that writes faster than its output is shipped keeps only its newest backlog:
    // the rest is dropped, and the controller told, so that neither the node's disk nor the
    // store fills.
    const int64_t written = file_size(s.log_path);
    const bool dropping = written - offset > limits::kMaxLogBacklogBytes;
    if (dropping) offset = written - limits::kLogBacklogKeptBytes;
    release_shipped(s.instance_id, s.log_path, offset);
    const auto limit = static_cast<int64_t>(limits::kMaxLogChunkBytes);
    std::string data = read_range(s.log_path, offset, limit);
    if (data.empty()) continue;
    json chunk = {
        {"instance_id", s.instance_id}, {"offset", offset}, {"data", base64_encode(data)}};
    if (dropping) chunk["dropped"] = true;
    out.push_back(std::move(chunk));
  }
  return out;
}

// Frees the node's disk of what was shipped (or dropped) of a log long ago: the file keeps its
// size and offsets, its old blocks become a hole. What was shipped in the last 16 MiB stays, for
// a controller that asks again after a lost write.
void Agent::release_shipped(const std::string& instance_id, const std::string& log_path,
                            int64_t shipped) {
  constexpr int64_t kBlock = 1 << 20;
  const int64_t upto = (shipped - limits::kMaxLogBacklogBytes) / kBlock * kBlock;
  int64_t& released = released_[instance_id];
  if (upto <= released + 4 * kBlock) return;
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, upto) == 0) released = upto;
  ::close(fd);
}

void Agent::apply_work(const json& work) {
  interval_ms_ = work.value("heartbeat_interval_ms", interval_ms_);
  generation_ = work.value("generation", int64_t{0});
  const json offsets = work.value("log_offsets", json::object());
  for (const auto& [id, size] : offsets.items()) shipped_[id] = size.get<int64_t>();
  std::set<std::string> known;
  for (const WorkloadStatus& s : runtime_->poll()) known.insert(s.instance_id);
  for (const auto& [id, status] : refused_) known.insert(id);
  bool started = false;
  const json run = work.value("run", json::array());
  for (const json& item : run) {
    const std::string id = item.value("instance_id", "");
    if (known.contains(id)) continue;
    WorkloadSpec spec{.instance_id = id,
                      .argv = item.value("command", std::vector<std::string>{}),
                      .env = item.value("env", std::map<std::string, std::string>{}),
                      .gpu_uuids = item.value("gpu_uuids", std::vector<std::string>{}),
                      .cpu_milli = item.value("cpu_milli", int64_t{0}),
                      .memory_mib = item.value("memory_mib", int64_t{0}),
                      .gpu_milli = item.value("gpu_milli", int64_t{0}),
                      .image = item.value("image", ""),
                      .tenant_id = item.value("tenant_id", ""),
                      .registry_username = item.value("registry_username", ""),
                      .registry_password = item.value("registry_password", ""),
                      .gang_port = item.value("gang_port", 0),
                      .gang_peers = item.value("gang_peers", std::vector<std::string>{}),
                      .run = item.value("run", 0)};
    // Its volumes' directories are made here; one that cannot be fails the start.
    const auto status = [&]() -> Result<WorkloadStatus> {
      auto binds = volume_binds(item.value("volumes", json::array()), config_.volumes,
                                config_.runtime == "container", spec.env);
      if (!binds) return std::unexpected(binds.error());
      spec.volumes = *std::move(binds);
      return runtime_->start(spec);
    }();
    if (!status) {
      spdlog::error("msg=\"cannot start\" instance={} error=\"{}\"", id, status.error().message);
      refused_[id] = WorkloadStatus{.instance_id = id,
                                    .state = WorkloadState::kFailedToStart,
                                    .started_at_ms = clock_.now_ms(),
                                    .ended_at_ms = clock_.now_ms(),
                                    .message = status.error().message,
                                    .run = spec.run};
    }
    started = true;
  }
  const json stop = work.value("stop", json::array());
  for (const json& item : stop) {
    const std::string id = item.value("instance_id", "");
    const StopNotice notice{.reason = item.value("reason", "stopped"),
                            .message = item.value("message", "")};
    const Status told = runtime_->stop(
        id, std::chrono::milliseconds(item.value("grace_ms", int64_t{10'000})), notice);
    if (!told) {
      spdlog::warn("msg=\"stopping without a stop notice\" instance={} error=\"{}\"", id,
                   told.error().message);
    }
  }
  const json forget = work.value("forget", json::array());
  for (const json& id : forget) {
    const std::string instance_id = id.get<std::string>();
    refused_.erase(instance_id);
    for (const WorkloadStatus& s : runtime_->poll()) {
      // Forget only once the controller holds the whole output.
      if (s.instance_id == instance_id && file_size(s.log_path) <= shipped_[instance_id]) {
        runtime_->forget(instance_id);
        shipped_.erase(instance_id);
        released_.erase(instance_id);
        last_reported_.erase(instance_id);
      }
    }
  }
  if (images_) {
    std::set<std::string> listed;
    for (const json& item : work.value("pull", json::array())) {
      images_->want(item);
      listed.insert(item.value("pull_id", ""));
    }
    images_->keep_only(listed);
  }
  if (started) wake();  // Report the new workloads as running at once.
}

Result<bool> Agent::heartbeat() {
  std::vector<WorkloadStatus> statuses = runtime_->poll();
  for (const auto& [id, status] : refused_) statuses.push_back(status);
  json body = {{"node_id", node_id_},
               {"logs", log_chunks(statuses)},
               {"workloads", workload_reports(statuses)}};
  // Every report carries the GPUs' readings, so that a workload's start and end fall on an energy
  // reading and its energy is exactly the counters' deltas while it ran.
  std::set<std::string> held;
  std::set<std::string> running;
  for (const WorkloadStatus& s : statuses) {
    if (s.state == WorkloadState::kRunning || s.state == WorkloadState::kStarting) {
      held.insert(s.gpu_uuids.begin(), s.gpu_uuids.end());
    }
    if (s.state == WorkloadState::kRunning) running.insert(s.instance_id);
  }
  if (tunnel_) tunnel_->set_running(std::move(running));
  gpus_->set_held(held);
  body["gpus"] = telemetry(*gpus_, clock_.now_ms());
  if (!config_.gpu_problem.empty()) body["gpu_problem"] = config_.gpu_problem;
  if (images_) {
    body["pulls"] = images_->reports();
    if (auto listing = images_->take_listing()) unsent_listing_ = std::move(listing);
    if (unsent_listing_) body["images"] = *unsent_listing_;
  }
  auto response = client_->send("POST", "/v1/agent/heartbeat", body.dump(), credential_);
  if (!response) return std::unexpected(response.error());
  if (response->status == 200) unsent_listing_.reset();
  if (response->status == 401) return false;
  if (response->status != 200) {
    return fail(ErrorCode::kUnavailable,
                fmt::format("heartbeat answered {}: {}", response->status, response->body));
  }
  try {
    apply_work(json::parse(response->body));
  } catch (const json::exception& e) {
    return fail(ErrorCode::kUnavailable, std::string("unreadable heartbeat answer: ") + e.what());
  }
  return true;
}

void Agent::wake() {
  std::lock_guard lock(mutex_);
  wake_ = true;
  woken_.notify_one();
}

void Agent::stop() {
  stopping_ = true;
  wake();
}

void Agent::wait_loop() {
  auto client = HttpClient::connect_to(config_.server);
  if (!client) return;
  while (!stopping_) {
    const int64_t seen = generation_;
    if (seen < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    auto response =
        (*client)->send("POST", "/v1/agent/wait", json{{"generation", seen}}.dump(), credential_);
    if (!response || response->status != 200) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    const json answer = json::parse(response->body, nullptr, false);
    if (answer.is_object() && answer.value("generation", int64_t{0}) > seen) wake();
  }
}

int Agent::run() {
  auto client = HttpClient::connect_to(config_.server);
  if (!client) {
    spdlog::critical("msg=\"bad server\" error=\"{}\"", client.error().message);
    return 2;
  }
  client_ = std::move(*client);
  while (!stopping_) {
    auto ok = ensure_credential();
    if (ok) break;
    spdlog::error("msg=\"cannot join\" error=\"{}\"", ok.error().message);
    if (ok.error().code != ErrorCode::kUnavailable) return 1;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  tunnel_ = std::make_unique<Tunnel>(
      [client = client_.get()] { return client->current_url(); }, runtime_->dialer(),
      [runtime = runtime_.get()](const std::string& instance, const std::vector<std::string>& argv,
                                 bool tty) { return runtime->exec_argv(instance, argv, tty); });
  tunnel_->start(credential_);
  std::thread waiter([this] { wait_loop(); });
  waiter.detach();  // It may sit in a long poll; the process ends without it.
  TimeMs last_beat_ms = 0;
  while (!stopping_) {
    auto beat = heartbeat();
    if (beat && !*beat) {
      spdlog::critical("msg=\"the controller refuses this node's credential\" node_id={}",
                       node_id_);
      return 1;
    }
    if (!beat) {
      spdlog::warn("msg=\"heartbeat failed\" error=\"{}\"", beat.error().message);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    last_beat_ms = clock_.now_ms();
    // Until the next report: woken by the controller, by a workload that changed, or by time.
    std::unique_lock lock(mutex_);
    while (!wake_ && !stopping_ && clock_.now_ms() - last_beat_ms < interval_ms_) {
      woken_.wait_for(lock, std::chrono::milliseconds(50));
      if (wake_) break;
      lock.unlock();
      bool changed = false;
      for (const WorkloadStatus& s : runtime_->poll()) {
        auto it = last_reported_.find(s.instance_id);
        changed |= it == last_reported_.end() || it->second != workload_state_name(s.state);
      }
      lock.lock();
      if (changed) break;
    }
    wake_ = false;
  }
  runtime_->close();
  return 0;
}

}  // namespace allot::agent
