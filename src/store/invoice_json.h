// Invoices and credit notes as the store keeps them: one JSON document per row, amounts as whole
// micro-units (the API's decimal strings are for people; the store keeps the exact integers).
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/model/invoice.h"

namespace allot {

// A tenant's billing details as stored: a JSON object, or '' when all are empty.
std::string billing_details_text(const BillingDetails& details);
// Reads them back; text that is not such an object reads as none.
BillingDetails billing_details_from_text(const std::string& text);

nlohmann::json invoice_document(const Invoice& invoice);
[[nodiscard]] Result<Invoice> invoice_from_document(const nlohmann::json& doc);
nlohmann::json credit_note_document(const CreditNote& note);
[[nodiscard]] Result<CreditNote> credit_note_from_document(const nlohmann::json& doc);

}  // namespace allot
