// The header section of an answer a relayed server sends, before Beast's parser reads it. Some
// servers end its lines with a bare LF (busybox httpd's CGI does); curl and browsers take that,
// and so does the relay, which makes them CRLF as the parser requires.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace allot {

// The most of an answer's header section the relay reads before it lets the parser refuse it.
inline constexpr size_t kMaxAnswerHeadBytes = size_t{16} * 1024;

// Where the header section at the start of `bytes` ends, just past its blank line (lines ended by
// CRLF or a bare LF); nullopt while no blank line has come.
std::optional<size_t> answer_head_end(std::string_view bytes);

// `head` with every LF that no CR precedes made CRLF.
std::string with_crlf(std::string_view head);

}  // namespace allot
