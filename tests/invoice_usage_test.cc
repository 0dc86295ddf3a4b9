// An invoice and a usage report from real use: allotd and one agent simulating 8 GPUs run an
// instance at a known price; the invoice, its credit notes and the report must agree with the
// instance's recorded run.
#include <thread>

#include "common/clock.h"
#include "common/money.h"
#include "support/cluster.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class InvoiceUsageTest : public ClusterTest {
 protected:
  InvoiceUsageTest() {
    agent_count_ = 1;
    free_prices_ = false;  // It sets the prices it bills by.
  }

  // Sets 3,600 a GPU-hour on the node's GPUs, one unit for each GPU-second, and waits until it
  // applies: a price set within a second applies from the next whole second, and starting after
  // that one has every second the instance runs charged.
  TimeMs set_price(const json& node) {
    const json price = as_operator(
        "PUT", "/v1/prices",
        {{"gpu_model", "H100-80GB"}, {"region", node["region"]}, {"gpu_hour", "3600"}}, 200);
    const TimeMs priced_from_ms = (*parse_time(price.value("effective_at", "")) / 1000 + 1) * 1000;
    while (SystemClock().now_ms() < priced_from_ms) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return priced_from_ms;
  }

  // Runs two GPUs for two seconds; returns the finished instance.
  json run_two_gpus() {
    const std::string id =
        launch({{"gpus", 2}, {"gpu_models", {"H100"}}, {"command", {"sleep", "2"}}});
    EXPECT_TRUE(instance_reaches(id, "succeeded")) << instance(id).dump();
    return instance(id);
  }

  static int64_t seconds_of(const json& ran) {
    return *parse_time(ran.value("ended_at", "")) / 1000 -
           *parse_time(ran.value("started_at", "")) / 1000;
  }
};

