// A 128-bit integer for intermediate products of money arithmetic (rate x milli x seconds), so
// that nothing overflows before the final range check. GCC and Clang provide it as an extension.
#pragma once

namespace allot {

__extension__ using Int128 = __int128;

}  // namespace allot
