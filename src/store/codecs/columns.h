// Rows kept in columns of their own (tenants, users, API keys, join tokens, budget alerts, node
// energy, the audit log): a ColumnCodec, found by `codec_of(Tag<R>)` like a DocumentCodec, lists
// each column's name and the member it holds, and that one list gives the statement that writes
// the row, the columns a load selects and how each is read back.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "store/codecs/codec.h"
#include "store/member_table.h"

namespace allot {

template <typename T>
struct Column {
  std::string_view name;
  DbValue (*write)(const T& row);
  // Fails only for a column that holds a document of its own that is malformed.
  Status (*read)(const DbValue& value, T& row);
};

template <typename T>
struct ColumnCodec {
  std::string_view table;
  std::span<const Column<T>> columns;
  // The columns a written row replaces a stored one by; none: rows are only ever inserted.
  std::string_view conflict = "id";
  // The columns a write changes in a stored row: "name, weight".
  std::string_view updated;
  // How the rows load; by `conflict` when not given.
  std::string_view order;
};

// The member `Member` (a text, an integer or a flag) in the column `name`.
template <auto Member>
constexpr auto column(std::string_view name) {
  using T = typename MemberOf<decltype(Member)>::Class;
  using V = typename MemberOf<decltype(Member)>::Value;
  return Column<T>{.name = name,
                   .write = [](const T& row) -> DbValue {
                     if constexpr (std::is_same_v<V, std::string>) {
                       return row.*Member;
                     } else {
                       return int64_t{row.*Member};
                     }
                   },
                   .read = [](const DbValue& value, T& row) -> Status {
                     if constexpr (std::is_same_v<V, std::string>) {
                       row.*Member = db_text(value);
                     } else if constexpr (std::is_same_v<V, bool>) {
                       row.*Member = db_int(value) != 0;
                     } else {
                       row.*Member = static_cast<V>(db_int(value));
                     }
                     return {};
                   }};
}

// The enumeration `Member` by its name (`Name`, `Parse`); a name this version does not know leaves
// the row's default.
template <auto Member, auto Name, auto Parse>
constexpr auto named_column(std::string_view name) {
  using T = typename MemberOf<decltype(Member)>::Class;
  return Column<T>{.name = name,
                   .write = [](const T& row) -> DbValue { return std::string(Name(row.*Member)); },
                   .read = [](const DbValue& value, T& row) -> Status {
                     if (const auto parsed = Parse(db_text(value))) row.*Member = *parsed;
                     return {};
                   }};
}

// "id, name, ...": the codec's columns in order.
template <typename T>
[[nodiscard]] std::string column_list(const ColumnCodec<T>& codec) {
  std::vector<std::string_view> names;
  for (const Column<T>& c : codec.columns) names.push_back(c.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

template <typename T>
[[nodiscard]] Status write_columns(Db& db, const ColumnCodec<T>& codec, const T& row) {
  std::vector<DbValue> params;
  for (const Column<T>& c : codec.columns) params.push_back(c.write(row));
  // A type has one codec, so its statement is built once, not on every write.
  static const std::string sql =
      upsert_statement(codec.table, column_list(codec), codec.conflict, codec.updated);
  return db.exec(sql, params);
}

// A row from the codec's columns, selected in order.
template <typename T>
[[nodiscard]] Result<T> read_columns(const ColumnCodec<T>& codec, const DbRow& r) {
  T row{};
  for (size_t i = 0; i < codec.columns.size(); ++i) {
    if (auto ok = codec.columns[i].read(r[i], row); !ok) return std::unexpected(ok.error());
  }
  return row;
}

template <typename T>
concept StoredInColumns = requires {
  { codec_of(Tag<T>{}) } -> std::same_as<const ColumnCodec<T>&>;
};

template <StoredInColumns T>
[[nodiscard]] Status write_row(Db& db, const T& row) {
  return write_columns(db, codec_of(Tag<T>{}), row);
}

template <StoredInColumns T>
[[nodiscard]] Status load_rows(Db& db, Tag<T> tag, std::vector<Row>& out) {
  const ColumnCodec<T>& codec = codec_of(tag);
  const std::string_view order = codec.order.empty() ? codec.conflict : codec.order;
  return load_each(
      db, fmt::format("SELECT {} FROM {} ORDER BY {}", column_list(codec), codec.table, order), out,
      [&codec](const DbRow& r) { return read_columns(codec, r); });
}

}  // namespace allot

// column for members kept under their own names: ALLOT_COLUMNS(JoinToken, id, name).
#define ALLOT_COLUMNS(Type, ...) ALLOT_MEMBER_TABLE(Type, ALLOT_COLUMN, __VA_ARGS__)
#define ALLOT_COLUMN(member) ::allot::column<&AllotRow::member>(#member),
