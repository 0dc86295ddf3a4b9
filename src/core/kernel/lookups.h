// What the domains' handlers share: finding the objects a command names, refusing with kNotFound
// where the state holds none, and keeping rows that leave the state when they are deleted.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "common/error.h"
#include "core/kernel/handler.h"
#include "core/kernel/state.h"

namespace allot {

// The refusal of a command that names `what` `id` where the state holds none: "no what id".
[[nodiscard]] inline Error not_found(std::string_view what, std::string_view id) {
  return Error{ErrorCode::kNotFound, fmt::format("no {} {}", what, id)};
}

// `object` while it is live (not deleted), or not_found(what, id).
template <typename T>
[[nodiscard]] Result<const T*> found_live(const T* object, std::string_view what,
                                          std::string_view id) {
  if (object == nullptr || object->deleted_at_ms != 0) return std::unexpected(not_found(what, id));
  return object;
}

// A copy of the live `object` deleted at `now_ms` (its row stays, for the books), or
// not_found(what, id).
template <typename T>
[[nodiscard]] Result<T> deleted_copy(const T* object, std::string_view what, std::string_view id,
                                     TimeMs now_ms) {
  auto live = found_live(object, what, id);
  if (!live) return std::unexpected(live.error());
  T deleted = **live;
  deleted.deleted_at_ms = now_ms;
  return deleted;
}

// The row of deleted_copy, or its refusal: the whole of a plain delete command.
template <typename T>
[[nodiscard]] Result<Rows> delete_row(const T* object, std::string_view what, std::string_view id,
                                      TimeMs now_ms) {
  auto deleted = deleted_copy(object, what, id, now_ms);
  if (!deleted) return std::unexpected(deleted.error());
  return Rows{*deleted};
}

// A copy of `object` with `field` (a time it was revoked or cancelled) set to `now_ms`; no rows
// where it is set already, so that doing it twice is harmless; not_found(what, id) where there
// is no object.
template <typename T>
[[nodiscard]] Result<Rows> set_once(const T* object, TimeMs T::* field, std::string_view what,
                                    std::string_view id, TimeMs now_ms) {
  if (object == nullptr) return std::unexpected(not_found(what, id));
  if (object->*field != 0) return Rows{};
  T changed = *object;
  changed.*field = now_ms;
  return Rows{changed};
}

// That the tenant exists and, where `project_id` is set, holds that live project: the scope of a
// quota or a budget.
[[nodiscard]] inline Status check_scope(const State& state, const std::string& tenant_id,
                                        const std::string& project_id) {
  if (state.tenant(tenant_id) == nullptr) return std::unexpected(not_found("tenant", tenant_id));
  if (project_id.empty()) return {};
  const Project* project = state.project(project_id);
  if (project == nullptr || project->deleted_at_ms != 0 || project->tenant_id != tenant_id) {
    return fail(ErrorCode::kNotFound,
                fmt::format("no project {} in tenant {}", project_id, tenant_id));
  }
  return {};
}

// Keeps `row` in `map` under `key`; a deleted row leaves the state (its row stays in the store,
// marked deleted).
template <typename Map, typename R>
void put_live(Map& map, const typename Map::key_type& key, const R& row) {
  if (row.deleted_at_ms != 0) {
    map.erase(key);
  } else {
    map[key] = row;
  }
}

}  // namespace allot
