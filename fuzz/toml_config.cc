// allotd's settings file, over any bytes: load_daemon_config with --config FILE (daemon/config.h),
// the bytes written to a temporary file once per input, and the launch templates of
// daemon/templates_config.h read from the same bytes parsed in memory, both as the file's
// [templates] table and as if the whole file were that table. Properties: nothing crashes or
// throws but toml++'s parse error (which config.cc catches too); --help is never set by a file.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "check.h"
#include "daemon/config.h"
#include "daemon/templates_config.h"

namespace allot {
namespace {

// The file each input is written to, in a directory of this process's own.
std::filesystem::path& config_path() {
  static std::filesystem::path path;
  return path;
}

void remove_config_dir() { std::filesystem::remove_all(config_path().parent_path()); }

void load_file(std::string_view bytes) {
  std::ofstream(config_path(), std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bool help = false;
  const auto no_environment = [](const char* /*name*/) -> const char* { return nullptr; };
  auto config =
      load_daemon_config({"allotd", "--config", config_path().string()}, no_environment, help);
  fuzz::require(!help, "a file does not ask for --help");
  if (config) (void)nfs_region_set(*config);
}

void read_templates_of(std::string_view bytes) {
  toml::table table;
  try {
    table = toml::parse(bytes, std::string_view("fuzz.toml"));
  } catch (const toml::parse_error&) {
    return;
  }
  (void)read_templates(table, "fuzz.toml");
  if (const toml::node* templates = table.get("templates")) {
    (void)read_templates(*templates, "fuzz.toml");
  }
}

}  // namespace
}  // namespace allot

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  std::string dir = (std::filesystem::temp_directory_path() / "allot-fuzz-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) std::abort();
  allot::config_path() = std::filesystem::path(dir) / "allotd.toml";
  std::atexit(allot::remove_config_dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = allot::fuzz::bytes_of(data, size);
  allot::load_file(bytes);
  allot::read_templates_of(bytes);
  return 0;
}
