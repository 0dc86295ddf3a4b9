// A temporary directory removed with everything in it when the test ends.
#pragma once

#include <filesystem>
#include <string>

namespace allot::testing {

// A file's whole text; empty when it cannot be read.
std::string read_file(const std::filesystem::path& path);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace allot::testing
