// allotd: wires the config, store, core, service, API and HTTP server together.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "api/cors.h"
#include "api/http_server.h"
#include "api/reply.h"
#include "common/signals.h"
#include "daemon/config.h"
#include "daemon/data_dir.h"
#include "daemon/leader.h"
#include "daemon/replica.h"

#ifndef ALLOT_VERSION
#define ALLOT_VERSION "dev"
#endif

namespace allot {
namespace {

// Raises the descriptor limit to what the system allows and returns the HTTP server's settings,
// its connection cap kept below that limit: running out of descriptors would refuse agents too.
HttpServerOptions http_options(const DaemonConfig& config) {
  rlimit files{};
  int64_t descriptors = config.http_max_connections + limits::kReservedDescriptors;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
    const auto wanted = static_cast<rlim_t>(descriptors);
    files.rlim_cur = files.rlim_max == RLIM_INFINITY ? std::max(files.rlim_cur, wanted)
                                                     : std::max(files.rlim_cur, files.rlim_max);
    (void)setrlimit(RLIMIT_NOFILE, &files);
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
      descriptors = std::min(descriptors, static_cast<int64_t>(files.rlim_cur));
    }
  }
  const int64_t cap = std::max<int64_t>(1, descriptors - limits::kReservedDescriptors);
  if (cap < config.http_max_connections) {
    spdlog::warn("msg=\"descriptor limit lowers the connection cap\" max_connections={}", cap);
  }
  return HttpServerOptions{.header_timeout_ms = config.http_header_timeout_ms,
                           .body_timeout_ms = config.http_body_timeout_ms,
                           .idle_timeout_ms = config.http_idle_timeout_ms,
                           .max_connections = std::min(cap, config.http_max_connections),
                           .max_connections_per_address = config.http_max_connections_per_address};
}

void setup_logging(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt("allotd");
  logger->set_pattern("ts=%Y-%m-%dT%H:%M:%S.%eZ level=%l %v", spdlog::pattern_time_type::utc);
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

// Writes the bound port to the configured file, through a rename so that readers never see half.
void write_port_file(const DaemonConfig& config, uint16_t port) {
  if (config.port_file.empty()) return;
  const std::string temp = config.port_file + ".tmp";
  std::ofstream(temp) << port << "\n";
  std::filesystem::rename(temp, config.port_file);
}

void announce(const std::optional<std::string>& first_key, const std::string& url) {
  if (first_key && first_key->empty()) {
    std::fprintf(stdout, "operator admin made, with the key given in ALLOT_ADMIN_KEY\n");
  } else if (first_key) {
    // Shown once: only its hash is kept.
    std::fprintf(stdout, "operator admin key (shown once): %s\n", first_key->c_str());
  }
  std::fprintf(stdout, "allotd %s listening on %s\n", ALLOT_VERSION, url.c_str());
  std::fflush(stdout);
}

boost::asio::awaitable<void> nothing_to_do() { co_return; }

// A single allotd: it leads from the start.
int run_single(const DaemonConfig& config, const sigset_t& stop_signals) {
  Metrics metrics;
  const SystemClock clock;
  auto leader = Leader::open(config, metrics, clock, std::nullopt, ALLOT_VERSION);
  if (!leader) {
    spdlog::critical("msg=\"cannot start\" error=\"{}\"", leader.error().message);
    return leader.error().code == ErrorCode::kInvalidArgument ? 2 : 1;
  }
  App& app = (*leader)->app();
  auto server = HttpServer::bind(
      config.listen_host, config.listen_port,
      [&app](HttpRequest request, Responder respond) {
        app.handle(std::move(request), std::move(respond));
      },
      http_options(config));
  if (!server) {
    spdlog::critical("msg=\"cannot listen\" error=\"{}\"", server.error().message);
    return 1;
  }
  const std::string url = fmt::format("http://{}:{}", config.listen_host, (*server)->port());
  (*server)->repeat(config.service_probe_interval_ms, [&app] { return app.probe_services(); });
  announce((*leader)->first_key(), url);
  write_port_file(config, (*server)->port());
  (*leader)->start_timers(url);
  // SIGTERM and SIGINT are blocked in every thread and taken by this one, which asks the server to
  // finish what is in flight.
  std::thread signals([&server, &leader, &stop_signals] {
    const int signal = wait_for_stop_signal(stop_signals);
    spdlog::info("msg=\"stopping\" signal={}", signal);
    (*leader)->release_parked();
    (*server)->stop();
  });
  (*server)->run();
  signals.join();
  leader->reset();
  spdlog::info("msg=\"stopped\"");
  return 0;
}

// Checks that this replica's secrets key is the one the others use: each opens a value the
// first sealed. A replica with another key could not open tenants' registry passwords.
Status check_shared_secrets(const DaemonConfig& config, Lease& lease) {
  std::error_code made;
  std::filesystem::create_directories(config.data_dir, made);
  auto sealer =
      Sealer::open_key_file((std::filesystem::path(config.data_dir) / "secrets.key").string());
  if (!sealer) return std::unexpected(sealer.error());
  constexpr std::string_view kContext = "replica secrets check";
  auto sealed = sealer->seal("allot", kContext);
  if (!sealed) return std::unexpected(sealed.error());
  auto stored = lease.shared_setting("secrets_check", *sealed);
  if (!stored) return std::unexpected(stored.error());
  if (!sealer->open(*stored, kContext)) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{}/secrets.key is not the key the other replicas of this database "
                            "use: copy theirs here",
                            config.data_dir));
  }
  return {};
}

