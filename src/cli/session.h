// One CLI invocation's connection settings and the calls it makes. Every failure maps to an exit
// code that scripts can rely on (see docs/cli.md).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/output.h"
#include "client/http_client.h"

namespace allot::cli {

enum ExitCode {
  kOk = 0,
  kServerError = 1,   // The server failed (5xx) or answered something unreadable.
  kUsage = 2,         // Bad flags or arguments; nothing was sent.
  kDenied = 3,        // 401 or 403: no key, a wrong key, or not allowed.
  kNotFound = 4,      // 404.
  kRejected = 5,      // 400, 405, 409, 413 or 422: the request was refused; nothing changed.
  kUnreachable = 6,   // The server could not be reached.
  kLocalFailure = 7,  // Work on this machine failed, e.g. no browser to print a PDF with.
  kViolations = 8,    // `allot sim chaos` found a broken invariant.
};

struct Settings {
  std::string server;            // Flag, else ALLOT_SERVER, else the config file, else the default.
  std::string key;               // Flag, else ALLOT_KEY, else the config file.
  std::string output = "table";  // "table" or "json".
  std::string config_path;       // Flag, else ALLOT_CONFIG, else ~/.config/allot/config.toml.
};

// Fills unset server and key from the environment and the config file. Returns kOk or kUsage
// (with a message on stderr) when the config file is unreadable.
int resolve_settings(Settings& settings);

class Session {
 public:
  explicit Session(Settings settings) : settings_(std::move(settings)) {}

  // Sends a request and prints nothing; on failure prints the error and returns its exit code.
  int call(const std::string& method, const std::string& target, const nlohmann::json& body,
           nlohmann::json& answer);

  // As call(), but a refusal (an HTTP error) is left to the caller to report: with report().
  // With `idempotency_key`, the request goes with that Idempotency-Key and may be sent again when
  // its answer is lost (a failover).
  int try_call(const std::string& method, const std::string& target, const nlohmann::json& body,
               nlohmann::json& answer, const std::string& idempotency_key = "");
  // Prints a refusal's code and message from the answer of a failed try_call().
  void report(const nlohmann::json& answer) const;

  // GETs an answer that is not JSON (CSV, HTML) into `body`, as it is; errors as call().
  int fetch_text(const std::string& target, std::string& body);

  // GETs every page of a listing (following next_after) up to `limit` items in all (0: all).
  int list(const std::string& target, int limit, nlohmann::json& items);
  // GETs every page of a listing ordered oldest first and keeps the newest `limit` items (0: all),
  // newest last. The listing is read to its end: the API has no newest-first order for it.
  int list_newest(const std::string& target, int limit, nlohmann::json& items);
  // GETs every page of a listing into `items` and prints nothing: false when it cannot be read
  // (a key not allowed to list it), for lookups that only make output more readable.
  bool lookup(const std::string& target, nlohmann::json& items);

  bool json_output() const { return settings_.output == "json"; }
  const Settings& settings() const { return settings_; }
  // The server that answers, "http://HOST:PORT": of several replicas, the leader. Nullopt (with
  // `code` set and the reason printed) when none can be reached.
  std::optional<std::string> server_url(int& code);

  // Prints an object (or, in JSON mode, the JSON as it is).
  void show(const nlohmann::json& object) const;
  // A new named object as a person needs it: "created NAME (ID)", and its secret or token, shown
  // once; -o json shows all of it.
  void show_created(const nlohmann::json& object) const;
  // Prints a listing as a table of `columns`, or in JSON mode as a JSON array.
  void show_list(const nlohmann::json& items, const std::vector<Column>& columns) const;

 private:
  // Sends one request; on failure prints why and sets `code`.
  std::optional<ClientResponse> send(const std::string& method, const std::string& target,
                                     const std::string& body, int& code,
                                     const std::string& idempotency_key = "");
  // Every page of `target`, each page's items passed to `take`; `report` as call() (true) or
  // try_call() (false).
  int each_page(const std::string& target, int limit, bool report,
                const std::function<void(nlohmann::json&)>& take);
  int request(const std::string& method, const std::string& target, const nlohmann::json& body,
              nlohmann::json& answer, bool report, const std::string& idempotency_key = "");

  Settings settings_;
  std::unique_ptr<HttpClient> client_;
};

}  // namespace allot::cli
