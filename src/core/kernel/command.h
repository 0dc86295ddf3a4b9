// Commands are the only way the core's state changes. Each carries everything it needs from the
// outside world: ids, hashes and (through Core::apply) the time. Each domain declares its own
// (core/model/*_commands.h); Command is their concatenation, and every command has one `apply`
// overload in its domain (core/kernel/handler.h), so that one without a handler does not compile.
#pragma once

#include "common/type_list.h"
#include "core/model/admission_commands.h"
#include "core/model/books_commands.h"
#include "core/model/cluster_commands.h"
#include "core/model/identity_commands.h"
#include "core/model/money_commands.h"
#include "core/model/pools_commands.h"
#include "core/model/regions_commands.h"

namespace allot {

// The timer: heartbeat deadlines, maximum run times, money, and a scheduling pass
// (core/tick.cc).
struct Tick {
  bool post_all = false;  // Posts every tenant's usage so far now (closing the books).
};

using CommandTypes = Concat<IdentityCommands, ClusterCommands, AdmissionCommands, MoneyCommands,
                            BooksCommands, PoolsCommands, RegionsCommands, TypeList<Tick>>::type;
using Command = VariantOf<CommandTypes>::type;

}  // namespace allot
