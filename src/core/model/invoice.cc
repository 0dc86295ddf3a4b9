#include "core/model/invoice.h"

#include <fmt/format.h>

#include "common/enum_names.h"

namespace allot {
constexpr EnumNames<InvoiceStatus, 4> kNames{{"draft", "final", "paid", "void"}};

std::string_view invoice_status_name(InvoiceStatus status) { return kNames.name(status, "draft"); }

std::optional<InvoiceStatus> parse_invoice_status(std::string_view name) {
  return kNames.parse(name);
}

std::string document_number(std::string_view prefix, int64_t n) {
  return fmt::format("{}-{:06d}", prefix, n);
}

}  // namespace allot
