#include "support/raw_http.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "common/asio.h"

namespace allot::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

RawAnswer raw_request(const std::string& url, const std::string& method, const std::string& target,
                      const std::string& key, const std::string& body, const std::string& cookie) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  const std::string address = url.substr(std::string("http://").size());
  const size_t colon = address.rfind(':');
  stream.connect(tcp::resolver(io).resolve(address.substr(0, colon), address.substr(colon + 1)));
  http::request<http::string_body> out{http::string_to_verb(method), target, 11};
  out.set(http::field::host, "localhost");
  if (!key.empty()) out.set(http::field::authorization, "Bearer " + key);
  if (!cookie.empty()) out.set(http::field::cookie, cookie);
  out.body() = body;
  out.prepare_payload();
  http::write(stream, out);
  beast::flat_buffer buffer;
  http::response<http::string_body> in;
  http::read(stream, buffer, in);
  RawAnswer answer{.status = static_cast<int>(in.result_int()), .body = in.body()};
  for (const auto& field : in) {
    std::string name(field.name_string());
    std::ranges::transform(name, name.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    answer.headers[name] = std::string(field.value());
  }
  return answer;
}

std::string error_code_of(const std::string& body) {
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  return parsed.is_object() && parsed.contains("error") && parsed["error"].is_object()
             ? parsed["error"].value("code", "")
             : "";
}

int free_loopback_port() {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

}  // namespace allot::testing
