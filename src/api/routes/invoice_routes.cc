// Invoices and credit notes: operator admins draft, finalize, mark paid, void and credit them; a
// tenant's users read their own tenant's invoices (as JSON, CSV or a printable HTML page).
#include <fmt/format.h>

#include "api/app.h"
#include "api/reply.h"
#include "api/routes/money.h"
#include "api/routes_util.h"
#include "common/money.h"
#include "core/kernel/validate.h"
#include "core/money/invoices.h"
#include "reports/invoice_draft.h"
#include "reports/invoice_render.h"

namespace allot {

// The listing's form of an invoice (page_of finds it by the object's type).
static nlohmann::json to_json(const Invoice& invoice) { return billing::invoice_json(invoice); }

namespace {

using nlohmann::json;

Result<TimeMs> read_month(const std::string& text) {
  auto month = parse_month(text);
  if (!month)
    return fail(ErrorCode::kInvalidArgument, "'month' must be written YYYY-MM, e.g. 2026-11");
  return *month;
}

// The invoice a path names, if the caller may see it; kNotFound otherwise, so that other
// tenants' invoices are not revealed.
Result<const Invoice*> visible_invoice(const Call& call) {
  const std::string& id = call.params.front();
  ALLOT_TRY(check_id("invoice id", id, "inv"));
  const Invoice* invoice = call.ctx.state().invoice(id);
  if (invoice == nullptr || !may_see_tenant(call.caller, invoice->tenant_id)) {
    return fail(ErrorCode::kNotFound, fmt::format("no invoice {}", id));
  }
  return invoice;
}

// The invoice with its credit notes, as JSON.
json invoice_with_notes(const State& state, const Invoice& invoice) {
  json out = billing::invoice_json(invoice);
  json notes = json::array();
  for (const auto& [id, note] : state.credit_notes) {
    if (note.invoice_id == invoice.id) notes.push_back(billing::credit_note_json(note));
  }
  out["credit_notes"] = notes;
  return out;
}

Result<HttpResponse> draft_invoice(Call& call) {
  JsonBody body(call.request.body);
  auto [tenant_id, month_text] = body.required_string_fields({"tenant_id", "month"});
  ALLOT_TRY(body.finish());
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY(check_id("tenant_id", tenant_id, "ten"));
  ALLOT_TRY_LET(const TimeMs month, read_month(month_text));
  const State& state = call.ctx.state();
  ALLOT_TRY_LET(auto command, billing::draft_month(state, tenant_id, month, call.ctx.now_ms(),
                                                   billing::invoice_credits(state, tenant_id, month,
                                                                            call.ctx.now_ms())));
  const Invoice* existing = live_invoice(state, tenant_id, month);
  command.id = existing != nullptr ? existing->id : call.ctx.ids().new_id("inv");
  ALLOT_TRY(call.ctx.apply(command));
  call.target_id = command.id;
  return json_reply(existing != nullptr ? 200 : 201,
                    invoice_with_notes(call.ctx.state(), *call.ctx.state().invoice(command.id)));
}

Result<HttpResponse> list_invoices(Call& call) {
  ALLOT_TRY_LET(const Page page, read_page(call.target, {"tenant_id", "month", "status"}));
  ALLOT_TRY_LET(const std::optional<std::string> tenant, tenant_filter(call));
  std::optional<TimeMs> month;
  if (auto it = call.target.query.find("month"); it != call.target.query.end()) {
    ALLOT_TRY_ASSIGN(month, read_month(it->second));
  }
  std::optional<InvoiceStatus> status;
  if (auto it = call.target.query.find("status"); it != call.target.query.end()) {
    status = parse_invoice_status(it->second);
    if (!status)
      return fail(ErrorCode::kInvalidArgument, "status must be draft, final, paid or void");
  }
  return page_of(call.ctx.state().invoices, page, [&](const Invoice& v) {
    return may_see_tenant(call.caller, v.tenant_id) && (!tenant || v.tenant_id == *tenant) &&
           (!month || v.month_ms == *month) && (!status || v.status == *status);
  });
}

Result<HttpResponse> get_invoice(Call& call) {
  for (const auto& [name, value] : call.target.query) {
    if (name != "format") {
      return fail(ErrorCode::kUnknownField, fmt::format("unknown query parameter '{}'", name));
    }
  }
  ALLOT_TRY_LET(const Invoice* invoice, visible_invoice(call));
  const State& state = call.ctx.state();
  auto format = call.target.query.find("format");
  const std::string chosen = format == call.target.query.end() ? "json" : format->second;
  if (chosen == "json") return json_reply(200, invoice_with_notes(state, *invoice));
  if (chosen == "csv") {
    return HttpResponse{.status = 200,
                        .body = billing::invoice_csv(state, *invoice),
                        .content_type = "text/csv; charset=utf-8"};
  }
  if (chosen == "html") {
    return HttpResponse{.status = 200,
                        .body = billing::invoice_html(state, *invoice, call.options.issuer),
                        .content_type = "text/html; charset=utf-8"};
  }
  return fail(ErrorCode::kInvalidArgument, "format must be json, csv or html");
}

// The body of a finalize: none, or {"early": true} to finalize before the month has ended.
Result<bool> read_early(const std::string& body_text) {
  if (body_text.empty()) return false;
  JsonBody body(body_text);
  const bool early = body.optional_bool("early").value_or(false);
  ALLOT_TRY(body.finish());
  return early;
}

// finalize, pay and void: one command on the invoice the path names.
template <typename Command>
Result<HttpResponse> change_invoice(Call& call) {
  Command command{.id = call.params.front()};
  if constexpr (std::is_same_v<Command, FinalizeInvoice>) {
    ALLOT_TRY_ASSIGN(command.early, read_early(call.request.body));
  }
  ALLOT_TRY(require_operator_admin(call.caller));
  ALLOT_TRY(check_id("invoice id", command.id, "inv"));
  ALLOT_TRY(call.ctx.apply(command));
  return json_reply(200,
                    invoice_with_notes(call.ctx.state(), *call.ctx.state().invoice(command.id)));
}

Result<HttpResponse> create_credit_note(Call& call) {
  JsonBody body(call.request.body);
  auto [amount_text, reason] = body.required_string_fields({"amount", "reason"});
  ALLOT_TRY(body.finish());
  ALLOT_TRY(require_operator_admin(call.caller));
  const std::string& invoice_id = call.params.front();
  ALLOT_TRY(check_id("invoice id", invoice_id, "inv"));
  auto amount = Money::parse(amount_text);
  if (!amount) {
    return fail(
        amount.error().code,
        fmt::format("'amount' must be a decimal amount like \"2.50\": {}", amount.error().message));
  }
  // Said here in the deployment's currency, as the invoice shows it; the core refuses it anyway.
  if (const Invoice* invoice = call.ctx.state().invoice(invoice_id);
      invoice != nullptr && amount->micros() > invoice->uncredited_micros() &&
      (invoice->status == InvoiceStatus::kFinal || invoice->status == InvoiceStatus::kPaid)) {
    const billing::Currency& currency = call.options.issuer.currency;
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("a credit note can give back at most what is left un-credited of "
                            "invoice {}: {} (asked: {})",
                            invoice->number,
                            billing::exact_money_text(invoice->uncredited_micros(), currency),
                            billing::exact_money_text(amount->micros(), currency)));
  }
  const std::string id = call.ctx.ids().new_id("crn");
  ALLOT_TRY(call.ctx.apply(CreateCreditNote{
      .id = id, .invoice_id = invoice_id, .amount_micros = amount->micros(), .reason = reason}));
  call.target_id = id;
  const State& state = call.ctx.state();
  json out = billing::credit_note_json(state.credit_notes.at(id));
  out["invoice"] = invoice_with_notes(state, *state.invoice(invoice_id));
  return json_reply(201, out);
}

constexpr Resource kResources[] = {
    {.path = "/v1/invoices", .create = draft_invoice, .list = list_invoices, .get = get_invoice},
};

constexpr Route kActions[] = {
    {"POST", "/v1/invoices/{id}/finalize", change_invoice<FinalizeInvoice>},
    {"POST", "/v1/invoices/{id}/pay", change_invoice<MarkInvoicePaid>},
    {"POST", "/v1/invoices/{id}/void", change_invoice<VoidInvoice>},
    {"POST", "/v1/invoices/{id}/credit-notes", create_credit_note},
};

}  // namespace

std::span<const Route> invoice_routes() { return route_table<kResources, kActions>(); }

}  // namespace allot
