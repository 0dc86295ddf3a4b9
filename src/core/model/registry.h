// Tenants' credentials for private image registries. The password is sealed by allotd before it
// reaches the core (common/seal.h), so that neither the state nor the store holds it in the clear;
// it is opened only to hand it to the node that pulls an image of the tenant from that registry.
#pragma once

#include <string>

#include "common/clock.h"
#include "common/error.h"

namespace allot {

struct State;

struct RegistryCredential {
  std::string tenant_id;
  std::string host;  // The registry, as image references name it: "HOST[:PORT]".
  std::string username;
  std::string sealed_password;  // Sealer::seal(password, sealing_context()).
  TimeMs updated_at_ms = 0;
  TimeMs deleted_at_ms = 0;  // 0: live; a deleted one stays in the store as a tombstone.

  bool operator==(const RegistryCredential&) const = default;
  // Unique per (tenant, host); '\n' cannot occur in either.
  std::string key() const { return tenant_id + "\n" + host; }
  // What the password is sealed for: its owner, so a sealed value moved elsewhere does not open.
  std::string sealing_context() const { return key(); }
};

// Sets the tenant's credential for its host, replacing the one there is. The command carries the
// row it makes, as TigerBeetle's create_accounts carries its accounts: the core checks it and
// stamps its time (updated_at_ms and deleted_at_ms are not taken from it).
struct SetRegistryCredential {
  RegistryCredential credential;
};

struct DeleteRegistryCredential {
  std::string tenant_id;
  std::string host;
};

}  // namespace allot
