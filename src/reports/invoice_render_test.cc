#include "reports/invoice_render.h"

#include <gtest/gtest.h>

#include "reports/test_state.h"

namespace allot::billing {
namespace {

using namespace testing;

Invoice sample() {
  return Invoice{
      .id = "inv_0000000000000001",
      .tenant_id = kTenant,
      .month_ms = at("2026-11-01T00:00:00Z"),
      .status = InvoiceStatus::kFinal,
      .number = "INV-000007",
      .lines = {InvoiceLine{.project_id = kVision,
                            .key = {.model = "H100-80GB", .region = "eu"},
                            .gpu_milli_seconds = 45'000'000,
                            .amount_micros = 31'250'000,
                            .energy_mj = 7'200'000'000,
                            .carbon_ug = 1'500'000},
                InvoiceLine{
                    .project_id = kSpeech,
                    .key = {.model = "H100-80GB", .region = "eu", .price_class = PriceClass::kSpot},
                    .gpu_milli_seconds = 1'000,
                    .amount_micros = 1}},
      .subtotal_micros = 31'250'001,
      .credits_micros = 1'000'000,
      .total_micros = 30'250'001,
      .credited_micros = 250'000};
}

TEST(GpuHours, AreExactDecimalsRoundedHalfUpToTheMicroHour) {
  EXPECT_EQ(gpu_hours_text(45'000'000), "12.500000");
  EXPECT_EQ(gpu_hours_text(0), "0.000000");
  EXPECT_EQ(gpu_hours_text(3'600'000), "1.000000");
  EXPECT_EQ(gpu_hours_text(1'000), "0.000278");  // One GPU-second: 0.0002777...
  EXPECT_EQ(gpu_hours_text(1), "0.000000");      // 0.00000027...
  EXPECT_EQ(gpu_hours_text(2), "0.000001");      // 0.00000055...
  EXPECT_EQ(gpu_hours_text(INT64_MAX), "2562047788015.215502");
}

TEST(InvoiceJson, ShowsAmountsAsDecimalStrings) {
  const nlohmann::json out = invoice_json(sample());
  EXPECT_EQ(out["month"], "2026-11");
  EXPECT_EQ(out["status"], "final");
  EXPECT_EQ(out["number"], "INV-000007");
  EXPECT_EQ(out["subtotal"], "31.250001");
  EXPECT_EQ(out["credits"], "1.000000");
  EXPECT_EQ(out["total"], "30.250001");
  EXPECT_EQ(out["credited"], "0.250000");
  EXPECT_EQ(out["amount_due"], "30.000001");
  ASSERT_EQ(out["lines"].size(), 2u);
  EXPECT_EQ(out["lines"][0]["gpu_hours"], "12.500000");
  EXPECT_EQ(out["lines"][0]["amount"], "31.250000");
  EXPECT_EQ(out["lines"][1]["price_class"], "spot");
  EXPECT_TRUE(out["paid_at"].is_null());
  // Energy and carbon are shown per line and for the invoice, not charged.
  EXPECT_EQ(out["lines"][0]["energy_kwh"], "2.000000");
  EXPECT_EQ(out["lines"][0]["carbon_kg"], "0.001500");
  EXPECT_EQ(out["energy_kwh"], "2.000000");
}

TEST(EnergyText, IsKwhAndKgWithSixDecimalsRoundedHalfUp) {
  EXPECT_EQ(energy_kwh_text(0), "0.000000");
  EXPECT_EQ(energy_kwh_text(3'600'000'000), "1.000000");
  EXPECT_EQ(energy_kwh_text(1'799), "0.000000");  // Just under half a mWh.
  EXPECT_EQ(energy_kwh_text(1'800), "0.000001");  // Half a mWh rounds up.
  EXPECT_EQ(carbon_kg_text(499), "0.000000");
  EXPECT_EQ(carbon_kg_text(500), "0.000001");
  EXPECT_EQ(carbon_kg_text(6'000'000'000), "6.000000");
  EXPECT_EQ(carbon_kg_text(-1'500), "-0.000002");
}

TEST(InvoiceCsv, HasAHeaderOneRowPerLineAndTotalsWithTextQuoted) {
  const State state = base_state();
  const std::string csv = invoice_csv(state, sample());
  EXPECT_EQ(
      csv,
      "project_id,project,gpu_model,region,price_class,gpu_milli_seconds,gpu_hours,amount,"
      "energy_kwh,carbon_kg,gb_hours,service_id,requests,tokens\r\n"
      "prj_0000000000000001,\"vision, \"\"main\"\"\",H100-80GB,eu,on-demand,45000000,"
      "12.500000,31.250000,2.000000,0.001500,0.000000,,0,0\r\n"
      "prj_0000000000000002,'=speech,H100-80GB,eu,spot,1000,0.000278,0.000001,0.000000,0.000000,"
      "0.000000,,0,0\r\n"
      "subtotal,,,,,,,31.250001,,,,,,\r\n"
      "credits,,,,,,,1.000000,,,,,,\r\n"
      "total,,,,,,,30.250001,,,,,,\r\n"
      "credited,,,,,,,0.250000,,,,,,\r\n"
      "paid,,,,,,,0.000000,,,,,,\r\n"
      "amount_due,,,,,,,30.000001,,,,,,\r\n");
}

const Issuer kIssuer{.legal_name = "Allot <Compute> GmbH",
                     .address = "Hauptstr. 1\n10115 Berlin",
                     .tax_id = "DE123456789",
                     .currency = {.code = "EUR", .exponent = 2},
                     .payment_terms_days = 14};

TEST(InvoiceHtml, IsSelfContainedAndEscapesEveryText) {
  const State state = base_state();
  const std::string html = invoice_html(state, sample(), kIssuer);
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("<style>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("Invoice INV-000007"), std::string::npos);
  EXPECT_NE(html.find("acme &lt;&amp;&gt; &quot;co&quot;"), std::string::npos);
  EXPECT_EQ(html.find("acme <&>"), std::string::npos);
  EXPECT_NE(html.find("vision, &quot;main&quot;"), std::string::npos);
  EXPECT_NE(html.find("12.500000"), std::string::npos);  // GPU-hours keep their decimals.
  EXPECT_NE(html.find("Allot &lt;Compute&gt; GmbH"), std::string::npos);
  EXPECT_NE(html.find("Hauptstr. 1<br>10115 Berlin"), std::string::npos);
  EXPECT_EQ(html_escape("<a href='x'>&</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;");
}

// The rows under the lines, name and shown amount, as the page has them.
std::string totals_of(const std::string& html) {
  return html.substr(html.find("<tfoot>"), html.find("</tfoot>") - html.find("<tfoot>"));
}

TEST(InvoiceHtml, IsADocumentWithTheIssuerDatesAndMoneyInTheMinorUnit) {
  const State state = base_state();
  Invoice invoice = sample();
  invoice.period_start_ms = invoice.month_ms;
  invoice.period_end_ms = at("2026-12-01T00:00:00Z");
  invoice.finalized_at_ms = at("2026-12-02T09:00:00Z");
  const std::string html = invoice_html(state, invoice, kIssuer);
  for (const char* shown :
       {"Tax ID: DE123456789", "Bill to", "acme &lt;&amp;&gt; &quot;co&quot;", "Issued: 2026-12-02",
        "Due: 2026-12-16", "Period: 2026-11-01T00:00:00.000Z to 2026-12-01T00:00:00.000Z",
        "Currency: EUR", "<td class=\"n\">31.25</td>", "<td class=\"n\">0.00</td>",
        "Subtotal</td><td class=\"n\">31.25 EUR", "Credits</td><td class=\"n\">-1.00 EUR",
        "Total</td><td class=\"n\">30.25 EUR", "Credited</td><td class=\"n\">-0.25 EUR",
        "Amount due</td><td class=\"n\">30.00 EUR", "rounded half away from zero"}) {
    EXPECT_NE(html.find(shown), std::string::npos) << shown;
  }
  // Every line rounds to what the exact total rounds to: no rounding line.
  EXPECT_EQ(totals_of(html).find("Rounding"), std::string::npos) << totals_of(html);
  // A draft has no issue or due date yet.
  invoice.finalized_at_ms = 0;
  EXPECT_NE(invoice_html(state, invoice, kIssuer).find("Issued: not yet (draft)"),
            std::string::npos);
}

TEST(InvoiceHtml, ARoundingLineKeepsTheShownTotalTheLedgersTotalRoundedOnce) {
  const State state = base_state();
  Invoice invoice = sample();
  // Three lines of 0.005 each show 0.01 each, while the exact total 0.015 shows as 0.02.
  invoice.lines.resize(3, invoice.lines[1]);
  for (InvoiceLine& line : invoice.lines) line.amount_micros = 5'000;
  invoice.subtotal_micros = 15'000;
  invoice.credits_micros = 0;
  invoice.total_micros = 15'000;
  invoice.credited_micros = 0;
  const std::string totals = totals_of(invoice_html(state, invoice, kIssuer));
  EXPECT_NE(totals.find("Subtotal</td><td class=\"n\">0.03 EUR"), std::string::npos) << totals;
  EXPECT_NE(totals.find("Rounding</td><td class=\"n\">-0.01 EUR"), std::string::npos) << totals;
  EXPECT_NE(totals.find("Total</td><td class=\"n\">0.02 EUR"), std::string::npos) << totals;
  EXPECT_NE(totals.find("Amount due</td><td class=\"n\">0.02 EUR"), std::string::npos) << totals;
  // In a currency without a minor unit, the same rule.
  Issuer yen = kIssuer;
  yen.currency = {.code = "JPY", .exponent = 0};
  for (InvoiceLine& line : invoice.lines) line.amount_micros = 500'000;
  invoice.subtotal_micros = invoice.total_micros = 1'500'000;
  const std::string jpy = totals_of(invoice_html(state, invoice, yen));
  EXPECT_NE(jpy.find("Subtotal</td><td class=\"n\">3 JPY"), std::string::npos) << jpy;
  EXPECT_NE(jpy.find("Rounding</td><td class=\"n\">-1 JPY"), std::string::npos) << jpy;
  EXPECT_NE(jpy.find("Total</td><td class=\"n\">2 JPY"), std::string::npos) << jpy;
}

TEST(InvoiceHtml, APrepaidInvoiceShowsWhatTheBalancePaidAndNothingDue) {
  const State state = base_state();
  Invoice invoice = sample();
  invoice.credited_micros = 0;
  invoice.prepaid = true;
  invoice.payments = BalancePayments{.paid_micros = invoice.total_micros,
                                     .transfers = 3,
                                     .first_transfer_id = "usage/ins_1/1/0",
                                     .last_transfer_id = "usage/ins_1/3/0"};
  EXPECT_EQ(invoice.due_micros(), 0);
  const std::string html = invoice_html(state, invoice, kIssuer);
  EXPECT_NE(html.find("Paid from the prepaid balance</td><td class=\"n\">-30.25 EUR"),
            std::string::npos);
  EXPECT_NE(html.find("Amount due</td><td class=\"n\">0.00 EUR"), std::string::npos);
  EXPECT_NE(html.find("by 3 ledger usage postings (usage/ins_1/1/0 to usage/ins_1/3/0)"),
            std::string::npos);
  EXPECT_NE(html.find("Due: nothing, paid from the prepaid balance"), std::string::npos);
  const nlohmann::json json = invoice_json(invoice);
  EXPECT_EQ(json["billing"], "prepaid");
  EXPECT_EQ(json["paid_from_balance"], "30.250001");
  EXPECT_EQ(json["amount_due"], "0.000000");
  EXPECT_EQ(json["payments"]["transfers"], 3);
}

}  // namespace
}  // namespace allot::billing
