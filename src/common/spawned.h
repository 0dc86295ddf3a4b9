// A completion for asio::co_spawn in place of asio::detached: an exception that escapes a spawned
// coroutine (a parser's std::length_error on a peer's bytes, say) is logged and dropped, so one
// connection's fault never reaches io_context::run and ends the process.
#pragma once

#include <exception>

#include <spdlog/spdlog.h>

namespace allot {

inline auto log_escape(const char* what) {
  return [what](const std::exception_ptr& escaped) {
    if (!escaped) return;
    try {
      std::rethrow_exception(escaped);
    } catch (const std::exception& e) {
      spdlog::error("{} ended by an exception: {}", what, e.what());
    } catch (...) {
      spdlog::error("{} ended by an exception", what);
    }
  };
}

}  // namespace allot
