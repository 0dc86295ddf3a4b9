// Invoices and credit notes as the store keeps them: one JSON document per row, amounts as whole
// micro-units (the API's decimal strings are for people; the store keeps the exact integers).
#pragma once

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "core/invoice.h"

namespace allot {

nlohmann::json invoice_document(const Invoice& invoice);
[[nodiscard]] Result<Invoice> invoice_from_document(const nlohmann::json& doc);
nlohmann::json credit_note_document(const CreditNote& note);
[[nodiscard]] Result<CreditNote> credit_note_from_document(const nlohmann::json& doc);

}  // namespace allot
