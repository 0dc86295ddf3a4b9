// Invoices and usage through the API against a real allotd: the lifecycle, who may read what,
// the CSV and HTML forms, and bad input refused with its code, changing nothing.
#include <regex>

#include "common/clock.h"
#include "support/fixture.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class InvoiceApiTest : public ApiTest {
 protected:
  json draft(const std::string& tenant, const std::string& month, int status) {
    return call("POST", "/v1/invoices", {{"tenant_id", tenant}, {"month", month}}, op_key_, status);
  }

  // Every invoice and everything else the operator can list: unchanged means nothing changed.
  std::string everything() {
    return snapshot() + daemon_.request("GET", "/v1/invoices?limit=1000", "", op_key_).body;
  }

  void expect_refused(const std::string& method, const std::string& target, const std::string& body,
                      const std::string& key, int status, const std::string& code) {
    const std::string before = everything();
    const ClientResponse response = daemon_.request(method, target, body, key);
    EXPECT_EQ(response.status, status)
        << method << " " << target << " " << body << ": " << response.body;
    EXPECT_EQ(json::parse(response.body, nullptr, false)["error"].value("code", ""), code)
        << method << " " << target << " " << body;
    EXPECT_EQ(everything(), before)
        << method << " " << target << " " << body << " changed something";
  }

  // This month's invoice, finalized before the month has ended, on purpose.
  json finalize_early(const std::string& id) {
    return call("POST", "/v1/invoices/" + id + "/finalize", {{"early", true}}, op_key_, 200);
  }

  const std::string month_ = format_month(SystemClock().now_ms());
};

TEST_F(InvoiceApiTest, ADraftIsFinalizedPaidAndThenFrozen) {
  const json drafted = draft(a_.tenant_id, month_, 201);
  const std::string id = drafted.value("id", "");
  EXPECT_TRUE(std::regex_match(id, std::regex("inv_[0-9a-f]{16}"))) << id;
  EXPECT_EQ(drafted["status"], "draft");
  EXPECT_EQ(drafted["month"], month_);
  EXPECT_TRUE(drafted["number"].is_null());
  EXPECT_EQ(drafted["lines"], json::array());  // Nothing ran.
  EXPECT_EQ(drafted["total"], "0.000000");
  // Drafting the month again replaces the draft: one invoice per tenant and month.
  const json redrafted = draft(a_.tenant_id, month_, 200);
  EXPECT_EQ(redrafted["id"], id);
  EXPECT_EQ(
      call("GET", "/v1/invoices?tenant_id=" + a_.tenant_id, nullptr, op_key_, 200)["items"].size(),
      1u);

  // The month has not ended: finalizing it is refused unless asked for early.
  expect_refused("POST", "/v1/invoices/" + id + "/finalize", "", op_key_, 409, "period_open");
  expect_refused("POST", "/v1/invoices/" + id + "/finalize", R"({"early": false})", op_key_, 409,
                 "period_open");
  expect_refused("POST", "/v1/invoices/" + id + "/finalize", R"({"early": "yes"})", op_key_, 400,
                 "invalid_type");
  expect_refused("POST", "/v1/invoices/" + id + "/finalize", R"({"soon": true})", op_key_, 400,
                 "unknown_field");
  const json final = finalize_early(id);
  EXPECT_EQ(final["status"], "final");
  EXPECT_EQ(final["early"], true);
  EXPECT_EQ(final["period_start"], format_time(*parse_month(month_)));
  // It bills up to where its draft read usage; the next month's invoice bills the rest.
  EXPECT_EQ(final["period_end"], redrafted["period_end"]);
  EXPECT_EQ(final["billing"], "postpaid");
  EXPECT_TRUE(final["payments"].is_null());
  EXPECT_TRUE(std::regex_match(final.value("number", ""), std::regex("INV-[0-9]{6}")))
      << final.dump();
  const std::string body = json{{"tenant_id", a_.tenant_id}, {"month", month_}}.dump();
  expect_refused("POST", "/v1/invoices", body, op_key_, 409, "conflict");
  expect_refused("POST", "/v1/invoices/" + id + "/finalize", "", op_key_, 409, "conflict");
  // Nothing is left to credit on a zero invoice.
  expect_refused("POST", "/v1/invoices/" + id + "/credit-notes",
                 R"({"amount": "0.000001", "reason": "goodwill"})", op_key_, 400,
                 "invalid_argument");

  const json paid = call("POST", "/v1/invoices/" + id + "/pay", nullptr, op_key_, 200);
  EXPECT_EQ(paid["status"], "paid");
  EXPECT_EQ(paid["number"], final["number"]);
  expect_refused("POST", "/v1/invoices/" + id + "/void", "", op_key_, 409, "conflict");
  expect_refused("POST", "/v1/invoices/" + id + "/pay", "", op_key_, 409, "conflict");
}

