// Helpers shared by the route files.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/app.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/wire/wire.h"

namespace allot {

// The tenant a new object goes in: the one named (checked: an id the caller may see), else the
// caller's.
[[nodiscard]] Result<std::string> tenant_for(const Call& call,
                                             const std::optional<std::string>& tenant_id);
// An optional ?tenant_id= filter on a listing, checked like tenant_for. Operator admins see every
// tenant without it; others see their own.
[[nodiscard]] Result<std::optional<std::string>> tenant_filter(const Call& call);
// The project a new instance or volume goes in: the one named (kNotFound unless the caller may
// see it), else the caller's tenant's only live project (kMissingField when it has several).
[[nodiscard]] Result<const Project*> project_for(const Call& call,
                                                 const std::optional<std::string>& id);
// A report window's edge from the query parameter `name`: RFC 3339 time, or a month "YYYY-MM"
// (its start, or with `end_of_month` its end, so that from=2026-11&to=2026-11 is November);
// `fallback_ms` without one. Defined with the usage routes.
[[nodiscard]] Result<TimeMs> read_window_edge(const Target& target, const char* name,
                                              bool end_of_month, TimeMs fallback_ms);
// kForbidden for viewers, who may look but not launch, stop or make volumes.
[[nodiscard]] Status require_launcher(const Caller& caller);

// An idle-stop policy from its JSON object (threshold_pct, window_s, action: stop or notify);
// kInvalidType, kMissingField, kUnknownField or kInvalidArgument when it is not one. The core
// checks the values' ranges.
[[nodiscard]] Result<IdlePolicy> read_idle_policy(const nlohmann::json& value);

// The page's `after` as a log's seq number (0 when absent); kInvalidArgument otherwise.
[[nodiscard]] Result<int64_t> read_seq_after(const Page& page);

// One page of a map ordered by key, holding only what `visible` admits, each as `render` shows it.
template <typename T, typename Visible, typename Render>
HttpResponse page_of(const std::map<std::string, T>& map, const Page& page, Visible visible,
                     Render render) {
  nlohmann::json items = nlohmann::json::array();
  std::string last;
  bool more = false;
  for (auto it = page.after.empty() ? map.begin() : map.upper_bound(page.after); it != map.end();
       ++it) {
    if (!visible(it->second)) continue;
    if (static_cast<int>(items.size()) == page.limit) {
      more = true;
      break;
    }
    items.push_back(render(it->second));
    last = it->first;
  }
  return json_reply(200, {{"items", items},
                          {"next_after", more ? nlohmann::json(last) : nlohmann::json(nullptr)}});
}

// One page of a map ordered by id, each item as to_json shows it.
template <typename T, typename Visible>
HttpResponse page_of(const std::map<std::string, T>& map, const Page& page, Visible visible) {
  return page_of(map, page, visible, [](const T& item) { return to_json(item); });
}

// One page of a log, from the entries read for it: one more than the page holds, when there are,
// tells there is a next page. `seq` gives an entry's place in the log, for next_after.
template <typename Entry, typename Render, typename Seq>
HttpResponse log_page(std::vector<Entry> entries, int limit, Render render, Seq seq) {
  nlohmann::json items = nlohmann::json::array();
  const bool more = static_cast<int>(entries.size()) > limit;
  if (more) entries.pop_back();
  for (const Entry& entry : entries) items.push_back(render(entry));
  const nlohmann::json next =
      more ? nlohmann::json(std::to_string(seq(entries.back()))) : nlohmann::json(nullptr);
  return json_reply(200, {{"items", items}, {"next_after", next}});
}

// GET of the object a path names: `find` gives it (or the error to answer), to_json shows it.
template <auto find>
Result<HttpResponse> get_found(Call& call) {
  ALLOT_TRY_LET(const auto* object, find(call));
  return json_reply(200, to_json(*object));
}

// GET of every object of a map, a page at a time, for operator admins only.
template <typename T>
Result<HttpResponse> list_for_operator(const Call& call, const std::map<std::string, T>& map) {
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY_LET(const Page page, read_page(call.target, {}));
  return page_of(map, page, [](const T&) { return true; });
}

}  // namespace allot
