// Rows as JSON documents, field by field from one list. A plain row's file declares its fields once
// with nlohmann's NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE (each field's key is its name), which writes
// both directions, so a field cannot be written and not read back. Enumerations are kept by their
// names (read_name below); a document that lacks a field, or has one of the wrong type or an
// unknown name, is refused whole.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace allot {

// Reads an enumeration kept by its name; `parse` gives nullopt for a name it does not know.
template <class E, class Parse>
void read_name(const nlohmann::json& doc, E& value, Parse parse) {
  const auto name = doc.get<std::string>();
  const auto parsed = parse(name);
  if (!parsed) throw std::invalid_argument(fmt::format("unknown name \"{}\"", name));
  value = *parsed;
}

// Reads a stored document of T; `what` names it in the error ("a stored pool is malformed: ...").
template <class T>
Result<T> from_document(const nlohmann::json& doc, std::string_view what) {
  try {
    return doc.get<T>();
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, fmt::format("a stored {} is malformed: {}", what, e.what()));
  }
}

}  // namespace allot
