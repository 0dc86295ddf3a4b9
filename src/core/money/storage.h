// Storage metering: a volume is charged for its provisioned size from the moment it was created
// to the moment it was deleted (now, while it lives), in whole seconds, at its region's storage
// price (meter::storage_key). Seconds without a storage price in force are free. The ledger posts
// it as usage is posted: every rating interval, at a month's start and at deletion.
#pragma once

#include <cstdint>
#include <string>

#include "core/kernel/draft.h"

namespace allot {

struct StorageUse {
  meter::PriceKey key;  // The region's storage key.
  int64_t gb = 0;
  int64_t start_s = 0;  // [start_s, end_s), whole seconds since the epoch.
  int64_t end_s = 0;
};

// The volume's storage up to `now_ms` (its deletion, once deleted).
StorageUse storage_use(const Volume& volume, TimeMs now_ms);

// What that storage costs within [from_s, to_s): its charge up to to_s less its charge up to
// from_s, each stretch of price rated from its own start, so adjoining windows add up exactly.
[[nodiscard]] Result<int64_t> storage_between(const State& state, const StorageUse& use,
                                              int64_t from_s, int64_t to_s);

// GB x seconds of that storage within [from_s, to_s).
[[nodiscard]] Result<int64_t> gb_seconds_within(const StorageUse& use, int64_t from_s,
                                                int64_t to_s);

// Of the volume's charge within [from_s, to_s), what the ledger has posted: postings pay its
// charge from the start on, so the first `billed_micros` of it are posted.
[[nodiscard]] Result<int64_t> storage_posted_within(const State& state, const Volume& volume,
                                                    int64_t from_s, int64_t to_s);

namespace money {

// What the tenant's volumes have accrued up to `at_ms` and the ledger has not posted.
int64_t storage_owed(const Draft& draft, const std::string& tenant_id, TimeMs at_ms);

}  // namespace money

// The timer's storage billing for one tenant: posts each volume's charge since its last posting
// when it is due (every rating interval, at a month's start, once deleted, or `post_all`), from
// promotional credits first, then the tenant's own account. A prepaid account pays no more than it
// has free; what it cannot pay stays owed (and keeps new work from starting) until it is topped up.
void post_storage(Draft& draft, const Tenant& tenant, TimeMs now_ms, TimeMs rating_interval_ms,
                  bool post_all);

}  // namespace allot
