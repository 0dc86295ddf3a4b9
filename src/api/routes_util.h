// Helpers shared by the route files.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/reply.h"
#include "api/request.h"
#include "api/wire/wire.h"

namespace allot {

struct Call;

// The tenant a new object goes in: the one named (checked: an id the caller may see), else the
// caller's.
[[nodiscard]] Result<std::string> tenant_for(const Call& call,
                                             const std::optional<std::string>& tenant_id);
// An optional ?tenant_id= filter on a listing, checked like tenant_for. Operator admins see every
// tenant without it; others see their own.
[[nodiscard]] Result<std::optional<std::string>> tenant_filter(const Call& call);

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

}  // namespace allot
