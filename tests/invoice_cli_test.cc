// allot invoices and allot usage against a real allotd: the operator's walk through a month's
// invoice, the printed forms, and the exit codes of refusals.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "support/cli_fixture.h"
#include "support/temp_dir.h"

namespace allot::testing {
namespace {

using nlohmann::json;

using InvoiceCliTest = OperatorCliTest;

TEST_F(InvoiceCliTest, TheOperatorDraftsShowsFinalizesAndPaysAMonth) {
  const std::string tenant = allot_json({"tenants", "create", "acme"}).value("id", "");
  const std::string month = format_month(SystemClock().now_ms());
  const json drafted = allot_json({"invoices", "draft", "--tenant", tenant, "--month", month});
  const std::string id = drafted.value("id", "");
  EXPECT_EQ(drafted["status"], "draft");

  const RunResult table = allot({"invoices", "list", "--tenant", tenant});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("NUMBER"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(id), std::string::npos) << table.out;

  const RunResult csv = allot({"invoices", "show", id, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_TRUE(csv.out.starts_with("project_id,project,")) << csv.out;
  EXPECT_NE(csv.out.find("amount_due,,,,,,,0.000000"), std::string::npos) << csv.out;
  const RunResult html = allot({"invoices", "show", id, "--format", "html"});
  EXPECT_TRUE(html.out.starts_with("<!DOCTYPE html>")) << html.out;

  // The month has not ended: only --early finalizes it.
  const RunResult open = allot({"invoices", "finalize", id});
  EXPECT_EQ(open.exit_code, 5);
  EXPECT_NE(open.err.find("period_open"), std::string::npos) << open.err;
  EXPECT_EQ(allot_json({"invoices", "show", id})["status"], "draft");
  const json final = allot_json({"invoices", "finalize", id, "--early"});
  EXPECT_EQ(final["status"], "final");
  EXPECT_EQ(final["early"], true);
  // Refusals exit 5 and say why; an unknown invoice exits 4.
  const RunResult again = allot({"invoices", "finalize", id, "--early"});
  EXPECT_EQ(again.exit_code, 5);
  EXPECT_NE(again.err.find("conflict"), std::string::npos) << again.err;
  EXPECT_EQ(allot({"invoices", "credit", id, "--amount", "5", "--reason", "x"}).exit_code, 5);
  EXPECT_EQ(allot({"invoices", "show", "inv_ffffffffffffffff"}).exit_code, 4);
  EXPECT_EQ(allot({"invoices", "show", id, "--format", "pdf"}).exit_code, 2);
  EXPECT_EQ(allot_json({"invoices", "pay", id})["status"], "paid");
  EXPECT_EQ(allot_json({"invoices", "show", id})["status"], "paid");

  const json usage = allot_json({"usage", "--tenant", tenant, "--by", "project"});
  EXPECT_EQ(usage["items"], json::array());
  EXPECT_EQ(usage["forecast"]["month"], month);
  const RunResult usage_table = allot({"usage", "--by", "day"});
  EXPECT_EQ(usage_table.exit_code, 0) << usage_table.err;
  EXPECT_NE(usage_table.out.find("FORECAST.MONTH_END"), std::string::npos) << usage_table.out;
}

// The document a customer gets: allotd issues it in the operator's name and currency, and the CLI
// prints it to a PDF with headless Chromium.
TEST_F(InvoiceCliTest, AnInvoicePrintsToAPdfInTheOperatorsNameAndCurrency) {
  ASSERT_EQ(daemon_.stop(), 0);
  ASSERT_TRUE(daemon_.start({"ALLOT_INVOICE_LEGAL_NAME=Allot Compute GmbH",
                             "ALLOT_INVOICE_ADDRESS=Hauptstr. 1\n10115 Berlin",
                             "ALLOT_INVOICE_TAX_ID=DE123456789", "ALLOT_CURRENCY=EUR",
                             "ALLOT_PAYMENT_TERMS_DAYS=14"}));
  const std::string tenant = allot_json({"tenants", "create", "acme"}).value("id", "");
  const std::string month = format_month(SystemClock().now_ms());
  const std::string id =
      allot_json({"invoices", "draft", "--tenant", tenant, "--month", month}).value("id", "");
  const json final = allot_json({"invoices", "finalize", id, "--early"});
  const std::string number = final.value("number", "");
  const TimeMs issued_ms = *parse_time(final.value("finalized_at", ""));

  const RunResult html = allot({"invoices", "show", id, "--format", "html"});
  for (const std::string& shown :
       {std::string("Allot Compute GmbH"), std::string("Hauptstr. 1<br>10115 Berlin"),
        std::string("Tax ID: DE123456789"), std::string("Bill to"), std::string("acme"),
        "Issued: " + format_time(issued_ms).substr(0, 10),
        "Due: " + format_time(issued_ms + TimeMs{14} * 86'400'000).substr(0, 10),
        std::string("Total</td><td class=\"n\">0.00 EUR"), std::string("Currency: EUR")}) {
    EXPECT_NE(html.out.find(shown), std::string::npos) << shown << "\n" << html.out;
  }

  TempDir dir;
  const std::string pdf = (dir.path() / "invoice.pdf").string();
  const RunResult printed = allot({"invoices", "pdf", id, "--file", pdf});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  const RunResult text = run_program("/usr/bin/pdftotext", {"-layout", pdf, "-"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Invoice " + number), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Allot Compute GmbH"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("0.00 EUR"), std::string::npos) << text.out;
  // Without a browser to print with, it says so and exits 7; an unknown invoice exits 4.
  const RunResult no_browser =
      run_program(bin_dir() + "/src/cli/allot", {"invoices", "pdf", id, "--file", pdf},
                  {"ALLOT_SERVER=" + daemon_.url(), "ALLOT_KEY=" + daemon_.admin_key(),
                   "HOME=/nonexistent", "ALLOT_CHROMIUM=/nonexistent/chromium"});
  EXPECT_EQ(no_browser.exit_code, 7);
  EXPECT_NE(no_browser.err.find("did not print"), std::string::npos) << no_browser.err;
  EXPECT_EQ(allot({"invoices", "pdf", "inv_ffffffffffffffff", "--file", pdf}).exit_code, 4);
}

}  // namespace
}  // namespace allot::testing
