#include "support/raw_http.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/asio.h"

namespace allot::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

RawAnswer raw_request(const std::string& url, const std::string& method, const std::string& target,
                      const std::string& key, const std::string& body, const std::string& cookie,
                      const std::map<std::string, std::string>& headers) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  const std::string address = url.substr(std::string("http://").size());
  const size_t colon = address.rfind(':');
  stream.connect(tcp::resolver(io).resolve(address.substr(0, colon), address.substr(colon + 1)));
  http::request<http::string_body> out{http::string_to_verb(method), target, 11};
  out.set(http::field::host, "localhost");
  if (!key.empty()) out.set(http::field::authorization, "Bearer " + key);
  if (!cookie.empty()) out.set(http::field::cookie, cookie);
  for (const auto& [name, value] : headers) out.set(name, value);
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

std::string raw_send(const std::string& url, const std::string& bytes, int wait_ms) {
  return raw_send_pieces(url, {bytes}, 0, wait_ms);
}

std::string raw_send_pieces(const std::string& url, const std::vector<std::string>& pieces,
                            int pause_ms, int wait_ms) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  const std::string address = url.substr(std::string("http://").size());
  const size_t colon = address.rfind(':');
  boost::system::error_code ec;
  stream.connect(tcp::resolver(io).resolve(address.substr(0, colon), address.substr(colon + 1)),
                 ec);
  if (ec) return {};
  for (size_t i = 0; i < pieces.size() && !ec; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    asio::write(stream.socket(), asio::buffer(pieces[i]), ec);
  }
  // The server may answer and close before all is sent; what it said is still read.
  stream.expires_after(std::chrono::milliseconds(wait_ms));
  std::string out;
  std::array<char, 4096> chunk{};
  std::function<void(boost::system::error_code, size_t)> on_read;
  on_read = [&](boost::system::error_code read_ec, size_t n) {
    out.append(chunk.data(), n);
    if (!read_ec) stream.async_read_some(asio::buffer(chunk), on_read);
  };
  stream.async_read_some(asio::buffer(chunk), on_read);
  io.run();
  return out;
}

int status_of(const std::string& answer) {
  if (!answer.starts_with("HTTP/1.") || answer.size() < 12) return 0;
  return std::atoi(answer.substr(9, 3).c_str());
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
