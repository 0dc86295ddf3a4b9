// Boost 1.74's Asio uses std::exchange without including <utility>; include it first, once.
#pragma once

// clang-format off
#include <utility>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
// clang-format on
