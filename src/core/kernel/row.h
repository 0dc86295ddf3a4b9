// One changed object: what the store writes for a command, and what it loads back. Each domain
// lists its rows (core/model/*_commands.h); Row is their concatenation, with the event every
// domain writes. Every row has one `put` overload that keeps it in the state, and one store codec
// (store/codecs/), so that a row without either does not compile.
#pragma once

#include "common/type_list.h"
#include "core/kernel/command.h"

namespace allot {

using RowTypes = Concat<IdentityRows, ClusterRows, AdmissionRows, MoneyRows, BooksRows, PoolsRows,
                        RegionsRows, TypeList<Event>>::type;
using Row = VariantOf<RowTypes>::type;

}  // namespace allot
