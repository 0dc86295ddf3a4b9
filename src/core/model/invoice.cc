#include "core/model/invoice.h"

#include <array>

#include <fmt/format.h>

namespace allot {
namespace {

constexpr std::array<std::pair<InvoiceStatus, std::string_view>, 4> kNames = {{
    {InvoiceStatus::kDraft, "draft"},
    {InvoiceStatus::kFinal, "final"},
    {InvoiceStatus::kPaid, "paid"},
    {InvoiceStatus::kVoid, "void"},
}};

}  // namespace

std::string_view invoice_status_name(InvoiceStatus status) {
  for (const auto& [s, name] : kNames) {
    if (s == status) return name;
  }
  return "draft";
}

std::optional<InvoiceStatus> parse_invoice_status(std::string_view name) {
  for (const auto& [s, n] : kNames) {
    if (n == name) return s;
  }
  return std::nullopt;
}

std::string document_number(std::string_view prefix, int64_t n) {
  return fmt::format("{}-{:06d}", prefix, n);
}

}  // namespace allot
