#include "billing/invoice_render.h"

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
  return {{"subtotal", invoice.subtotal_micros},
          {"credits", invoice.credits_micros},
          {"total", invoice.total_micros},
          {"credited", invoice.credited_micros},
          {"amount_due", invoice.due_micros()}};
}

constexpr std::string_view kStyle =
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;width:100%}"
    "th,td{border-bottom:1px solid #ccc;padding:4px 8px;text-align:left}"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}"
    "tfoot td{font-weight:bold}"
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

// The line's energy and carbon summed over the invoice.
EnergyUse invoice_energy(const Invoice& invoice) {
  EnergyUse sum;
  for (const InvoiceLine& line : invoice.lines) {
    sum.energy_mj += line.energy_mj;
    sum.carbon_ug += line.carbon_ug;
  }
  return sum;
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
                     {"gpu_milli_seconds", line.gpu_milli_seconds},
                     {"gpu_hours", gpu_hours_text(line.gpu_milli_seconds)},
                     {"amount", money(line.amount_micros)},
                     {"energy_kwh", energy_kwh_text(line.energy_mj)},
                     {"carbon_kg", carbon_kg_text(line.carbon_ug)}});
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
      "energy_kwh,carbon_kg\r\n";
  for (const InvoiceLine& line : invoice.lines) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{}\r\n", csv_field(line.project_id),
                       csv_field(project_name(state, line.project_id)), csv_field(line.key.model),
                       csv_field(line.key.region), price_class_name(line.key.price_class),
                       line.gpu_milli_seconds, gpu_hours_text(line.gpu_milli_seconds),
                       money(line.amount_micros), energy_kwh_text(line.energy_mj),
                       carbon_kg_text(line.carbon_ug));
  }
  for (const auto& [name, micros] : totals(invoice)) {
    out += fmt::format("{},,,,,,,{},,\r\n", name, money(micros));
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

std::string invoice_html(const State& state, const Invoice& invoice) {
  const std::string title = invoice.number.empty() ? fmt::format("Draft invoice {}", invoice.id)
                                                   : fmt::format("Invoice {}", invoice.number);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>"
      "<style>{}</style></head><body>\n<h1>{}</h1>\n<p>Tenant: {} ({})<br>Month: {}<br>Status: "
      "{}</p>\n<table><thead><tr><th>Project</th><th>GPU model</th><th>Region</th><th>Class</th>"
      "<th class=\"n\">GPU-hours</th><th class=\"n\">Energy (kWh)</th>"
      "<th class=\"n\">CO2e (kg)</th><th class=\"n\">Amount</th></tr></thead><tbody>\n",
      html_escape(title), kStyle, html_escape(title),
      html_escape(tenant_name(state, invoice.tenant_id)), html_escape(invoice.tenant_id),
      format_month(invoice.month_ms), invoice_status_name(invoice.status));
  for (const InvoiceLine& line : invoice.lines) {
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>"
        "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
        html_escape(project_name(state, line.project_id)), html_escape(line.key.model),
        html_escape(line.key.region), price_class_name(line.key.price_class),
        gpu_hours_text(line.gpu_milli_seconds), energy_kwh_text(line.energy_mj),
        carbon_kg_text(line.carbon_ug), money(line.amount_micros));
  }
  out += "</tbody><tfoot>\n";
  for (const auto& [name, micros] : totals(invoice)) {
    out += fmt::format("<tr><td colspan=\"7\">{}</td><td class=\"n\">{}</td></tr>\n", name,
                       money(micros));
  }
  return out + "</tfoot></table>\n</body></html>\n";
}

}  // namespace allot::billing
