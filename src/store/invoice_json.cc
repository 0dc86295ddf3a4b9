#include "store/invoice_json.h"

#include <algorithm>

#include "common/document.h"
#include "store/document_fields.h"
#include "store/price_key_fields.h"

namespace allot {

using nlohmann::json;

// Every detail may be absent: a tenant gives those it has.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(BillingDetails, legal_name, address, tax_id, email)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CreditNote, id, invoice_id, tenant_id, number, amount_micros,
                                   reason, created_at_ms)

namespace {

json details_document(const BillingDetails& d) { return d; }

BillingDetails details_from_document(const json& d) {
  return d.is_object() ? d.get<BillingDetails>() : BillingDetails{};
}

}  // namespace

std::string billing_details_text(const BillingDetails& details) {
  return details == BillingDetails{} ? std::string() : details_document(details).dump();
}

BillingDetails billing_details_from_text(const std::string& text) {
  if (text.empty()) return {};
  return details_from_document(json::parse(text, nullptr, false));
}

// Not in the unnamed namespace: nlohmann finds these by argument-dependent lookup. A name this
// version does not know is refused before the document is read (invoice_from_document).
static void to_json(json& doc, InvoiceStatus s) { doc = invoice_status_name(s); }
static void from_json(const json& doc, InvoiceStatus& s) {
  read_name(doc, s, parse_invoice_status);
}

// The line's price key kept flat; its energy and carbon are absent from lines stored before
// they were shown.
constexpr auto kLineFields = join_tables(
    price_key_fields<&InvoiceLine::key>(),
    ALLOT_FIELDS(InvoiceLine, project_id, gpu_milli_seconds, amount_micros),
    ALLOT_FIELDS_OR_DEFAULT(InvoiceLine, energy_mj, carbon_ug, gb_seconds, service_id, requests,
                            tokens, price_per_request_micros, price_per_1k_tokens_micros));

static void to_json(json& doc, const InvoiceLine& line) { doc = write_fields(line, kLineFields); }
static void from_json(const json& doc, InvoiceLine& line) { read_fields(doc, kLineFields, line); }

// The fields read by default are absent from invoices stored before periods, balance payments and
// recorded payments were kept: those were all postpaid, and billed their whole month (from_json
// below).
constexpr auto kInvoiceFields = join_tables(
    ALLOT_FIELDS(Invoice, id, tenant_id, month_ms, status, number, subtotal_micros, credits_micros,
                 total_micros, credited_micros, created_at_ms, drafted_at_ms, finalized_at_ms,
                 paid_at_ms, voided_at_ms, lines),
    ALLOT_FIELDS_OR_DEFAULT(Invoice, period_start_ms, period_end_ms, early, prepaid,
                            payment_micros),
    std::array{
        field_or_default<&Invoice::payments, &BalancePayments::paid_micros>(
            "paid_from_balance_micros"),
        field_or_default<&Invoice::payments, &BalancePayments::transfers>("payment_transfers"),
        field_or_default<&Invoice::payments, &BalancePayments::first_transfer_id>(
            "first_payment_id"),
        field_or_default<&Invoice::payments, &BalancePayments::last_transfer_id>("last_payment_id"),
        DocumentField<Invoice>{
            .key = "customer",
            .write = [](const Invoice& v) { return details_document(v.customer); },
            .read = [](const json& customer,
                       Invoice& v) { v.customer = details_from_document(customer); },
            .optional = true}});

static void to_json(json& doc, const Invoice& v) { doc = write_fields(v, kInvoiceFields); }
static void from_json(const json& doc, Invoice& v) {
  // The period read unless the document has one of its own.
  v.month_ms = doc.at("month_ms");
  v.period_start_ms = v.month_ms;
  v.period_end_ms = next_month_start(v.month_ms);
  read_fields(doc, kInvoiceFields, v);
}

json invoice_document(const Invoice& v) { return v; }

Result<Invoice> invoice_from_document(const json& d) {
  if (unknown_name(d, "status", parse_invoice_status)) {
    return fail(ErrorCode::kInternal, "a stored invoice has an unknown status");
  }
  const auto lines = d.find("lines");
  if (lines != d.end() && lines->is_array() && std::ranges::any_of(*lines, [](const json& line) {
        return unknown_name(line, "price_class", parse_price_class);
      })) {
    return fail(ErrorCode::kInternal, "a stored invoice line has no class");
  }
  return from_document<Invoice>(d, "invoice");
}

json credit_note_document(const CreditNote& n) { return n; }

Result<CreditNote> credit_note_from_document(const json& d) {
  return from_document<CreditNote>(d, "credit note");
}

}  // namespace allot
