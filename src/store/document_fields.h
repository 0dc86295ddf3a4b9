// Documents whose stored keys are not their members' names (a renamed member, a nested one kept
// flat, a field added later), written and read by one table of fields: each field's stored key
// and the path of members that holds it. A field cannot be written and not read back, and the
// stored keys stay what they are for the databases that hold them.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "store/member_table.h"

namespace allot {

template <typename T>
struct DocumentField {
  // Empty for a nested member kept flat (flat_field).
  std::string_view key;
  nlohmann::json (*write)(const T& object);
  // Throws nlohmann::json::exception for a value of the wrong type.
  void (*read)(const nlohmann::json& value, T& object);
  // Absent from documents stored before the field existed: the object keeps what it holds.
  bool optional = false;
};

namespace document_fields_internal {

template <bool Optional, auto First, auto... Rest>
constexpr auto make_field(std::string_view key) {
  using T = typename MemberOf<decltype(First)>::Class;
  return DocumentField<T>{
      .key = key,
      .write = [](const T& object) { return nlohmann::json(member_at<First, Rest...>(object)); },
      .read = [](const nlohmann::json& value,
                 T& object) { value.get_to(member_at<First, Rest...>(object)); },
      .optional = Optional};
}

}  // namespace document_fields_internal

// The member at the path `First, Rest...` (&Invoice::payments, &BalancePayments::paid_micros), kept
// under `key`; a document without it is malformed.
template <auto First, auto... Rest>
constexpr auto field(std::string_view key) {
  return document_fields_internal::make_field<false, First, Rest...>(key);
}

// As field, for a member added later: a document without it leaves the member as it was.
template <auto First, auto... Rest>
constexpr auto field_or_default(std::string_view key) {
  return document_fields_internal::make_field<true, First, Rest...>(key);
}

// A nested member kept flat: its own document's keys beside those of the object that holds it.
template <auto Member>
constexpr auto flat_field() {
  return document_fields_internal::make_field<false, Member>("");
}

template <typename T>
[[nodiscard]] nlohmann::json write_fields(
    const T& object, std::span<const DocumentField<std::type_identity_t<T>>> fields) {
  nlohmann::json doc = nlohmann::json::object();
  for (const DocumentField<T>& f : fields) {
    if (f.key.empty()) {
      doc.update(f.write(object));
    } else {
      doc[f.key] = f.write(object);
    }
  }
  return doc;
}

// Throws nlohmann::json::exception for a missing required field or a value of the wrong type.
template <typename T>
void read_fields(const nlohmann::json& doc,
                 std::span<const DocumentField<std::type_identity_t<T>>> fields, T& object) {
  for (const DocumentField<T>& f : fields) {
    if (f.key.empty()) {
      f.read(doc, object);
    } else if (!f.optional || doc.contains(f.key)) {
      f.read(doc.at(f.key), object);
    }
  }
}

// Whether `doc` names at `key` a value that `parse` does not know. A missing or mistyped name is
// not unknown: reading the document refuses it as malformed.
template <typename Parse>
[[nodiscard]] bool unknown_name(const nlohmann::json& doc, std::string_view key, Parse parse) {
  const auto value = doc.find(key);
  return value != doc.end() && value->is_string() && !parse(value->template get<std::string>());
}

}  // namespace allot

// field and field_or_default for members kept under their own names:
// ALLOT_FIELDS(Gpu, index, uuid).
#define ALLOT_FIELDS(Type, ...) ALLOT_MEMBER_TABLE(Type, ALLOT_FIELD, __VA_ARGS__)
#define ALLOT_FIELDS_OR_DEFAULT(Type, ...) \
  ALLOT_MEMBER_TABLE(Type, ALLOT_FIELD_OR_DEFAULT, __VA_ARGS__)
#define ALLOT_FIELD(member) ::allot::field<&AllotRow::member>(#member),
#define ALLOT_FIELD_OR_DEFAULT(member) ::allot::field_or_default<&AllotRow::member>(#member),
