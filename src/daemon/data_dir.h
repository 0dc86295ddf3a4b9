// What allotd keeps in its data dir beside the store: a lock that only one allotd holds, and the
// secrets key that tenants' sealed values open with.
#pragma once

#include <string>

#include "common/error.h"
#include "common/seal.h"

namespace allot {

// The data dir's lock, held until this is destroyed (or the process ends or execs).
class DataDirLock {
 public:
  explicit DataDirLock(int fd) : fd_(fd) {}
  ~DataDirLock();
  DataDirLock(DataDirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DataDirLock& operator=(DataDirLock&&) = delete;
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

 private:
  int fd_;
};

// Takes `dir`/allotd.lock (made with `dir` if missing) exclusively. kConflict naming the holder's
// pid when another allotd holds it: two on one data dir would each write the store and the logs
// the other reads. kUnavailable when the file cannot be made.
[[nodiscard]] Result<DataDirLock> lock_data_dir(const std::string& dir);

// `dir`/secrets.key, made when missing only if `store_is_new` or `make_new` (the operator's
// --new-secrets-key). kConflict when it is missing beside a store that holds data: a new key
// would silently leave every sealed value unopenable.
[[nodiscard]] Result<Sealer> open_secrets_key(const std::string& dir, bool store_is_new,
                                              bool make_new);

}  // namespace allot
