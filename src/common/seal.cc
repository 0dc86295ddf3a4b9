#include "common/seal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <system_error>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "common/base64.h"

namespace allot {
namespace {

constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;

using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

std::string errno_text() { return std::generic_category().message(errno); }

const unsigned char* bytes(std::string_view text) {
  return reinterpret_cast<const unsigned char*>(text.data());
}

// AES-256-GCM over `length` bytes of `in` into `out`, with `context` as associated data. Sealing
// writes the tag to `tag`; opening checks the tag found there.
bool run_gcm(const unsigned char* key, bool sealing, const unsigned char* nonce,
             std::string_view context, const unsigned char* in, size_t length, unsigned char* out,
             unsigned char* tag) {
  const CipherContext ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  int len = 0;
  const bool started =
      ctx &&
      EVP_CipherInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key, nonce, sealing ? 1 : 0) == 1 &&
      EVP_CipherUpdate(ctx.get(), nullptr, &len, bytes(context),
                       static_cast<int>(context.size())) == 1 &&
      EVP_CipherUpdate(ctx.get(), out, &len, in, static_cast<int>(length)) == 1;
  if (!started) return false;
  if (sealing) {
    return EVP_CipherFinal_ex(ctx.get(), out + len, &len) == 1 &&
           EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, tag) == 1;
  }
  return EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag) == 1 &&
         EVP_CipherFinal_ex(ctx.get(), out + len, &len) == 1;
}

Result<Sealer> make_key_file(const std::string& path) {
  std::array<unsigned char, Sealer::kKeyBytes> key{};
  if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) {
    return fail(ErrorCode::kUnavailable, "no random bytes for the secrets key");
  }
  const std::string tmp = path + ".tmp";
  const int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) return fail(ErrorCode::kUnavailable, "cannot create " + tmp + ": " + errno_text());
  const bool written =
      ::write(out, key.data(), key.size()) == static_cast<ssize_t>(key.size()) && ::fsync(out) == 0;
  ::close(out);
  if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return fail(ErrorCode::kUnavailable, "cannot write " + path + ": " + errno_text());
  }
  return Sealer(key);
}

}  // namespace

Result<Sealer> Sealer::open_key_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return make_key_file(path);
  if (fd < 0) return fail(ErrorCode::kUnavailable, "cannot read " + path + ": " + errno_text());
  std::array<unsigned char, kKeyBytes> key{};
  struct stat st{};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const ssize_t got = ::read(fd, key.data(), key.size());
  char extra = 0;
  const ssize_t more = ::read(fd, &extra, 1);
  ::close(fd);
  if (!stat_ok || got != static_cast<ssize_t>(key.size()) || more != 0) {
    return fail(ErrorCode::kInvalidArgument, path + " is not a 32-byte secrets key");
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return fail(ErrorCode::kInvalidArgument,
                path + " may be read by others: chmod 600 it (it opens tenants' secrets)");
  }
  return Sealer(key);
}

Result<std::string> Sealer::seal(std::string_view plaintext, std::string_view context) const {
  std::string out(kNonceBytes + plaintext.size() + kTagBytes, '\0');
  auto* data = reinterpret_cast<unsigned char*>(out.data());
  if (RAND_bytes(data, kNonceBytes) != 1) return fail(ErrorCode::kUnavailable, "no random bytes");
  const bool ok =
      run_gcm(key_.data(), /*sealing=*/true, data, context, bytes(plaintext), plaintext.size(),
              data + kNonceBytes, data + kNonceBytes + plaintext.size());
  if (!ok) return fail(ErrorCode::kInternal, "sealing failed");
  return base64_encode(out);
}

Result<std::string> Sealer::open(std::string_view sealed, std::string_view context) const {
  auto raw = base64_decode(sealed);
  if (!raw || raw->size() < kNonceBytes + kTagBytes) {
    return fail(ErrorCode::kInternal, "a sealed secret is malformed");
  }
  const size_t length = raw->size() - kNonceBytes - kTagBytes;
  auto* data = reinterpret_cast<unsigned char*>(raw->data());
  std::string plain(length, '\0');
  auto* out = reinterpret_cast<unsigned char*>(plain.data());
  const bool ok = run_gcm(key_.data(), /*sealing=*/false, data, context, data + kNonceBytes, length,
                          out, data + kNonceBytes + length);
  if (!ok) return fail(ErrorCode::kInternal, "a sealed secret does not open with this key");
  return plain;
}

}  // namespace allot