TEST_F(InvoiceUsageTest, APrepaidTenantsInvoiceShowsItPaidFromTheBalanceWithNothingDue) {
  // The tenant whose project runs the work; tenants list in id order, the operator's among them.
  const std::string tenant =
      as_operator("GET", "/v1/projects/" + project_id_, nullptr, 200).value("tenant_id", "");
  as_operator("PATCH", "/v1/tenants/" + tenant, {{"billing", "prepaid"}}, 200);
  as_operator("POST", "/v1/tenants/" + tenant + "/topups", {{"amount", "1000"}}, 201);
  set_price(nodes().at(0));
  const json ran = run_two_gpus();
  const int64_t charge_micros = 2 * seconds_of(ran) * 1'000'000;
  ASSERT_GT(charge_micros, 0);
  // The ledger posts the usage from the balance once the work has ended.
  const std::string balance = "/v1/tenants/" + tenant + "/balance";
  ASSERT_TRUE(eventually([&] {
    return as_operator("GET", balance, nullptr, 200)["cash"] ==
           Money::from_micros(1'000'000'000 - charge_micros).to_string();
  })) << as_operator("GET", balance, nullptr, 200).dump();

  const std::string month = format_month(*parse_time(ran.value("started_at", "")));
  const json invoice =
      as_operator("POST", "/v1/invoices", {{"tenant_id", tenant}, {"month", month}}, 201);
  const std::string amount = Money::from_micros(charge_micros).to_string();
  EXPECT_EQ(invoice["total"], amount) << invoice.dump();
  EXPECT_EQ(invoice["billing"], "prepaid");
  EXPECT_EQ(invoice["paid_from_balance"], amount);
  EXPECT_EQ(invoice["amount_due"], "0.000000");
  const json& payments = invoice["payments"];
  EXPECT_EQ(payments["paid_from_balance"], amount);
  EXPECT_GE(payments.value("transfers", 0), 1);
  // The postings it names are the tenant's ledger's usage lines.
  const std::string statement =
      as_operator("GET", "/v1/tenants/" + tenant + "/ledger?limit=1000", nullptr, 200).dump();
  for (const char* end : {"first_transfer_id", "last_transfer_id"}) {
    const std::string transfer = payments.value(end, "");
    EXPECT_TRUE(transfer.starts_with("usage/")) << payments.dump();
    EXPECT_NE(statement.find("\"" + transfer + "\""), std::string::npos) << transfer;
  }
  const std::string path = "/v1/invoices/" + invoice.value("id", "");
  const ClientResponse html = daemon_.request("GET", path + "?format=html", "", member_key_);
  const std::string cents = std::to_string(charge_micros / 1'000'000) + ".00 USD";
  EXPECT_NE(html.body.find("Paid from the prepaid balance: " + cents), std::string::npos)
      << html.body;
  EXPECT_NE(html.body.find("Amount due</td><td class=\"n\">0.00 USD"), std::string::npos);
  const ClientResponse csv = daemon_.request("GET", path + "?format=csv", "", member_key_);
  // Nothing was paid in besides the balance: no payment was recorded.
  EXPECT_NE(csv.body.find("\r\npaid_from_balance,,,,,,," + amount +
                          ",,,,,,\r\npaid,,,,,,,0.000000,,,,,,\r\namount_due,,,,,,,0.000000"),
            std::string::npos)
      << csv.body;
  // A credit note may still give back what the balance paid.
  as_operator("POST", path + "/finalize", {{"early", true}}, 200);
  as_operator("POST", path + "/credit-notes", {{"amount", amount}, {"reason", "outage"}}, 201);
}

TEST_F(InvoiceUsageTest, TheInvoiceChargesWhatRanAndCreditNotesStayWithinItsTotal) {
  const json node = nodes().at(0);
  set_price(node);
  const json ran = run_two_gpus();
  const int64_t seconds = seconds_of(ran);
  ASSERT_GT(seconds, 0);
  const std::string tenant = ran.value("tenant_id", "");
  const std::string month = format_month(*parse_time(ran.value("started_at", "")));

  const json invoice =
      as_operator("POST", "/v1/invoices", {{"tenant_id", tenant}, {"month", month}}, 201);
  ASSERT_EQ(invoice["lines"].size(), 1u) << invoice.dump();
  const json& line = invoice["lines"][0];
  EXPECT_EQ(line["project_id"], project_id_);
  EXPECT_EQ(line["gpu_model"], "H100-80GB");
  EXPECT_EQ(line["gpu_milli_seconds"], 2'000 * seconds);
  const std::string amount = Money::from_micros(2 * seconds * 1'000'000).to_string();
  EXPECT_EQ(line["amount"], amount);
  EXPECT_EQ(invoice["subtotal"], amount);
  EXPECT_EQ(invoice["total"], amount);
  // The simulated GPUs' energy counters ran while it did: the invoice shows what it used.
  EXPECT_NE(ran.value("energy_kwh", ""), "0.000000") << ran.dump();
  EXPECT_EQ(line["energy_kwh"], ran.value("energy_kwh", "")) << ran.dump();
  EXPECT_EQ(invoice["energy_kwh"], ran.value("energy_kwh", ""));

  // The member sees the same spend in the usage report, by project.
  const json usage =
      call("GET", "/v1/usage?group_by=project&from=" + month + "&to=" + month, nullptr, 200);
  ASSERT_EQ(usage["items"].size(), 1u) << usage.dump();
  EXPECT_EQ(usage["items"][0]["key"], project_id_);
  EXPECT_EQ(usage["items"][0]["name"], "vision");
  EXPECT_EQ(usage["items"][0]["spend"], amount);
  EXPECT_EQ(usage["items"][0]["energy_kwh"], ran.value("energy_kwh", ""));
  EXPECT_EQ(usage["forecast"]["burn_per_hour"], "0.000000");  // Nothing runs now.

  const std::string path = "/v1/invoices/" + invoice.value("id", "");
  as_operator("POST", path + "/finalize", {{"early", true}}, 200);
  const std::string before = as_operator("GET", path, nullptr, 200).dump();
  const std::string over = Money::from_micros(2 * seconds * 1'000'000 + 1).to_string();
  for (const auto& [text, code] :
       std::vector<std::pair<std::string, std::string>>{{"0", "invalid_argument"},
                                                        {"-1", "invalid_argument"},
                                                        {over, "invalid_argument"},
                                                        {"9223372036854.775808", "overflow"},
                                                        {"lots", "invalid_argument"}}) {
    const json refused = as_operator("POST", path + "/credit-notes",
                                     {{"amount", text}, {"reason", "goodwill"}}, 400);
    EXPECT_EQ(refused["error"].value("code", ""), code) << text;
  }
  EXPECT_EQ(as_operator("GET", path, nullptr, 200).dump(), before);
  const json note =
      as_operator("POST", path + "/credit-notes", {{"amount", "1"}, {"reason", "slow start"}}, 201);
  EXPECT_EQ(note["number"], "CN-000001");
  EXPECT_EQ(note["invoice"]["amount_due"],
            Money::from_micros((2 * seconds - 1) * 1'000'000).to_string());

  // The tenant's member reads the invoice as CSV and as a printable page.
  const ClientResponse csv = daemon_.request("GET", path + "?format=csv", "", member_key_);
  EXPECT_EQ(csv.status, 200);
  EXPECT_TRUE(csv.body.starts_with("project_id,project,gpu_model,")) << csv.body;
  EXPECT_NE(csv.body.find("\r\ntotal,,,,,,," + amount + ",,,,,,\r\n"), std::string::npos)
      << csv.body;
  const ClientResponse html = daemon_.request("GET", path + "?format=html", "", member_key_);
  EXPECT_EQ(html.status, 200);
  EXPECT_TRUE(html.body.starts_with("<!DOCTYPE html>"));
  // The document shows money in the currency's minor unit: cents of the default USD.
  EXPECT_NE(html.body.find("Total</td><td class=\"n\">" + std::to_string(2 * seconds) + ".00 USD"),
            std::string::npos)
      << html.body;
}

}  // namespace
}  // namespace allot::testing
