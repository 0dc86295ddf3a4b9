// The store's codecs: one per row type. A row kept as a JSON document beside its key columns (most
// of them) has a DocumentCodec, found by `codec_of(Tag<R>)`: its table, the columns that key
// it, how it is encoded and decoded, what a write replaces, and the order it loads in. A row with
// columns of its own has a ColumnCodec (store/codecs/columns.h); one written another way (the
// ledger's, the event log's) has a pair of overloads instead:
//
//   Status write_row(Db& db, const R& row);                      // in the caller's transaction
//   Status load_rows(Db& db, Tag<R> tag, std::vector<Row>& out);  // every stored R, in order
//
// declared per domain (store/codecs/<domain>.h). The SqlStore writes and loads every type of Row
// through them, so that a row type without its codec does not compile.
#pragma once

#include <concepts>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/kernel/row.h"
#include "store/db.h"

namespace allot {

template <typename T>
struct Tag {};

template <typename T>
struct DocumentCodec {
  std::string_view table;
  // The columns beside the document, in order: the document's fields of the same names, such as
  // "id, tenant_id", unless `columns` gives them.
  std::string_view keys;
  nlohmann::json (*encode)(const T& row);
  Result<T> (*decode)(const nlohmann::json& doc);
  std::vector<DbValue> (*columns)(const T& row) = nullptr;
  // The columns a written row replaces a stored one by; none: rows are only ever inserted.
  std::string_view conflict = "id";
  // Key columns that change with the document: "state, number".
  std::string_view updated;
  // How the rows load, oldest or smallest first; by `conflict` when not given.
  std::string_view order;
};

// The values of the document's fields named in `keys` ("id, tenant_id"), in that order.
[[nodiscard]] std::vector<DbValue> document_columns(const nlohmann::json& doc,
                                                    std::string_view keys);

// The statement that writes a row's `columns` ("id, name") as $1..$n: an insert, or with
// `conflict` one that replaces the `updated` columns of a row stored with the same values there.
[[nodiscard]] std::string upsert_statement(std::string_view table, std::string_view columns,
                                           std::string_view conflict, std::string_view updated);

template <typename T>
concept StoredAsDocument = requires {
  { codec_of(Tag<T>{}) } -> std::same_as<const DocumentCodec<T>&>;
};

template <StoredAsDocument T>
[[nodiscard]] Status write_row(Db& db, const T& row) {
  const DocumentCodec<T>& codec = codec_of(Tag<T>{});
  const nlohmann::json doc = codec.encode(row);
  std::vector<DbValue> params =
      codec.columns ? codec.columns(row) : document_columns(doc, codec.keys);
  params.emplace_back(doc.dump());
  // A type has one codec, so its statement is built once, not on every write.
  static const std::string sql =
      upsert_statement(codec.table, fmt::format("{}, doc", codec.keys), codec.conflict,
                       codec.updated.empty() ? "doc" : fmt::format("{}, doc", codec.updated));
  return db.exec(sql, params);
}

// Appends every row `select` returns to `out`, each read by `read`: a row, or a Result of one
// when reading can fail.
template <typename Read>
[[nodiscard]] Status load_each(Db& db, std::string_view select, std::vector<Row>& out, Read read) {
  auto rows = db.query(select, {});
  if (!rows) return std::unexpected(rows.error());
  for (const DbRow& r : *rows) {
    auto object = read(r);
    if constexpr (requires { object.error(); }) {
      if (!object) return std::unexpected(object.error());
      out.emplace_back(std::move(*object));
    } else {
      out.emplace_back(std::move(object));
    }
  }
  return {};
}

template <StoredAsDocument T>
[[nodiscard]] Status load_rows(Db& db, Tag<T> tag, std::vector<Row>& out) {
  const DocumentCodec<T>& codec = codec_of(tag);
  const std::string_view order = codec.order.empty() ? codec.conflict : codec.order;
  return load_each(db, fmt::format("SELECT doc FROM {} ORDER BY {}", codec.table, order), out,
                   [&codec](const DbRow& r) {
                     return codec.decode(nlohmann::json::parse(db_text(r[0]), nullptr, false));
                   });
}

}  // namespace allot
