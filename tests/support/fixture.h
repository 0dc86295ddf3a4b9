// A running allotd with an operator admin and two tenants, each with a tenant admin and a member,
// for API tests. Objects are made through the API itself.
#pragma once

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/daemon.h"

namespace allot::testing {

struct TenantKit {
  std::string tenant_id;
  std::string admin_id, admin_key;
  std::string member_id, member_key;
  std::string project_id;
};

// A request that must be refused with `status` and the error `code`.
struct Refusal {
  nlohmann::json body;
  int status;
  const char* code;
};

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override;

  // Sends a request and parses the JSON answer (null when the body is empty or not JSON).
  nlohmann::json call(const std::string& method, const std::string& target,
                      const nlohmann::json& body, const std::string& key, int expected_status);
  // Makes a tenant with an admin, a member and a project.
  TenantKit make_tenant(const std::string& name);
  // Everything the operator can list, as one string: unchanged means nothing changed.
  std::string snapshot();

  Daemon daemon_;
  std::string op_key_;
  TenantKit a_, b_;
};

}  // namespace allot::testing
