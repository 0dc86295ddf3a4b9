#include "cli/session.h"

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "common/limits.h"
#include "common/url.h"

namespace allot::cli {
namespace {

constexpr std::string_view kDefaultServer = "http://127.0.0.1:8080";
constexpr int kPageSize = limits::kMaxPageSize;

int exit_code_for(int status) {
  if (status < 400) return kOk;
  if (status == 401 || status == 403) return kDenied;
  if (status == 404) return kNotFound;
  if (status < 500) return kRejected;
  return kServerError;
}

void report_failure(int status, const nlohmann::json& answer) {
  if (answer.is_object() && answer.contains("error")) {
    const auto& error = answer["error"];
    std::cerr << fmt::format("error: {}: {}\n", error.value("code", "?"),
                             error.value("message", ""));
  } else {
    std::cerr << fmt::format("error: HTTP {}\n", status);
  }
}

// A refusal for want of a key says where a key comes from rather than what the server missed.
void report_failure(int status, const nlohmann::json& answer, const Settings& settings) {
  if (status == 401 && settings.key.empty()) {
    std::cerr << "error: no API key: set ALLOT_KEY or pass --key (or put key = \"...\" in the "
                 "config file)\n";
    return;
  }
  report_failure(status, answer);
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string{} : std::string(value);
}

}  // namespace

int resolve_settings(Settings& settings) {
  if (settings.server.empty()) settings.server = env_or_empty("ALLOT_SERVER");
  if (settings.key.empty()) settings.key = env_or_empty("ALLOT_KEY");
  std::string path = settings.config_path;
  if (path.empty()) path = env_or_empty("ALLOT_CONFIG");
  const bool named = !path.empty();
  if (path.empty() && !env_or_empty("HOME").empty()) {
    path = env_or_empty("HOME") + "/.config/allot/config.toml";
  }
  if (!path.empty() && (named || std::filesystem::exists(path))) {
    try {
      const toml::table table = toml::parse_file(path);
      if (settings.server.empty()) settings.server = table["server"].value_or(std::string{});
      if (settings.key.empty()) settings.key = table["key"].value_or(std::string{});
    } catch (const toml::parse_error& e) {
      std::cerr << fmt::format("error: config {}: {}\n", path, e.description());
      return kUsage;
    }
  }
  if (settings.server.empty()) settings.server = kDefaultServer;
  if (settings.output != "table" && settings.output != "json") {
    std::cerr << "error: -o must be table or json\n";
    return kUsage;
  }
  return kOk;
}

std::optional<std::string> Session::server_url(int& code) {
  // Followers answer /readyz with 503, which sends the client on to the next replica.
  if (!send("GET", "/readyz", "", code)) return std::nullopt;
  return client_->current_url();
}

std::optional<ClientResponse> Session::send(const std::string& method, const std::string& target,
                                            const std::string& body, int& code,
                                            const std::string& idempotency_key) {
  if (!client_) {
    auto client = HttpClient::connect_to(settings_.server);
    if (!client) {
      std::cerr << "error: " << client.error().message << "\n";
      code = kUsage;
      return std::nullopt;
    }
    client_ = std::move(*client);
  }
  auto response = client_->exchange(
      ClientRequest{.method = method,
                    .target = target,
                    .body = body,
                    .authorization = settings_.key.empty() ? "" : "Bearer " + settings_.key,
                    .idempotency_key = idempotency_key});
  if (!response) {
    std::cerr << "error: " << response.error().message << "\n";
    code = kUnreachable;
    return std::nullopt;
  }
  return std::move(*response);
}

int Session::request(const std::string& method, const std::string& target,
                     const nlohmann::json& body, nlohmann::json& answer, bool report,
                     const std::string& idempotency_key) {
  int code = kOk;
  auto response = send(method, target, body.is_null() ? "" : body.dump(), code, idempotency_key);
  if (!response) return code;
  answer = nlohmann::json::parse(response->body, nullptr, false);
  code = exit_code_for(response->status);
  if (code == kOk && answer.is_discarded()) {
    std::cerr << "error: the server's answer is not JSON\n";
    return kServerError;
  }
  if (code != kOk && (report || response->status == 401)) {
    report_failure(response->status, answer, settings_);
  }
  return code;
}

int Session::call(const std::string& method, const std::string& target, const nlohmann::json& body,
                  nlohmann::json& answer) {
  return request(method, target, body, answer, true);
}

int Session::try_call(const std::string& method, const std::string& target,
                      const nlohmann::json& body, nlohmann::json& answer,
                      const std::string& idempotency_key) {
  return request(method, target, body, answer, false, idempotency_key);
}

void Session::report(const nlohmann::json& answer) const { report_failure(0, answer, settings_); }

int Session::fetch_text(const std::string& target, std::string& body) {
  int code = kOk;
  auto response = send("GET", target, "", code);
  if (!response) return code;
  code = exit_code_for(response->status);
  if (code == kOk) {
    body = std::move(response->body);
    return kOk;
  }
  // Errors come as JSON like every other answer's.
  report_failure(response->status, nlohmann::json::parse(response->body, nullptr, false),
                 settings_);
  return code;
}

int Session::each_page(const std::string& target, int limit, bool report,
                       const std::function<void(nlohmann::json&)>& take) {
  std::string after;
  const char separator = target.find('?') == std::string::npos ? '?' : '&';
  int taken = 0;
  for (;;) {
    const int page = limit > 0 ? std::min(kPageSize, limit - taken) : kPageSize;
    std::string url = fmt::format("{}{}limit={}", target, separator, page);
    if (!after.empty()) url += "&after=" + percent_encode(after);
    nlohmann::json answer;
    if (int code = request("GET", url, nullptr, answer, report); code != kOk) return code;
    taken += static_cast<int>(answer["items"].size());
    take(answer["items"]);
    if (answer["next_after"].is_null() || (limit > 0 && taken >= limit)) return kOk;
    after = answer["next_after"].get<std::string>();
  }
}

int Session::list(const std::string& target, int limit, nlohmann::json& items) {
  items = nlohmann::json::array();
  return each_page(target, limit, true, [&items](nlohmann::json& page) {
    for (auto& item : page) items.push_back(std::move(item));
  });
}

int Session::list_newest(const std::string& target, int limit, nlohmann::json& items) {
  if (limit <= 0) return list(target, 0, items);
  // Only the newest `limit` are kept while the pages stream past, so memory stays bounded.
  std::deque<nlohmann::json> kept;
  const int code = each_page(target, 0, true, [&kept, limit](nlohmann::json& page) {
    for (auto& item : page) {
      kept.push_back(std::move(item));
      if (static_cast<int>(kept.size()) > limit) kept.pop_front();
    }
  });
  items = nlohmann::json::array();
  for (auto& item : kept) items.push_back(std::move(item));
  return code;
}

bool Session::lookup(const std::string& target, nlohmann::json& items) {
  items = nlohmann::json::array();
  return each_page(target, 0, false, [&items](nlohmann::json& page) {
           for (auto& item : page) items.push_back(std::move(item));
         }) == kOk;
}

void Session::show(const nlohmann::json& object) const {
  if (settings_.output == "json") {
    std::cout << object.dump(2) << "\n";
  } else {
    print_object(std::cout, object);
  }
}

void Session::show_created(const nlohmann::json& object) const {
  if (settings_.output == "json") {
    show(object);
    return;
  }
  std::cout << "created " << object.value("name", "") << " (" << object.value("id", "") << ")\n";
  for (const char* secret : {"secret", "token"}) {
    if (object.contains(secret) && object[secret].is_string()) {
      std::cout << secret << ": " << object[secret].get<std::string>() << " (shown once)\n";
    }
  }
}

void Session::show_list(const nlohmann::json& items, const std::vector<Column>& columns) const {
  if (settings_.output == "json") {
    std::cout << items.dump(2) << "\n";
  } else {
    print_table(std::cout, items, columns);
  }
}

}  // namespace allot::cli