TEST_F(InvoiceApiTest, AVoidFinalInvoiceKeepsItsNumberAndTheMonthCanBeInvoicedAgain) {
  const std::string first = draft(b_.tenant_id, month_, 201).value("id", "");
  const std::string number = finalize_early(first).value("number", "");
  const json voided = call("POST", "/v1/invoices/" + first + "/void", nullptr, op_key_, 200);
  EXPECT_EQ(voided["status"], "void");
  EXPECT_EQ(voided["number"], number);
  const std::string second = draft(b_.tenant_id, month_, 201).value("id", "");
  EXPECT_NE(second, first);
  const json renumbered = finalize_early(second);
  EXPECT_EQ(std::stoi(renumbered.value("number", "").substr(4)), std::stoi(number.substr(4)) + 1);
  // A draft can be voided too, and pays nothing.
  const json statuses =
      call("GET", "/v1/invoices?status=void&tenant_id=" + b_.tenant_id, nullptr, op_key_, 200);
  ASSERT_EQ(statuses["items"].size(), 1u);
  EXPECT_EQ(statuses["items"][0]["id"], first);
}

TEST_F(InvoiceApiTest, InvoicesAndTheirNumbersSurviveARestart) {
  const std::string first = draft(a_.tenant_id, month_, 201).value("id", "");
  finalize_early(first);
  const std::string before = call("GET", "/v1/invoices/" + first, nullptr, op_key_, 200).dump();
  ASSERT_EQ(daemon_.stop(), 0);
  ASSERT_TRUE(daemon_.start());
  EXPECT_EQ(call("GET", "/v1/invoices/" + first, nullptr, op_key_, 200).dump(), before);
  // The sequence goes on where it was, and the month's final invoice still blocks a re-draft.
  draft(a_.tenant_id, month_, 409);
  const std::string second = draft(b_.tenant_id, month_, 201).value("id", "");
  EXPECT_EQ(finalize_early(second)["number"], "INV-000002");
}

TEST_F(InvoiceApiTest, ATenantReadsOnlyItsOwnInvoicesAndChangesNone) {
  const std::string mine = draft(a_.tenant_id, month_, 201).value("id", "");
  const std::string theirs = draft(b_.tenant_id, month_, 201).value("id", "");
  EXPECT_EQ(call("GET", "/v1/invoices/" + mine, nullptr, a_.member_key, 200)["id"], mine);
  const json listed = call("GET", "/v1/invoices", nullptr, a_.member_key, 200);
  ASSERT_EQ(listed["items"].size(), 1u);
  EXPECT_EQ(listed["items"][0]["id"], mine);
  for (const char* format : {"", "?format=csv", "?format=html"}) {
    expect_refused("GET", "/v1/invoices/" + theirs + format, "", a_.member_key, 404, "not_found");
  }
  expect_refused("GET", "/v1/invoices?tenant_id=" + b_.tenant_id, "", a_.admin_key, 404,
                 "not_found");
  expect_refused("GET", "/v1/usage?tenant_id=" + b_.tenant_id, "", a_.admin_key, 404, "not_found");
  // Only the operator drafts, finalizes, pays, voids and credits, even a tenant admin's own.
  const std::string body = json{{"tenant_id", a_.tenant_id}, {"month", month_}}.dump();
  expect_refused("POST", "/v1/invoices", body, a_.admin_key, 403, "forbidden");
  for (const char* verb : {"finalize", "pay", "void"}) {
    expect_refused("POST", "/v1/invoices/" + mine + "/" + verb, "", a_.admin_key, 403, "forbidden");
  }
  expect_refused("POST", "/v1/invoices/" + mine + "/credit-notes",
                 R"({"amount": "1", "reason": "x"})", a_.admin_key, 403, "forbidden");
}

