// The core's whole state, as plain data. Ordered maps keep listings and pagination by id stable.
#pragma once

#include <map>
#include <string>
#include <unordered_map>

#include "core/model.h"

namespace allot {

struct State {
  std::map<std::string, Tenant> tenants;
  std::map<std::string, Project> projects;
  std::map<std::string, User> users;
  std::map<std::string, ApiKey> keys;
  // Derived index: SHA-256 of a key's text to the key's id, for authentication.
  std::unordered_map<std::string, std::string> key_by_hash;

  // Puts one object in place (new or changed), keeping the derived indexes true.
  void put(const Row& row);

  const Tenant* tenant(const std::string& id) const;
  const Project* project(const std::string& id) const;
  const User* user(const std::string& id) const;
  const ApiKey* key(const std::string& id) const;
  const ApiKey* key_for_hash(const std::string& token_hash) const;
};

}  // namespace allot
