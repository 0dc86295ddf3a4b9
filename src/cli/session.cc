#include "cli/session.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "common/url.h"

namespace allot::cli {
namespace {

constexpr std::string_view kDefaultServer = "http://127.0.0.1:8080";

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

std::optional<ClientResponse> Session::send(const std::string& method, const std::string& target,
                                            const std::string& body, int& code) {
  if (!client_) {
    auto client = HttpClient::connect_to(settings_.server);
    if (!client) {
      std::cerr << "error: " << client.error().message << "\n";
      code = kUsage;
      return std::nullopt;
    }
    client_ = std::move(*client);
  }
  auto response = client_->send(method, target, body, settings_.key);
  if (!response) {
    std::cerr << "error: " << response.error().message << "\n";
    code = kUnreachable;
    return std::nullopt;
  }
  return std::move(*response);
}

int Session::call(const std::string& method, const std::string& target, const nlohmann::json& body,
                  nlohmann::json& answer) {
  int code = kOk;
  auto response = send(method, target, body.is_null() ? "" : body.dump(), code);
  if (!response) return code;
  answer = nlohmann::json::parse(response->body, nullptr, false);
  code = exit_code_for(response->status);
  if (code == kOk && answer.is_discarded()) {
    std::cerr << "error: the server's answer is not JSON\n";
    return kServerError;
  }
  if (code != kOk) report_failure(response->status, answer);
  return code;
}

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
  report_failure(response->status, nlohmann::json::parse(response->body, nullptr, false));
  return code;
}

int Session::list(const std::string& target, int limit, nlohmann::json& items) {
  items = nlohmann::json::array();
  std::string after;
  const char separator = target.find('?') == std::string::npos ? '?' : '&';
  for (;;) {
    const int page = limit > 0 ? std::min(1000, limit - static_cast<int>(items.size())) : 1000;
    std::string url = fmt::format("{}{}limit={}", target, separator, page);
    if (!after.empty()) url += "&after=" + percent_encode(after);
    nlohmann::json answer;
    if (int code = call("GET", url, nullptr, answer); code != kOk) return code;
    for (auto& item : answer["items"]) items.push_back(std::move(item));
    if (answer["next_after"].is_null() || (limit > 0 && static_cast<int>(items.size()) >= limit)) {
      return kOk;
    }
    after = answer["next_after"].get<std::string>();
  }
}

void Session::show(const nlohmann::json& object) const {
  if (settings_.output == "json") {
    std::cout << object.dump(2) << "\n";
  } else {
    print_object(std::cout, object);
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
