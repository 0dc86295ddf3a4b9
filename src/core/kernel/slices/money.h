// Money's part of the state: prices, the ledger, invoices and credit notes, budgets and their
// alerts.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "core/model/budget.h"
#include "core/model/invoice.h"
#include "ledger/ledger.h"
#include "meter/rating.h"

namespace allot {

struct MoneySlice {
  meter::PriceCatalog prices;
  // Every tenant's money and the operator's (core/money/money.h). Changed by Core::apply only.
  ledger::Ledger ledger;
  std::map<std::string, Invoice> invoices;
  std::map<std::string, CreditNote> credit_notes;
  std::map<std::string, Budget> budgets;
  std::map<std::string, BudgetAlert> budget_alerts;  // By BudgetAlert::key().
  // Instances that ran and whose charge is not all posted yet, per tenant: what money settles.
  std::map<std::string, std::set<std::string>> unsettled_by_tenant;
  // How many invoice and credit-note numbers have been given (each sequence has no gaps).
  int64_t invoices_numbered = 0;
  int64_t credit_notes_numbered = 0;

  const Invoice* invoice(const std::string& id) const;
  const Budget* budget(const std::string& id) const;
};

}  // namespace allot
