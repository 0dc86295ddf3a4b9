#include "common/base64.h"

#include <openssl/evp.h>

namespace allot {

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(bytes.data()),
                                      static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(written));
  return out;
}

Result<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return fail(ErrorCode::kInvalidArgument, "bad base64 length");
  std::string out(3 * (text.size() / 4), '\0');
  const int written = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(text.data()),
                                      static_cast<int>(text.size()));
  if (written < 0) return fail(ErrorCode::kInvalidArgument, "not base64");
  // EVP_DecodeBlock counts padding as zero bytes: drop one per '='. Base64 pads with at most two;
  // more ("====" decodes to three bytes) would take the size below zero.
  size_t padding = 0;
  for (size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) ++padding;
  if (padding > 2) return fail(ErrorCode::kInvalidArgument, "not base64");
  out.resize(static_cast<size_t>(written) - padding);
  return out;
}

}  // namespace allot
