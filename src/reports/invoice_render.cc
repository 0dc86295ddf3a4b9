#include "reports/invoice_render.h"

#include <fmt/format.h>

#include "common/money.h"

namespace allot::billing {
namespace {

using nlohmann::json;

std::string money(int64_t micros) { return Money::from_micros(micros).to_string(); }

json time_or_null(TimeMs at_ms) { return at_ms == 0 ? json(nullptr) : json(format_time(at_ms)); }

std::string project_name(const State& state, const std::string& id) {
  const Project* project = state.project(id);
  return project == nullptr ? id : project->name;
}

std::string tenant_name(const State& state, const std::string& id) {
  const Tenant* tenant = state.tenant(id);
  return tenant == nullptr ? id : tenant->name;
}

// The totals every rendering shows under the lines, in order.
std::vector<std::pair<std::string_view, int64_t>> totals(const Invoice& invoice) {
  std::vector<std::pair<std::string_view, int64_t>> out = {{"subtotal", invoice.subtotal_micros},
                                                           {"credits", invoice.credits_micros},
                                                           {"total", invoice.total_micros},
                                                           {"credited", invoice.credited_micros}};
  if (invoice.prepaid) out.emplace_back("paid_from_balance", invoice.payments.paid_micros);
  out.emplace_back("paid", invoice.payment_micros);
  out.emplace_back("amount_due", invoice.due_micros());
  return out;
}

constexpr std::string_view kStyle =
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;width:100%}"
    "th,td{border-bottom:1px solid #ccc;padding:4px 8px;text-align:left}"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}"
    "tfoot td{font-weight:bold}"
    ".party{display:inline-block;vertical-align:top;width:45%}"
    "h2{font-size:1em;margin-bottom:0.2em}.note{font-size:0.8em;color:#555}"
    "@media print{body{margin:0}}";

}  // namespace

std::string gpu_hours_text(int64_t gpu_milli_seconds) {
  // One micro-GPU-hour is 3.6 milli-seconds: round (ms * 10 / 36) half up, in whole numbers.
  const bool negative = gpu_milli_seconds < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(gpu_milli_seconds)
                                      : static_cast<uint64_t>(gpu_milli_seconds);
  const uint64_t micro_hours = magnitude / 36 * 10 + ((magnitude % 36) * 10 + 18) / 36;
  return fmt::format("{}{}.{:06d}", negative ? "-" : "", micro_hours / 1'000'000,
                     micro_hours % 1'000'000);
}

std::string gb_hours_text(int64_t gb_seconds) {
  // A GB-second is 1,000 GB-milliseconds; the GPU's rounding does the rest.
  return gpu_hours_text(gb_seconds * 1000);
}

