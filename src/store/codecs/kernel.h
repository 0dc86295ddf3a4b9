// The event every domain writes, in the store: the log itself, and on load only the last event
// (for the core's event numbering); the log stays in the store, like the audit log.
#pragma once

#include "store/codecs/codec.h"

namespace allot {

[[nodiscard]] Status write_row(Db& db, const Event& event);
[[nodiscard]] Status load_rows(Db& db, Tag<Event> tag, std::vector<Row>& out);

}  // namespace allot
