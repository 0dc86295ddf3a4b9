// The store's codecs: one per row type. A row kept as a JSON document beside its key columns (most
// of them) has a DocumentCodec, found by `codec_of(Tag<R>)`: its table, its upsert, the columns
// that key it, how it is encoded and decoded, and the order it loads in. A row with columns of its
// own has a pair of overloads instead:
//
//   Status write_row(Db& db, const R& row);                      // in the caller's transaction
//   Status load_rows(Db& db, Tag<R> tag, std::vector<Row>& out);  // every stored R, in order
//
// declared per domain (store/codecs/<domain>.h). The SqlStore writes and loads every type of Row
// through them, so that a row type without its codec does not compile.
#pragma once

#include <concepts>
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
  // Its statement: the key columns as $1..$n-1, the document as $n.
  std::string_view upsert;
  // How the rows load, oldest or smallest first.
  std::string_view order;
  std::vector<DbValue> (*columns)(const T& row);
  nlohmann::json (*encode)(const T& row);
  Result<T> (*decode)(const nlohmann::json& doc);
};

template <typename T>
concept StoredAsDocument = requires {
  { codec_of(Tag<T>{}) } -> std::same_as<const DocumentCodec<T>&>;
};

template <StoredAsDocument T>
[[nodiscard]] Status write_row(Db& db, const T& row) {
  const DocumentCodec<T>& codec = codec_of(Tag<T>{});
  std::vector<DbValue> params = codec.columns(row);
  params.emplace_back(codec.encode(row).dump());
  return db.exec(codec.upsert, params);
}

template <StoredAsDocument T>
[[nodiscard]] Status load_rows(Db& db, Tag<T> tag, std::vector<Row>& out) {
  const DocumentCodec<T>& codec = codec_of(tag);
  auto rows = db.query(fmt::format("SELECT doc FROM {} ORDER BY {}", codec.table, codec.order), {});
  if (!rows) return std::unexpected(rows.error());
  for (const DbRow& r : *rows) {
    auto object = codec.decode(nlohmann::json::parse(db_text(r[0]), nullptr, false));
    if (!object) return std::unexpected(object.error());
    out.emplace_back(std::move(*object));
  }
  return {};
}

}  // namespace allot
