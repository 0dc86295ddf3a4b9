#include "core/state.h"

namespace allot {
namespace {

template <typename T>
const T* find(const std::map<std::string, T>& map, const std::string& id) {
  auto it = map.find(id);
  return it == map.end() ? nullptr : &it->second;
}

}  // namespace

void State::put(const Row& row) {
  std::visit(
      [this](const auto& object) {
        using T = std::decay_t<decltype(object)>;
        if constexpr (std::is_same_v<T, Tenant>) {
          tenants[object.id] = object;
        } else if constexpr (std::is_same_v<T, Project>) {
          projects[object.id] = object;
        } else if constexpr (std::is_same_v<T, User>) {
          users[object.id] = object;
        } else {
          keys[object.id] = object;
          key_by_hash[object.token_hash] = object.id;
        }
      },
      row);
}

const Tenant* State::tenant(const std::string& id) const { return find(tenants, id); }
const Project* State::project(const std::string& id) const { return find(projects, id); }
const User* State::user(const std::string& id) const { return find(users, id); }
const ApiKey* State::key(const std::string& id) const { return find(keys, id); }

const ApiKey* State::key_for_hash(const std::string& token_hash) const {
  auto it = key_by_hash.find(token_hash);
  return it == key_by_hash.end() ? nullptr : key(it->second);
}

}  // namespace allot
