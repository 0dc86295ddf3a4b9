// The core's whole state, as plain data: one slice per domain (core/kernel/slices/), each with its
// objects, the indexes its put() overloads keep true, and its lookups. State is all of them; a
// handler reads `state.nodes` or `state.tenant(id)` whichever slice holds it. Ordered maps keep
// listings and pagination by id stable.
#pragma once

#include <cstdint>

#include "core/kernel/row.h"
#include "core/kernel/slices/admission.h"
#include "core/kernel/slices/books.h"
#include "core/kernel/slices/cluster.h"
#include "core/kernel/slices/identity.h"
#include "core/kernel/slices/money.h"
#include "core/kernel/slices/pools.h"
#include "core/kernel/slices/regions.h"

namespace allot {

struct State : IdentitySlice,
               ClusterSlice,
               AdmissionSlice,
               MoneySlice,
               BooksSlice,
               PoolsSlice,
               RegionsSlice {
  int64_t last_event_seq = 0;  // Events live in the store; the core numbers the next ones.

  // Puts one object in place (new or changed), keeping the derived indexes true: the `put`
  // overload of its row type, in its domain (dispatched in core/machine.cc).
  void put(const Row& row);
};

// Keeps the event counter: events themselves stay in the store.
void put(State& state, const Event& event);

}  // namespace allot
