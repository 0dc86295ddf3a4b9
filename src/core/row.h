// One changed object: what the store writes for a command, and what it loads back.
#pragma once

#include <variant>

#include "core/budget.h"
#include "core/cluster.h"
#include "core/finance.h"
#include "core/image.h"
#include "core/invoice.h"
#include "core/latency.h"
#include "core/model.h"
#include "core/pool.h"
#include "core/registry.h"
#include "core/rules.h"
#include "core/spot_rule.h"
#include "ledger/ledger.h"
#include "meter/rating.h"

namespace allot {

// One ledger transfer as it was asked, at its position in the ledger's journal.
struct LedgerEntry {
  int64_t seq = 0;
  ledger::Transfer transfer;

  bool operator==(const LedgerEntry&) const = default;
};

// False for every type: the last branch of a dispatch over Row or Command names it in a
// static_assert, so that a type added to the variant without a handler does not compile.
template <typename T>
inline constexpr bool kNoHandlerFor = false;

using Row =
    std::variant<Tenant, Project, User, ApiKey, JoinToken, Node, Instance, Quota, Reservation,
                 meter::Price, ledger::Account, LedgerEntry, Invoice, CreditNote, Budget,
                 BudgetAlert, Event, finance::Asset, Site, FixedCost, RentalPrice, NodeEnergy, Pool,
                 PoolNode, SpotRule, Latency, RegistryCredential, ImagePull>;

}  // namespace allot
