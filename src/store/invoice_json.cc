#include "store/invoice_json.h"

#include "common/document.h"

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

json invoice_document(const Invoice& v) {
  json lines = json::array();
  for (const InvoiceLine& line : v.lines) {
    lines.push_back({{"project_id", line.project_id},
                     {"gpu_model", line.key.model},
                     {"region", line.key.region},
                     {"price_class", price_class_name(line.key.price_class)},
                     {"gpu_milli_seconds", line.gpu_milli_seconds},
                     {"amount_micros", line.amount_micros},
                     {"energy_mj", line.energy_mj},
                     {"carbon_ug", line.carbon_ug}});
  }
  return {{"id", v.id},
          {"tenant_id", v.tenant_id},
          {"month_ms", v.month_ms},
          {"status", invoice_status_name(v.status)},
          {"number", v.number},
          {"lines", lines},
          {"subtotal_micros", v.subtotal_micros},
          {"credits_micros", v.credits_micros},
          {"total_micros", v.total_micros},
          {"credited_micros", v.credited_micros},
          {"created_at_ms", v.created_at_ms},
          {"drafted_at_ms", v.drafted_at_ms},
          {"finalized_at_ms", v.finalized_at_ms},
          {"paid_at_ms", v.paid_at_ms},
          {"voided_at_ms", v.voided_at_ms},
          {"period_start_ms", v.period_start_ms},
          {"period_end_ms", v.period_end_ms},
          {"early", v.early},
          {"prepaid", v.prepaid},
          {"paid_from_balance_micros", v.payments.paid_micros},
          {"payment_transfers", v.payments.transfers},
          {"first_payment_id", v.payments.first_transfer_id},
          {"last_payment_id", v.payments.last_transfer_id},
          {"customer", details_document(v.customer)}};
}

Result<Invoice> invoice_from_document(const json& d) {
  try {
    auto status = parse_invoice_status(d.at("status").get<std::string>());
    if (!status) return fail(ErrorCode::kInternal, "a stored invoice has an unknown status");
    Invoice v{.id = d.at("id"),
              .tenant_id = d.at("tenant_id"),
              .month_ms = d.at("month_ms"),
              .status = *status,
              .number = d.at("number"),
              .subtotal_micros = d.at("subtotal_micros"),
              .credits_micros = d.at("credits_micros"),
              .total_micros = d.at("total_micros"),
              .credited_micros = d.at("credited_micros"),
              .created_at_ms = d.at("created_at_ms"),
              .drafted_at_ms = d.at("drafted_at_ms"),
              .finalized_at_ms = d.at("finalized_at_ms"),
              .paid_at_ms = d.at("paid_at_ms"),
              .voided_at_ms = d.at("voided_at_ms")};
    // Invoices stored before periods and balance payments were kept billed their whole month
    // and were all treated as postpaid.
    v.period_start_ms = d.value("period_start_ms", v.month_ms);
    v.period_end_ms = d.value("period_end_ms", next_month_start(v.month_ms));
    v.early = d.value("early", false);
    v.prepaid = d.value("prepaid", false);
    v.payments = BalancePayments{.paid_micros = d.value("paid_from_balance_micros", int64_t{0}),
                                 .transfers = d.value("payment_transfers", int64_t{0}),
                                 .first_transfer_id = d.value("first_payment_id", ""),
                                 .last_transfer_id = d.value("last_payment_id", "")};
    v.customer = details_from_document(d.value("customer", json(nullptr)));
    for (const json& line : d.at("lines")) {
      auto price_class = parse_price_class(line.at("price_class").get<std::string>());
      if (!price_class) return fail(ErrorCode::kInternal, "a stored invoice line has no class");
      v.lines.push_back(InvoiceLine{.project_id = line.at("project_id"),
                                    .key = {.model = line.at("gpu_model"),
                                            .region = line.at("region"),
                                            .price_class = *price_class},
                                    .gpu_milli_seconds = line.at("gpu_milli_seconds"),
                                    .amount_micros = line.at("amount_micros"),
                                    .energy_mj = line.value("energy_mj", int64_t{0}),
                                    .carbon_ug = line.value("carbon_ug", int64_t{0})});
    }
    return v;
  } catch (const json::exception& e) {
    return fail(ErrorCode::kInternal, std::string("a stored invoice is malformed: ") + e.what());
  }
}

json credit_note_document(const CreditNote& n) { return n; }

Result<CreditNote> credit_note_from_document(const json& d) {
  return from_document<CreditNote>(d, "credit note");
}

}  // namespace allot
