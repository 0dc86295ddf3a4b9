#include "store/codecs/kernel.h"

#include "store/budget_store.h"

namespace allot {

Status write_row(Db& db, const Event& o) { return write_budget_row(db, o); }

Status load_rows(Db& db, Tag<Event> /*tag*/, std::vector<Row>& out) {
  return load_last_event(db, out);
}

}  // namespace allot
