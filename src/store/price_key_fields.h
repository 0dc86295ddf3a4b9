// A price key as the store keeps it: flat, as "gpu_model", "region" and "price_class", in each
// document that holds one (a price, an invoice line).
#pragma once

#include <array>

#include <nlohmann/json.hpp>

#include "meter/rating.h"
#include "store/document_fields.h"

namespace allot {

// A class by its name. One this version does not know reads as on demand, as in the specs stored
// before it existed; a document that must refuse one checks first (unknown_name).
void to_json(nlohmann::json& doc, PriceClass c);
void from_json(const nlohmann::json& doc, PriceClass& c);

// The fields of the key at `Key` (&meter::Price::key).
template <auto Key>
constexpr auto price_key_fields() {
  return std::array{field<Key, &meter::PriceKey::model>("gpu_model"),
                    field<Key, &meter::PriceKey::region>("region"),
                    field<Key, &meter::PriceKey::price_class>("price_class")};
}

}  // namespace allot