namespace {

// `value` / `unit` rounded half up to a whole number of millionths, written with six decimals.
std::string millionths_text(int64_t value, int64_t unit) {
  const bool negative = value < 0;
  const uint64_t magnitude =
      negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  const auto step = static_cast<uint64_t>(unit);
  const uint64_t units = magnitude / step + (magnitude % step >= (step + 1) / 2 ? 1 : 0);
  return fmt::format("{}{}.{:06d}", negative ? "-" : "", units / 1'000'000, units % 1'000'000);
}

std::string_view line_kind(const InvoiceLine& line) {
  if (line.service()) return "service";
  return line.key.storage() ? "storage" : "gpu";
}

// The line's energy and carbon summed over the invoice.
EnergyUse invoice_energy(const Invoice& invoice) {
  EnergyUse sum;
  for (const InvoiceLine& line : invoice.lines) {
    sum.energy_mj += line.energy_mj;
    sum.carbon_ug += line.carbon_ug;
  }
  return sum;
}

// A prepaid invoice's payments from the balance; null for a postpaid one.
json payments_json(const Invoice& invoice) {
  if (!invoice.prepaid) return nullptr;
  const BalancePayments& p = invoice.payments;
  auto id_or_null = [](const std::string& id) { return id.empty() ? json(nullptr) : json(id); };
  return {{"paid_from_balance", money(p.paid_micros)},
          {"transfers", p.transfers},
          {"first_transfer_id", id_or_null(p.first_transfer_id)},
          {"last_transfer_id", id_or_null(p.last_transfer_id)}};
}

// The HTML sentence on a prepaid invoice that says how it was paid.
std::string payments_html(const Invoice& invoice, const Currency& currency) {
  if (!invoice.prepaid) return "";
  const BalancePayments& p = invoice.payments;
  std::string out =
      fmt::format("<p>Paid from the prepaid balance: {}", money_text(p.paid_micros, currency));
  if (p.transfers > 0) {
    out += fmt::format(", by {} ledger usage posting{} ({} to {})", p.transfers,
                       p.transfers == 1 ? "" : "s", html_escape(p.first_transfer_id),
                       html_escape(p.last_transfer_id));
  }
  return out + ".</p>\n";
}

// A service line's row: what it was, in the table's first cells, and its amount.
std::string service_line_html(const InvoiceLine& line, const std::string& amount) {
  return fmt::format(
      "<tr><td>Service {}</td><td colspan=\"3\">{} requests at {}, {} tokens at {} per 1,000"
      "</td><td class=\"n\"></td><td class=\"n\"></td><td class=\"n\"></td>"
      "<td class=\"n\">{}</td></tr>\n",
      html_escape(line.service_id), line.requests, money(line.price_per_request_micros),
      line.tokens, money(line.price_per_1k_tokens_micros), amount);
}

}  // namespace