TEST_F(InvoiceApiTest, TheCustomersBillingDetailsAreOnItsInvoiceAsFinalized) {
  const std::string tenant = "/v1/tenants/" + a_.tenant_id;
  const json set = call("PATCH", tenant,
                        {{"billing_details",
                          {{"legal_name", "Acme Ltd"},
                           {"address", "1 Main St\nSpringfield"},
                           {"tax_id", "GB123456789"},
                           {"email", "ap@acme.example"}}}},
                        op_key_, 200);
  EXPECT_EQ(set["billing_details"]["legal_name"], "Acme Ltd");
  EXPECT_EQ(set["billing_details"]["address"], "1 Main St\nSpringfield");
  // Only the fields named change.
  EXPECT_EQ(call("PATCH", tenant, {{"billing_details", {{"tax_id", "GB987654321"}}}}, op_key_,
                 200)["billing_details"]["legal_name"],
            "Acme Ltd");
  const std::string id = draft(a_.tenant_id, month_, 201).value("id", "");
  finalize_early(id);
  const std::string html =
      daemon_.request("GET", "/v1/invoices/" + id + "?format=html", "", a_.member_key).body;
  for (const char* shown : {"Bill to</h2><p><strong>Acme Ltd</strong>", "1 Main St<br>Springfield",
                            "Tax ID: GB987654321", "ap@acme.example"}) {
    EXPECT_NE(html.find(shown), std::string::npos) << shown << "\n" << html;
  }
  // A final invoice keeps the details it was issued with; the tenant's new ones are for later.
  call("PATCH", tenant, {{"billing_details", {{"legal_name", "Acme Holdings"}}}}, op_key_, 200);
  EXPECT_EQ(daemon_.request("GET", "/v1/invoices/" + id + "?format=html", "", op_key_).body, html);
  // Survives a restart.
  ASSERT_EQ(daemon_.stop(), 0);
  ASSERT_TRUE(daemon_.start());
  EXPECT_EQ(call("GET", tenant, nullptr, op_key_, 200)["billing_details"]["legal_name"],
            "Acme Holdings");
  EXPECT_EQ(daemon_.request("GET", "/v1/invoices/" + id + "?format=html", "", op_key_).body, html);

  const std::string too_long(201, 'x');
  for (const auto& [body, code] : std::vector<std::pair<std::string, std::string>>{
           {R"({"billing_details": {"vat": "x"}})", "unknown_field"},
           {R"({"billing_details": {"email": "nobody"}})", "invalid_argument"},
           {R"({"billing_details": {"legal_name": ")" + too_long + R"("}})", "invalid_argument"},
           {R"({"billing_details": {"tax_id": "a\u0007b"}})", "invalid_argument"},
           {R"({"billing_details": {"tax_id": 5}})", "invalid_type"},
           {R"({"billing_details": "Acme"})", "invalid_type"},
           {R"({"billing_details": {"email": "nobody"}, "billing": "prepaid"})",
            "invalid_argument"}}) {
    expect_refused("PATCH", tenant, body, op_key_, 400, code);
  }
  expect_refused("PATCH", tenant, R"({"billing_details": {"legal_name": "Mine"}})", a_.admin_key,
                 403, "forbidden");
}

TEST_F(InvoiceApiTest, BadInputIsRefusedWithItsCodeAndChangesNothing) {
  const std::string id = draft(a_.tenant_id, month_, 201).value("id", "");
  const std::string& t = a_.tenant_id;
  struct Case {
    std::string method, target, body;
    int status;
    std::string code;
  };
  const Case cases[] = {
      {"POST", "/v1/invoices", R"({"tenant_id": ")" + t + R"(", "month": "2026-13"})", 400,
       "invalid_argument"},
      {"POST", "/v1/invoices", R"({"tenant_id": ")" + t + R"(", "month": "last"})", 400,
       "invalid_argument"},
      {"POST", "/v1/invoices", R"({"tenant_id": ")" + t + R"(", "month": "2999-01"})", 400,
       "invalid_argument"},
      {"POST", "/v1/invoices", R"({"tenant_id": ")" + t + R"("})", 400, "missing_field"},
      {"POST", "/v1/invoices", R"({"tenant_id": ")" + t + R"(", "month": 202611})", 400,
       "invalid_type"},
      {"POST", "/v1/invoices", R"({"tenant_id": "ten_ffffffffffffffff", "month": "2026-11"})", 404,
       "not_found"},
      {"POST", "/v1/invoices", R"({"tenant_id": "acme", "month": "2026-11"})", 400, "invalid_id"},
      {"POST", "/v1/invoices", R"({"tenant_id": ")" + t + R"(", "month": "2026-11", "x": 1})", 400,
       "unknown_field"},
      {"GET", "/v1/invoices/" + id + "?format=pdf", "", 400, "invalid_argument"},
      {"GET", "/v1/invoices?month=11", "", 400, "invalid_argument"},
      {"GET", "/v1/invoices?colour=red", "", 400, "unknown_field"},
      {"GET", "/v1/invoices/inv_ffffffffffffffff", "", 404, "not_found"},
      {"GET", "/v1/invoices/invoice-1", "", 400, "invalid_id"},
      {"POST", "/v1/invoices/inv_ffffffffffffffff/finalize", "", 404, "not_found"},
      {"POST", "/v1/invoices/" + id + "/pay", "", 409, "conflict"},  // Still a draft.
      {"POST", "/v1/invoices/" + id + "/credit-notes", R"({"amount": "1", "reason": "x"})", 409,
       "conflict"},
      {"GET", "/v1/usage?group_by=colour", "", 400, "invalid_argument"},
      {"GET", "/v1/usage?from=yesterday", "", 400, "invalid_argument"},
      {"GET", "/v1/usage?from=2026-11&to=2026-10", "", 400, "invalid_argument"},
      {"GET", "/v1/usage?from=2020-01&to=2026-11&group_by=day", "", 400, "invalid_argument"},
  };
  for (const Case& c : cases) expect_refused(c.method, c.target, c.body, op_key_, c.status, c.code);
}

}  // namespace
}  // namespace allot::testing
