#include "api/web_files.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/limits.h"

namespace allot {
namespace {

bool safe_segment(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('\0') == std::string::npos &&
         s.find('\\') == std::string::npos && s.find('/') == std::string::npos;
}

}  // namespace

std::string content_type_for(const std::string& name) {
  const std::string ext = std::filesystem::path(name).extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json" || ext == ".map") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  if (ext == ".woff2") return "font/woff2";
  if (ext == ".txt") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

std::optional<HttpResponse> web_file(const std::string& web_dir,
                                     const std::vector<std::string>& segments) {
  if (web_dir.empty()) return std::nullopt;
  std::filesystem::path path(web_dir);
  for (const std::string& s : segments) {
    if (!safe_segment(s)) return std::nullopt;
    path /= s;
  }
  if (segments.empty()) path /= "index.html";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > static_cast<uintmax_t>(limits::kMaxWebFileBytes)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  HttpResponse response;
  response.body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  response.content_type = content_type_for(path.filename().string());
  const bool hashed = !segments.empty() && segments.front() == "assets";
  response.cache_control = hashed ? "public, max-age=31536000, immutable" : "no-cache";
  return response;
}

}  // namespace allot
