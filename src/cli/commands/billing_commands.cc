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
  std::string id, tenant, format = "json", from, to, by, file;
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

  CLI::App* invoices = add_group(app, "invoices", "monthly invoices and credit notes");
  add_list(*invoices, "list", "list invoices", "/v1/invoices",
           {{.flag = "--tenant", .name = "tenant_id", .help = "only this tenant's"},
            {.flag = "--month", .name = "month", .help = "only this month, e.g. 2026-11"},
            {.flag = "--status", .name = "status", .help = "only draft, final, paid or void ones"}},
           kInvoiceColumns, action);
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
  add_body_call(
      *invoices, "draft", "draft or re-draft a month (operator admins)", "POST", "/v1/invoices",
      {{.flag = "--tenant", .name = "tenant_id", .help = "the tenant", .required = true},
       {.flag = "--month", .name = "month", .help = "the month, e.g. 2026-11", .required = true}},
      action);
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
  for (const std::string verb : {"pay", "void"}) {
    add_id_call(*invoices, verb, verb + " an invoice (operator admins)", "POST", "/v1/invoices",
                action, "/" + verb);
  }
  add_body_call(
      *invoices, "credit", "give back part of a final or paid invoice (operator admins)", "POST",
      "/v1/invoices",
      {{.flag = "id", .name = "id", .help = "the invoice's id", .required = true, .in_path = true},
       {.flag = "--amount", .name = "amount", .help = "how much, e.g. 12.50", .required = true},
       {.flag = "--reason", .name = "reason", .help = "why, for the customer", .required = true}},
      action, "/credit-notes");

  CLI::App* usage =
      app.add_subcommand("usage", "GPU-hours and spend, grouped, with the month's forecast");
  usage->add_option("--tenant", o.tenant, "only this tenant's");
  usage->add_option("--from", o.from, "from (RFC 3339 or YYYY-MM; default: this month's start)");
  usage->add_option("--to", o.to, "to (RFC 3339, or YYYY-MM for that month's end; default: now)");
  usage->add_option("--by", o.by, "tenant (default), project, label:KEY, gpu_model or day");
  usage->callback([&action] { action = show_usage(o); });
}

}  // namespace allot::cli
