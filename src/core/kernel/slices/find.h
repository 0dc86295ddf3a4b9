// What the slices' lookups share.
#pragma once

#include <map>
#include <string>

namespace allot {

// The object stored under `id`, or nullptr.
template <typename T>
const T* find_by_id(const std::map<std::string, T>& map, const std::string& id) {
  auto it = map.find(id);
  return it == map.end() ? nullptr : &it->second;
}

}  // namespace allot
