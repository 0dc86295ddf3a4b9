// What a relay (HttpResponse::relay) gets: the client's connection, as the server read it.
#pragma once

#include <string_view>

#include "api/http.h"
#include "common/asio.h"

namespace allot {

struct Exchange {
  boost::beast::tcp_stream& stream;
  // Bytes the client sent after the request, not yet read.
  boost::beast::flat_buffer& buffer;
  // The request's header; its body went to the handler, in HttpRequest::body.
  const boost::beast::http::request<boost::beast::http::string_body>& request;
  // May the connection go on to another request, as far as the client and the server go.
  bool keep_alive;
  // Sends `response` as the server sends any answer.
  std::function<boost::asio::awaitable<void>(HttpResponse)> answer;
  // Set by a relay that waits on something other than this connection: called when the server
  // stops, after it has closed the connection.
  std::function<void()>& on_stop;
};

// Answers 101 Switching Protocols to `protocol`; `ec` tells whether it was sent.
boost::asio::awaitable<void> switch_protocols(Exchange& exchange, std::string_view protocol,
                                              boost::system::error_code& ec);

}  // namespace allot
