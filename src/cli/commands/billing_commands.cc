// invoices and usage: what tenants are billed, and what they use and spend.
#include <iostream>

#include "cli/commands.h"
#include "cli/invoice_pdf.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kInvoiceColumns = {
    {"id", "id"},         {"number", "number"}, {"tenant", "tenant_id"}, {"month", "month"},
    {"status", "status"}, {"total", "total"},   {"due", "amount_due"}};
const std::vector<Column> kUsageColumns = {
    {"key", "key"}, {"name", "name"}, {"gpu-hours", "gpu_hours"}, {"spend", "spend"}};

struct Options {
  std::string id, tenant, month, status, format = "json", amount, reason, from, to, by, file;
  int limit = 0;
  bool early = false;
};

// show ID: JSON through the usual output; CSV and HTML printed exactly as served.
Action show_invoice(const Options& o) {
  return [&o](Session& session) -> int {
    if (o.format == "json")
      return show_call("GET", [&o] { return "/v1/invoices/" + o.id; })(session);
    return show_text([&o] { return "/v1/invoices/" + o.id + "?format=" + o.format; })(session);
  };
}

// pdf ID --file F: the printable page, printed here to a PDF.
Action print_invoice(const Options& o) {
  return [&o](Session& session) -> int {
    std::string html;
    const int code = session.fetch_text("/v1/invoices/" + o.id + "?format=html", html);
    if (code != kOk) return code;
    if (const std::string failed = print_pdf(html, o.file); !failed.empty()) {
      std::cerr << "error: " << failed << "\n";
      return kLocalFailure;
    }
    return kOk;
  };
}

// usage: the groups as a table, then the total and the month's forecast; the whole answer in JSON
// mode.
Action show_usage(const Options& o) {
  return [&o](Session& session) -> int {
    json answer;
    const std::string target =
        "/v1/usage" +
        query({{"tenant_id", &o.tenant}, {"from", &o.from}, {"to", &o.to}, {"group_by", &o.by}});
    const int code = session.call("GET", target, nullptr, answer);
    if (code != kOk) return code;
    if (session.json_output()) {
      session.show(answer);
      return kOk;
    }
    session.show_list(answer["items"], kUsageColumns);
    std::cout << "\n";
    session.show(json{{"from", answer["from"]},
                      {"to", answer["to"]},
                      {"total", answer["total"]},
                      {"forecast", answer["forecast"]}});
    return kOk;
  };
}

}  // namespace

void add_billing_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  CLI::App* invoices =
      app.add_subcommand("invoices", "monthly invoices and credit notes")->require_subcommand(1);
  CLI::App* list = invoices->add_subcommand("list", "list invoices");
  add_limit(*list, o.limit);
  list->add_option("--tenant", o.tenant, "only this tenant's");
  list->add_option("--month", o.month, "only this month, e.g. 2026-11");
  list->add_option("--status", o.status, "only draft, final, paid or void ones");
  list->callback([&action] {
    action = show_list(
        [] {
          return "/v1/invoices" +
                 query({{"tenant_id", &o.tenant}, {"month", &o.month}, {"status", &o.status}});
        },
        o.limit, kInvoiceColumns);
  });
  CLI::App* show = invoices->add_subcommand("show", "show one invoice");
  show->add_option("id", o.id, "its id")->required();
  show->add_option("--format", o.format, "json (default), csv or html")
      ->check(CLI::IsMember({"json", "csv", "html"}));
  show->callback([&action] { action = show_invoice(o); });
  CLI::App* pdf = invoices->add_subcommand(
      "pdf",
      "print one invoice to a PDF file, with headless Chromium (chromium or $ALLOT_CHROMIUM)");
  pdf->add_option("id", o.id, "its id")->required();
  pdf->add_option("-f,--file", o.file, "the PDF file to write")->required();
  pdf->callback([&action] { action = print_invoice(o); });
  CLI::App* draft =
      invoices->add_subcommand("draft", "draft or re-draft a month (operator admins)");
  draft->add_option("--tenant", o.tenant, "the tenant")->required();
  draft->add_option("--month", o.month, "the month, e.g. 2026-11")->required();
  draft->callback([&action] {
    action = show_call(
        "POST", [] { return std::string("/v1/invoices"); },
        [] { return json{{"tenant_id", o.tenant}, {"month", o.month}}; });
  });
  CLI::App* finalize =
      invoices->add_subcommand("finalize", "finalize an invoice (operator admins)");
  finalize->add_option("id", o.id, "its id")->required();
  finalize->add_flag("--early", o.early,
                     "before its month has ended: it bills usage up to its draft, and the next "
                     "month's invoice the rest");
  finalize->callback([&action] {
    action = show_call(
        "POST", [] { return "/v1/invoices/" + o.id + "/finalize"; },
        [] { return o.early ? json{{"early", true}} : json(nullptr); });
  });
  for (const char* verb : {"pay", "void"}) {
    CLI::App* change =
        invoices->add_subcommand(verb, std::string(verb) + " an invoice (operator admins)");
    change->add_option("id", o.id, "its id")->required();
    change->callback([&action, verb] {
      action = show_call("POST", [verb] { return "/v1/invoices/" + o.id + "/" + verb; });
    });
  }
  CLI::App* credit = invoices->add_subcommand(
      "credit", "give back part of a final or paid invoice (operator admins)");
  credit->add_option("id", o.id, "the invoice's id")->required();
  credit->add_option("--amount", o.amount, "how much, e.g. 12.50")->required();
  credit->add_option("--reason", o.reason, "why, for the customer")->required();
  credit->callback([&action] {
    action = show_call(
        "POST", [] { return "/v1/invoices/" + o.id + "/credit-notes"; },
        [] { return json{{"amount", o.amount}, {"reason", o.reason}}; });
  });

  CLI::App* usage =
      app.add_subcommand("usage", "GPU-hours and spend, grouped, with the month's forecast");
  usage->add_option("--tenant", o.tenant, "only this tenant's");
  usage->add_option("--from", o.from, "from (RFC 3339 or YYYY-MM; default: this month's start)");
  usage->add_option("--to", o.to, "to (RFC 3339, or YYYY-MM for that month's end; default: now)");
  usage->add_option("--by", o.by, "tenant (default), project, label:KEY, gpu_model or day");
  usage->callback([&action] { action = show_usage(o); });
}

}  // namespace allot::cli
