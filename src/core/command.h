// Commands are the only way the core's state changes. Each carries everything it needs from the
// outside world: ids, hashes and (through Core::apply) the time.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "core/model.h"

namespace allot {

struct CreateTenant {
  std::string id;
  std::string name;
  bool is_operator = false;
};

struct CreateProject {
  std::string id;
  std::string tenant_id;
  std::string name;
};

struct DeleteProject {
  std::string id;
};

struct CreateUser {
  std::string id;
  std::string tenant_id;
  std::string name;
  std::string email;
  Role role = Role::kViewer;
};

// Changes the fields that are set.
struct UpdateUser {
  std::string id;
  std::optional<std::string> name;
  std::optional<Role> role;
  std::optional<bool> disabled;
};

struct CreateKey {
  std::string id;
  std::string user_id;
  std::string name;
  std::string prefix;
  std::string token_hash;
};

struct RevokeKey {
  std::string id;
};

using Command = std::variant<CreateTenant, CreateProject, DeleteProject, CreateUser, UpdateUser,
                             CreateKey, RevokeKey>;

}  // namespace allot
