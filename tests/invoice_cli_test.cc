// allot invoices and allot usage against a real allotd: the operator's walk through a month's
// invoice, the printed forms, and the exit codes of refusals.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "support/cli_fixture.h"

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

  const json final = allot_json({"invoices", "finalize", id});
  EXPECT_EQ(final["status"], "final");
  // Refusals exit 5 and say why; an unknown invoice exits 4.
  const RunResult again = allot({"invoices", "finalize", id});
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

}  // namespace
}  // namespace allot::testing
