// The identity domain's commands: tenants, their projects and users, and users' API keys.
// Each domain lists its commands and the rows they write; the core's Command and Row are the
// concatenation of these lists (core/kernel/command.h, core/kernel/row.h).
#pragma once

#include <optional>
#include <string>

#include "common/type_list.h"
#include "core/model/identity.h"

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

using IdentityCommands = TypeList<CreateTenant, CreateProject, DeleteProject, CreateUser,
                                  UpdateUser, CreateKey, RevokeKey>;
using IdentityRows = TypeList<Tenant, User, Project, ApiKey>;

}  // namespace allot
