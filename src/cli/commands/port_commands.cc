// ports, port-forward: an instance's published ports with their links, and a local port whose
// connections allotd carries to a port of the instance through its node's tunnel.
#include <charconv>
#include <csignal>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "client/stream.h"

namespace allot::cli {
namespace {

using nlohmann::json;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

const std::vector<Column> kPortColumns = {
    {"port", "port"}, {"protocol", "protocol"}, {"public", "public"},
    {"url", "url"},   {"link", "link"},         {"link expires", "link_expires_at"}};

int show_ports(Session& session, const std::string& id) {
  json answer;
  const int code = session.call("GET", "/v1/instances/" + id + "/ports", nullptr, answer);
  if (code != kOk) return code;
  std::string server = session.settings().server;
  while (server.ends_with('/')) server.pop_back();
  json items = answer.value("items", json::array());
  for (json& item : items) {
    item["url"] = server + item.value("path", "");
    if (item["link"].is_string()) item["link"] = server + item["link"].get<std::string>();
  }
  if (session.json_output()) {
    answer["items"] = items;
    session.show(answer);
    return kOk;
  }
  if (items.empty()) {
    std::cout << "instance " << id << " publishes no ports (allot run --port PORT)\n";
    return kOk;
  }
  session.show_list(items, kPortColumns);
  if (answer.value("state", "") != "running") {
    std::cerr << "note: instance " << id << " is " << answer.value("state", "")
              << ": its ports answer while it runs\n";
  }
  return kOk;
}

// LOCAL:REMOTE, or REMOTE alone for the same number here; false (with a message) otherwise.
bool read_forward(const std::string& text, int& local, int& remote) {
  auto number = [](std::string_view digits, int least, int& out) {
    int value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() ||
        value < least || value > 65535) {
      return false;
    }
    out = value;
    return true;
  };
  const size_t colon = text.find(':');
  const std::string_view remote_text =
      colon == std::string::npos ? text : std::string_view(text).substr(colon + 1);
  const std::string_view local_text =
      colon == std::string::npos ? remote_text : std::string_view(text).substr(0, colon);
  if (!number(remote_text, 1, remote) || !number(local_text, 0, local)) {
    std::cerr << "error: port-forward takes LOCAL:REMOTE (ports; LOCAL 0 picks a free one), not '"
              << text << "'\n";
    return false;
  }
  return true;
}

asio::awaitable<void> carry(tcp::socket socket, net::Endpoint server, std::string target,
                            std::string authorization) {
  auto stream = co_await net::open_upgraded(std::move(server), std::move(target),
                                            std::move(authorization), "allot-stream");
  if (!stream) {
    std::cerr << "error: " << stream.error().message << "\n";
    co_return;
  }
  boost::system::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  boost::beast::tcp_stream local(std::move(socket));
  boost::beast::flat_buffer nothing;
  co_await net::splice(local, nothing, stream->conn, stream->pending);
}

asio::awaitable<void> accept_all(tcp::acceptor& acceptor, net::Endpoint server, std::string target,
                                 std::string authorization) {
  for (;;) {
    boost::system::error_code ec;
    tcp::socket socket =
        co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted) co_return;
    if (ec) continue;
    asio::co_spawn(acceptor.get_executor(), carry(std::move(socket), server, target, authorization),
                   asio::detached);
  }
}

int port_forward(Session& session, const std::string& id, const std::string& spec,
                 const std::string& address) {
  int local = 0;
  int remote = 0;
  if (!read_forward(spec, local, remote)) return kUsage;
  int unreached = kOk;
  const auto url = session.server_url(unreached);
  if (!url) return unreached;
  auto server = net::parse_base_url(*url);
  if (!server) {
    std::cerr << "error: " << server.error().message << "\n";
    return kUsage;
  }
  // The instance is looked up first, so that a wrong id or key fails here and not per connection.
  json instance;
  if (const int code = session.call("GET", "/v1/instances/" + id, nullptr, instance); code != kOk) {
    return code;
  }
  asio::io_context io{1};
  boost::system::error_code ec;
  const auto listen_address = asio::ip::make_address(address, ec);
  if (ec) {
    std::cerr << "error: --address: '" << address << "' is not an IP address\n";
    return kUsage;
  }
  tcp::acceptor acceptor(io);
  const tcp::endpoint endpoint(listen_address, static_cast<uint16_t>(local));
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    std::cerr << "error: cannot listen on " << address << ":" << local << ": " << ec.message()
              << "\n";
    return kLocalFailure;
  }
  std::cout << fmt::format("forwarding {}:{} to port {} of {} (Ctrl-C stops)", address,
                           acceptor.local_endpoint().port(), remote, id)
            << '\n'
            << std::flush;  // Whoever started it reads this line for the port.
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int) { io.stop(); });
  asio::co_spawn(
      io,
      accept_all(acceptor, *server, fmt::format("/v1/instances/{}/forward/{}", id, remote),
                 "Bearer " + session.settings().key),
      asio::detached);
  io.run();
  return kOk;
}

}  // namespace

void add_port_commands(CLI::App& app, Action& action) {
  static std::string id, spec, address = "127.0.0.1";

  CLI::App* ports =
      app.add_subcommand("ports", "an instance's published ports, with links to open them");
  ports->add_option("id", id, "the instance's id")->required();
  ports->callback([&action] { action = [](Session& session) { return show_ports(session, id); }; });

  CLI::App* forward =
      app.add_subcommand("port-forward",
                         "carry connections to a local port to a port of an instance (SSH, a "
                         "database, VS Code): allot port-forward INSTANCE LOCAL:REMOTE");
  forward->add_option("id", id, "the instance's id")->required();
  forward->add_option("ports", spec, "LOCAL:REMOTE, or REMOTE for the same number")->required();
  forward->add_option("--address", address, "where to listen (default 127.0.0.1)");
  forward->callback([&action] {
    action = [](Session& session) { return port_forward(session, id, spec, address); };
  });
}

}  // namespace allot::cli
