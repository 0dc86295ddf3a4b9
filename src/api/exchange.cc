#include "api/exchange.h"

#include <string>

namespace allot {

namespace asio = boost::asio;
namespace http = boost::beast::http;

asio::awaitable<void> switch_protocols(Exchange& exchange, std::string_view protocol,
                                       boost::system::error_code& ec) {
  http::response<http::empty_body> answer{http::status::switching_protocols, 11};
  answer.set(http::field::upgrade, std::string(protocol));
  answer.set(http::field::connection, "Upgrade");
  co_await http::async_write(exchange.stream, answer,
                             asio::redirect_error(asio::use_awaitable, ec));
}

}  // namespace allot