// Replaces this process with a fresh allotd of the same arguments, which starts as a follower.
// A leader that lost its lease may hold in memory what it could not commit: none of it survives.
[[noreturn]] void start_afresh(const std::vector<std::string>& args) {
  spdlog::warn("msg=\"lost the lease: starting afresh as a follower\"");
  spdlog::default_logger()->flush();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const int fd = std::atoi(entry.path().filename().c_str());
    if (fd > 2) (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execv("/proc/self/exe", argv.data());
  spdlog::critical("msg=\"cannot start afresh\" error=\"{}\"", std::strerror(errno));
  std::_Exit(1);
}

// The answers of a replica that does not lead: where the leader is, its own health and gauges.
HttpResponse follower_answer(const Replica& replica, const Metrics& metrics,
                             const HttpRequest& request) {
  const std::string path = request.target.substr(0, request.target.find('?'));
  if (path == "/healthz") return json_reply(200, {{"status", "ok"}, {"role", "follower"}});
  if (path == "/version") return json_reply(200, {{"version", ALLOT_VERSION}});
  if (path == "/metrics") {
    return HttpResponse{.status = 200,
                        .body = metrics.render(),
                        .content_type = "text/plain; version=0.0.4; charset=utf-8"};
  }
  return replica.answer_elsewhere(request);
}

// A request from a page of another origin: a preflight is answered here; any other request is
// let through, and its answer readable by the page only when the origin is a replica's.
// Returns whether the request was answered.
bool answer_cross_origin(const Replica& replica, const HttpRequest& request, Responder& respond) {
  if (request.origin.empty()) return false;
  const bool allowed = replica.allows_origin(request.origin);
  if (request.method == "OPTIONS") {
    respond(preflight_reply(request, allowed));
    return true;
  }
  if (allowed) {
    respond = [respond = std::move(respond), origin = request.origin](HttpResponse response) {
      allow_origin(response, origin);
      respond(std::move(response));
    };
  }
  return false;
}

// One replica of several on one PostgreSQL: it follows until it takes the lease, then leads.
int run_replica(const DaemonConfig& config, const sigset_t& stop_signals,
                const std::vector<std::string>& args) {
  // Migrations run first: the lease lives in a table they make.
  if (auto migrated = open_configured_store(config); !migrated) {
    spdlog::critical("msg=\"cannot open the store\" error=\"{}\"", migrated.error().message);
    return 1;
  }
  SystemClock clock;
  RandomIdSource ids(clock);
  auto lease =
      Lease::open(config.postgres_url, ids.new_id("rep"), config.advertise_url, config.lease_ms);
  if (!lease) {
    spdlog::critical("msg=\"cannot open the lease\" error=\"{}\"", lease.error().message);
    return 1;
  }
  if (auto ok = check_shared_secrets(config, **lease); !ok) {
    spdlog::critical("msg=\"cannot join the replicas\" error=\"{}\"", ok.error().message);
    return 2;
  }
  auto cluster_id = (*lease)->shared_setting("cluster_id", ids.new_id("cls"));
  if (!cluster_id) {
    spdlog::critical("msg=\"cannot open the lease\" error=\"{}\"", cluster_id.error().message);
    return 1;
  }
  Replica replica(std::move(*lease), *cluster_id);
  Metrics metrics;
  metrics.add_to_render([&replica] { return replica.metrics_text(); });
  std::unique_ptr<Leader> leader;
  std::atomic<Leader*> leading{nullptr};
  auto server = HttpServer::bind(
      config.listen_host, config.listen_port,
      [&](HttpRequest request, Responder respond) {
        Leader* serving = replica.serving() ? leading.load() : nullptr;
        if (answer_cross_origin(replica, request, respond)) return;
        if (request.target == "/readyz" || request.target.starts_with("/readyz?")) {
          return respond(replica.readiness(serving != nullptr && serving->service().ready()));
        }
        if (serving != nullptr)
          return serving->app().handle(std::move(request), std::move(respond));
        respond(follower_answer(replica, metrics, request));
      },
      http_options(config));
  if (!server) {
    spdlog::critical("msg=\"cannot listen\" error=\"{}\"", server.error().message);
    return 1;
  }
  const std::string url = fmt::format("http://{}:{}", config.listen_host, (*server)->port());
  (*server)->repeat(config.service_probe_interval_ms, [&leading] {
    Leader* serving = leading.load();
    return serving != nullptr ? serving->app().probe_services() : nothing_to_do();
  });
  announce(std::nullopt, url);
  write_port_file(config, (*server)->port());
  std::atomic<bool> stopping{false};
  std::atomic<int> failed{0};
  std::thread renew;
  std::thread lead([&] {
    auto took = replica.wait_to_lead(stopping);
    if (!took || !*took) {
      if (!took) {
        spdlog::critical("msg=\"cannot join the replicas\" error=\"{}\"", took.error().message);
        failed = 2;
        (*server)->stop();
      }
      return;
    }
    // Renewed from now on, while the state loads too: a large state may take longer than a lease.
    renew = std::thread([&] {
      if (!replica.keep_leading(stopping)) start_afresh(args);
    });
    auto opened = Leader::open(config, metrics, replica.clock(),
                               Fence{replica.holder(), replica.epoch()}, ALLOT_VERSION);
    if (!opened) {
      spdlog::critical("msg=\"cannot lead\" error=\"{}\"", opened.error().message);
      stopping = true;
      renew.join();
      replica.release();
      failed = 1;
      (*server)->stop();
      return;
    }
    leader = std::move(*opened);
    if (leader->first_key()) announce(leader->first_key(), url);
    leader->start_timers(url);
    leading = leader.get();
    spdlog::info("msg=\"leading\" epoch={} url={}", replica.epoch(), config.advertise_url);
  });
  std::thread signals([&] {
    const int signal = wait_for_stop_signal(stop_signals);
    spdlog::info("msg=\"stopping\" signal={}", signal);
    stopping = true;
    if (Leader* current = leading.load()) current->release_parked();
    (*server)->stop();
  });
  (*server)->run();
  stopping = true;
  if (failed != 0) {
    lead.join();
    // The signal thread waits for a signal that will not come.
    spdlog::info("msg=\"stopped\"");
    std::_Exit(failed);
  }
  signals.join();
  lead.join();
  if (renew.joinable()) renew.join();
  leading = nullptr;
  leader.reset();
  // Given up only now, so that what was in flight could still commit under it.
  replica.release();
  spdlog::info("msg=\"stopped\"");
  return 0;
}

int run(const DaemonConfig& config, const sigset_t& stop_signals,
        const std::vector<std::string>& args) {
  setup_logging(config.log_level);
  // Held until allotd ends: a second allotd on the same data dir stops here, before it opens a
  // store or a log file the first one writes.
  auto lock = lock_data_dir(config.data_dir);
  if (!lock) {
    spdlog::critical("msg=\"cannot start\" error=\"{}\"", lock.error().message);
    return 1;
  }
  if (config.advertise_url.empty()) return run_single(config, stop_signals);
  return run_replica(config, stop_signals, args);
}

}  // namespace
}  // namespace allot

int main(int argc, char** argv) {
  const sigset_t stop_signals = allot::block_stop_signals();

  const std::vector<std::string> args(argv, argv + argc);
  bool help = false;
  auto config = allot::load_daemon_config(args, std::getenv, help);
  if (!config) {
    std::fprintf(help ? stdout : stderr, "%s\n", config.error().message.c_str());
    return help ? 0 : 2;
  }
  return allot::run(*config, stop_signals, args);
}