std::string energy_kwh_text(int64_t energy_mj) { return millionths_text(energy_mj, 3'600); }

std::string carbon_kg_text(int64_t carbon_ug) { return millionths_text(carbon_ug, 1'000); }

json invoice_json(const Invoice& invoice) {
  json lines = json::array();
  for (const InvoiceLine& line : invoice.lines) {
    lines.push_back({{"project_id", line.project_id},
                     {"gpu_model", line.key.model},
                     {"region", line.key.region},
                     {"price_class", price_class_name(line.key.price_class)},
                     {"kind", line_kind(line)},
                     {"gpu_milli_seconds", line.gpu_milli_seconds},
                     {"gpu_hours", gpu_hours_text(line.gpu_milli_seconds)},
                     {"gb_seconds", line.gb_seconds},
                     {"gb_hours", gb_hours_text(line.gb_seconds)},
                     {"amount", money(line.amount_micros)},
                     {"energy_kwh", energy_kwh_text(line.energy_mj)},
                     {"carbon_kg", carbon_kg_text(line.carbon_ug)}});
    if (line.service()) {
      json& added = lines.back();
      added["service_id"] = line.service_id;
      added["requests"] = line.requests;
      added["tokens"] = line.tokens;
      added["price_per_request"] = money(line.price_per_request_micros);
      added["price_per_1k_tokens"] = money(line.price_per_1k_tokens_micros);
    }
  }
  const EnergyUse energy = invoice_energy(invoice);
  json out{{"id", invoice.id},
           {"tenant_id", invoice.tenant_id},
           {"month", format_month(invoice.month_ms)},
           {"status", invoice_status_name(invoice.status)},
           {"number", invoice.number.empty() ? json(nullptr) : json(invoice.number)},
           {"lines", lines},
           {"created_at", format_time(invoice.created_at_ms)},
           {"drafted_at", format_time(invoice.drafted_at_ms)},
           {"finalized_at", time_or_null(invoice.finalized_at_ms)},
           {"paid_at", time_or_null(invoice.paid_at_ms)},
           {"voided_at", time_or_null(invoice.voided_at_ms)},
           {"period_start", format_time(invoice.period_start_ms)},
           {"period_end", format_time(invoice.period_end_ms)},
           {"early", invoice.early},
           {"billing", invoice.prepaid ? "prepaid" : "postpaid"},
           {"payments", payments_json(invoice)},
           {"energy_kwh", energy_kwh_text(energy.energy_mj)},
           {"carbon_kg", carbon_kg_text(energy.carbon_ug)}};
  for (const auto& [name, micros] : totals(invoice)) out[std::string(name)] = money(micros);
  return out;
}

json credit_note_json(const CreditNote& note) {
  return {{"id", note.id},
          {"number", note.number},
          {"invoice_id", note.invoice_id},
          {"tenant_id", note.tenant_id},
          {"amount", money(note.amount_micros)},
          {"reason", note.reason},
          {"created_at", format_time(note.created_at_ms)}};
}

std::string csv_field(std::string_view text) {
  std::string value(text);
  if (!value.empty() && std::string_view("=+-@").find(value.front()) != std::string_view::npos) {
    value.insert(value.begin(), '\'');
  }
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

std::string invoice_csv(const State& state, const Invoice& invoice) {
  std::string out =
      "project_id,project,gpu_model,region,price_class,gpu_milli_seconds,gpu_hours,amount,"
      "energy_kwh,carbon_kg,gb_hours,service_id,requests,tokens\r\n";
  for (const InvoiceLine& line : invoice.lines) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\r\n", csv_field(line.project_id),
                       csv_field(project_name(state, line.project_id)), csv_field(line.key.model),
                       csv_field(line.key.region), price_class_name(line.key.price_class),
                       line.gpu_milli_seconds, gpu_hours_text(line.gpu_milli_seconds),
                       money(line.amount_micros), energy_kwh_text(line.energy_mj),
                       carbon_kg_text(line.carbon_ug), gb_hours_text(line.gb_seconds),
                       csv_field(line.service_id), line.requests, line.tokens);
  }
  for (const auto& [name, micros] : totals(invoice)) {
    out += fmt::format("{},,,,,,,{},,,,,,\r\n", name, money(micros));
  }
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

TimeMs due_at_ms(const Invoice& invoice, const Issuer& issuer) {
  if (invoice.finalized_at_ms == 0) return 0;
  return invoice.finalized_at_ms + issuer.payment_terms_days * 86'400'000;
}

namespace {

// "2026-11-30" from a moment.
std::string date_text(TimeMs at_ms) { return format_time(at_ms).substr(0, 10); }

// Text with its line breaks kept, escaped.
std::string html_lines(std::string_view text) {
  std::string out;
  size_t from = 0;
  while (from <= text.size()) {
    const size_t to = std::min(text.find('\n', from), text.size());
    if (!out.empty()) out += "<br>";
    out += html_escape(text.substr(from, to - from));
    from = to + 1;
  }
  return out;
}

std::string issuer_html(const Issuer& issuer) {
  std::string out = "<div class=\"party\"><h2>From</h2><p>";
  out += issuer.legal_name.empty() ? "(the operator's legal name is not set)"
                                   : "<strong>" + html_escape(issuer.legal_name) + "</strong>";
  if (!issuer.address.empty()) out += "<br>" + html_lines(issuer.address);
  if (!issuer.tax_id.empty()) out += "<br>Tax ID: " + html_escape(issuer.tax_id);
  return out + "</p></div>\n";
}

// The customer as the invoice was drafted for: its legal name (else the tenant's name), address,
// tax id and billing email, and the account (tenant) id.
std::string customer_html(const State& state, const Invoice& invoice) {
  const BillingDetails& c = invoice.customer;
  std::string out = fmt::format(
      "<div class=\"party\"><h2>Bill to</h2><p><strong>{}</strong>",
      html_escape(c.legal_name.empty() ? tenant_name(state, invoice.tenant_id) : c.legal_name));
  if (!c.address.empty()) out += "<br>" + html_lines(c.address);
  if (!c.tax_id.empty()) out += "<br>Tax ID: " + html_escape(c.tax_id);
  if (!c.email.empty()) out += "<br>" + html_escape(c.email);
  return out + fmt::format("<br>Account: {}</p></div>\n", html_escape(invoice.tenant_id));
}

std::string dates_html(const Invoice& invoice, const Issuer& issuer) {
  std::string out = fmt::format(
      "<p class=\"dates\">Status: {}<br>Issued: {}<br>", invoice_status_name(invoice.status),
      invoice.finalized_at_ms == 0 ? "not yet (draft)" : date_text(invoice.finalized_at_ms));
  if (invoice.prepaid) {
    out += "Due: nothing, paid from the prepaid balance as used";
  } else {
    out += "Due: " + (invoice.finalized_at_ms == 0
                          ? fmt::format("{} days after issue", issuer.payment_terms_days)
                          : date_text(due_at_ms(invoice, issuer)));
  }
  // The period is [start, end): the last day shown is the one before the end.
  return out + fmt::format("<br>Period: {} to {} (UTC, end excluded)<br>Currency: {}</p>\n",
                           format_time(invoice.period_start_ms), format_time(invoice.period_end_ms),
                           issuer.currency.code);
}

}  // namespace

std::string invoice_html(const State& state, const Invoice& invoice, const Issuer& issuer) {
  const Currency& currency = issuer.currency;
  const std::string title = invoice.number.empty() ? fmt::format("Draft invoice {}", invoice.id)
                                                   : fmt::format("Invoice {}", invoice.number);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>"
      "<style>{}</style></head><body>\n<h1>{}</h1>\n",
      html_escape(title), kStyle, html_escape(title));
  out += issuer_html(issuer);
  out += customer_html(state, invoice);
  out += dates_html(invoice, issuer);
  out += fmt::format(
      "<table><thead><tr><th>Project</th><th>GPU model</th><th>Region</th><th>Class</th>"
      "<th class=\"n\">GPU-hours</th><th class=\"n\">Energy (kWh)</th>"
      "<th class=\"n\">CO2e (kg)</th><th class=\"n\">Amount ({})</th></tr></thead><tbody>\n",
      currency.code);
  const MinorAmounts shown = document_amounts(invoice, currency);
  for (size_t i = 0; i < invoice.lines.size(); ++i) {
    const InvoiceLine& line = invoice.lines[i];
    if (line.service()) {
      out += service_line_html(line, minor_units_text(shown.lines[i], currency));
      continue;
    }
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>"
        "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
        html_escape(project_name(state, line.project_id)), html_escape(line.key.model),
        html_escape(line.key.region),
        line.key.storage() ? "" : price_class_name(line.key.price_class),
        line.key.storage() ? gb_hours_text(line.gb_seconds) + " GB-h"
                           : gpu_hours_text(line.gpu_milli_seconds),
        energy_kwh_text(line.energy_mj), carbon_kg_text(line.carbon_ug),
        minor_units_text(shown.lines[i], currency));
  }
  out += "</tbody><tfoot>\n";
  std::vector<std::pair<std::string_view, int64_t>> rows = {{"Subtotal", shown.subtotal},
                                                            {"Credits", -shown.credits}};
  if (shown.rounding != 0) rows.emplace_back("Rounding", shown.rounding);
  rows.emplace_back("Total", shown.total);
  if (shown.credited != 0) rows.emplace_back("Credited", -shown.credited);
  if (invoice.prepaid) rows.emplace_back("Paid from the prepaid balance", -shown.paid_from_balance);
  if (invoice.status == InvoiceStatus::kPaid) rows.emplace_back("Paid", -shown.paid);
  rows.emplace_back("Amount due", shown.amount_due);
  for (const auto& [name, minor] : rows) {
    out += fmt::format("<tr><td colspan=\"7\">{}</td><td class=\"n\">{} {}</td></tr>\n", name,
                       minor_units_text(minor, currency), currency.code);
  }
  out += "</tfoot></table>\n" + payments_html(invoice, currency);
  out += fmt::format(
      "<p class=\"note\">Amounts are in {0}, rounded half away from zero to the {1}; the total is "
      "the exact total rounded once, and a rounding line, where shown, is the difference from "
      "the rounded lines.</p>\n",
      currency.code, currency.exponent == 0 ? "whole unit" : "minor unit");
  return out + "</body></html>\n";
}

}  // namespace allot::billing
