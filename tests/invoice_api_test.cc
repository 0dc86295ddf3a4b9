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
  EXPECT_EQ(draft(a_.tenant_id, month_, 200)["id"], id);
  EXPECT_EQ(
      call("GET", "/v1/invoices?tenant_id=" + a_.tenant_id, nullptr, op_key_, 200)["items"].size(),
      1u);

  const json final = call("POST", "/v1/invoices/" + id + "/finalize", nullptr, op_key_, 200);
  EXPECT_EQ(final["status"], "final");
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
  const std::string number =
      call("POST", "/v1/invoices/" + first + "/finalize", nullptr, op_key_, 200)
          .value("number", "");
  const json voided = call("POST", "/v1/invoices/" + first + "/void", nullptr, op_key_, 200);
  EXPECT_EQ(voided["status"], "void");
  EXPECT_EQ(voided["number"], number);
  const std::string second = draft(b_.tenant_id, month_, 201).value("id", "");
  EXPECT_NE(second, first);
  const json renumbered =
      call("POST", "/v1/invoices/" + second + "/finalize", nullptr, op_key_, 200);
  EXPECT_EQ(std::stoi(renumbered.value("number", "").substr(4)), std::stoi(number.substr(4)) + 1);
  // A draft can be voided too, and pays nothing.
  const json statuses =
      call("GET", "/v1/invoices?status=void&tenant_id=" + b_.tenant_id, nullptr, op_key_, 200);
  ASSERT_EQ(statuses["items"].size(), 1u);
  EXPECT_EQ(statuses["items"][0]["id"], first);
}

TEST_F(InvoiceApiTest, InvoicesAndTheirNumbersSurviveARestart) {
  const std::string first = draft(a_.tenant_id, month_, 201).value("id", "");
  call("POST", "/v1/invoices/" + first + "/finalize", nullptr, op_key_, 200);
  const std::string before = call("GET", "/v1/invoices/" + first, nullptr, op_key_, 200).dump();
  ASSERT_EQ(daemon_.stop(), 0);
  ASSERT_TRUE(daemon_.start());
  EXPECT_EQ(call("GET", "/v1/invoices/" + first, nullptr, op_key_, 200).dump(), before);
  // The sequence goes on where it was, and the month's final invoice still blocks a re-draft.
  draft(a_.tenant_id, month_, 409);
  const std::string second = draft(b_.tenant_id, month_, 201).value("id", "");
  EXPECT_EQ(call("POST", "/v1/invoices/" + second + "/finalize", nullptr, op_key_, 200)["number"],
            "INV-000002");
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
