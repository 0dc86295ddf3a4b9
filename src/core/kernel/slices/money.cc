#include "core/kernel/slices/money.h"

#include "core/kernel/slices/find.h"

namespace allot {

const Invoice* MoneySlice::invoice(const std::string& id) const { return find_by_id(invoices, id); }

const Budget* MoneySlice::budget(const std::string& id) const { return find_by_id(budgets, id); }

}  // namespace allot
