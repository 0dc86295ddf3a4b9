// What the fuzz targets share. A target's input is outside bytes; a crash, a sanitizer's report,
// an exception that escapes LLVMFuzzerTestOneInput (std::terminate) or a broken property checked
// here is a finding, which libFuzzer saves with the input that made it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace allot::fuzz {

// Aborts, naming the property, unless it holds.
inline void require(bool holds, const char* property) {
  if (holds) return;
  std::fprintf(stderr, "fuzz: a property does not hold: %s\n", property);
  std::abort();
}

inline std::string_view bytes_of(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace allot::fuzz
