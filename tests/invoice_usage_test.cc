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
  InvoiceUsageTest() { agent_count_ = 1; }

  json as_operator(const std::string& method, const std::string& target, const json& body,
                   int expected_status) {
    const ClientResponse response =
        daemon_.request(method, target, body.is_null() ? "" : body.dump(), daemon_.admin_key());
    EXPECT_EQ(response.status, expected_status) << method << " " << target << ": " << response.body;
    return json::parse(response.body, nullptr, false);
  }
};

TEST_F(InvoiceUsageTest, TheInvoiceChargesWhatRanAndCreditNotesStayWithinItsTotal) {
  const json node = nodes().at(0);
  // 3,600 a GPU-hour: one unit for each GPU-second.
  const json price = as_operator(
      "PUT", "/v1/prices",
      {{"gpu_model", "H100-80GB"}, {"region", node["region"]}, {"gpu_hour", "3600"}}, 200);
  // A price set within a second applies from the next whole second: start after that one, so
  // that every second the instance runs is charged.
  const TimeMs priced_from_ms = (*parse_time(price.value("effective_at", "")) / 1000 + 1) * 1000;
  while (SystemClock().now_ms() < priced_from_ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string id =
      launch({{"gpus", 2}, {"gpu_models", {"H100"}}, {"command", {"sleep", "2"}}});
  ASSERT_TRUE(instance_reaches(id, "succeeded")) << instance(id).dump();
  const json ran = instance(id);
  const int64_t seconds = *parse_time(ran.value("ended_at", "")) / 1000 -
                          *parse_time(ran.value("started_at", "")) / 1000;
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
  as_operator("POST", path + "/finalize", nullptr, 200);
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
  EXPECT_NE(csv.body.find("\r\ntotal,,,,,,," + amount + ",,\r\n"), std::string::npos) << csv.body;
  const ClientResponse html = daemon_.request("GET", path + "?format=html", "", member_key_);
  EXPECT_EQ(html.status, 200);
  EXPECT_TRUE(html.body.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.body.find(amount), std::string::npos);
}

}  // namespace
}  // namespace allot::testing
