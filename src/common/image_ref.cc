#include "common/image_ref.h"

#include <cctype>
#include <vector>

namespace allot {
namespace {

constexpr size_t kMaxReferenceBytes = 512;
constexpr size_t kMaxTagBytes = 128;
constexpr size_t kDigestHexDigits = 64;

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// One path component: lowercase letters and digits, joined by '.', '_', "__" or runs of '-'.
bool valid_component(std::string_view part) {
  if (part.empty() || !lower_alnum(part.front()) || !lower_alnum(part.back())) return false;
  for (size_t i = 0; i < part.size(); ++i) {
    const char c = part[i];
    if (lower_alnum(c) || c == '-') continue;
    if (c == '.' || c == '_') {
      const bool double_underscore = c == '_' && i + 1 < part.size() && part[i + 1] == '_';
      if (double_underscore) ++i;
      if (!lower_alnum(part[i + 1])) return false;
      continue;
    }
    return false;
  }
  return true;
}

// A registry host: DNS labels or an IPv4 address, an optional :PORT.
bool valid_registry(std::string_view host) {
  const size_t colon = host.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    for (const char c : port) {
      if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
    }
    host = host.substr(0, colon);
  }
  if (host.empty() || host.front() == '-' || host.front() == '.' || host.back() == '.') {
    return false;
  }
  for (const char c : host) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-' && c != '.') return false;
  }
  return true;
}

bool valid_tag(std::string_view tag) {
  if (tag.empty() || tag.size() > kMaxTagBytes || tag.front() == '.' || tag.front() == '-') {
    return false;
  }
  for (const char c : tag) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

bool valid_digest(std::string_view digest) {
  constexpr std::string_view kPrefix = "sha256:";
  if (!digest.starts_with(kPrefix) || digest.size() != kPrefix.size() + kDigestHexDigits) {
    return false;
  }
  for (const char c : digest.substr(kPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::unexpected<Error> invalid(const std::string& why) {
  return fail(ErrorCode::kInvalidArgument, "image reference " + why);
}

}  // namespace

std::string ImageRef::full() const {
  std::string out = registry + "/";
  if (registry == "docker.io" && repository.find('/') == std::string::npos) out += "library/";
  out += repository;
  if (!tag.empty()) out += ":" + tag;
  if (!digest.empty()) out += "@" + digest;
  return out;
}

Result<ImageRef> parse_image_ref(std::string_view text) {
  if (text.empty()) return invalid("must not be empty");
  if (text.size() > kMaxReferenceBytes) return invalid("is over 512 bytes");
  ImageRef ref;
  if (const size_t at = text.find('@'); at != std::string_view::npos) {
    ref.digest = std::string(text.substr(at + 1));
    if (!valid_digest(ref.digest)) {
      return invalid("digest must be sha256: and 64 lowercase hex digits");
    }
    text = text.substr(0, at);
  }
  // A tag follows the last ':' that comes after the last '/' (a ':' before it is a port).
  const size_t slash = text.rfind('/');
  const size_t colon = text.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    ref.tag = std::string(text.substr(colon + 1));
    if (!valid_tag(ref.tag)) {
      return invalid(
          "tag must be 1 to 128 letters, digits, '_', '.' or '-', not starting with . or -");
    }
    text = text.substr(0, colon);
  }
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  // The first component names a registry when it could not be a path: it has '.' or ':', or is
  // "localhost".
  const size_t first_slash = text.find('/');
  if (first_slash != std::string_view::npos) {
    const std::string_view first = text.substr(0, first_slash);
    if (first.find_first_of(".:") != std::string_view::npos || first == "localhost") {
      if (!valid_registry(first)) return invalid("names a malformed registry");
      ref.registry = std::string(first);
      text = text.substr(first_slash + 1);
    }
  }
  if (ref.registry.empty()) ref.registry = "docker.io";
  size_t begin = 0;
  while (true) {
    const size_t end = text.find('/', begin);
    const std::string_view part =
        text.substr(begin, end == std::string_view::npos ? text.npos : end - begin);
    if (!valid_component(part)) {
      return invalid(
          "path must be lowercase letters and digits, joined by '.', '_', '__' or '-', in parts "
          "split by '/'");
    }
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  ref.repository = std::string(text);
  return ref;
}

}  // namespace allot
