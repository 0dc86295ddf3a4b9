// Included ahead of every source file (CMakeLists.txt): nlohmann::json's misuse checks, such as a
// const operator[] on a key that is not there, throw instead of aborting. A peer's JSON of an
// unexpected shape then fails the one request or command that read it, never the whole process.
// (A check inside one of the library's noexcept functions still ends the process, as before.)
#pragma once

#include <stdexcept>
#include <string>

namespace allot {

[[noreturn]] inline void json_misused(const char* condition) {
  throw std::logic_error(std::string("unexpected JSON: ") + condition);
}

}  // namespace allot

#define JSON_ASSERT(condition) ((condition) ? void(0) : ::allot::json_misused(#condition))
