#include "cli/invoice_pdf.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere.

namespace allot::cli {
namespace {

namespace fs = std::filesystem;

// The browser to print with: $ALLOT_CHROMIUM, else the first known name on the PATH.
std::string find_chromium() {
  if (const char* chosen = std::getenv("ALLOT_CHROMIUM"); chosen != nullptr && *chosen != '\0') {
    return chosen;
  }
  const char* path = std::getenv("PATH");
  const std::string_view dirs = path == nullptr ? "/usr/bin" : path;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    size_t from = 0;
    while (from <= dirs.size()) {
      const size_t to = std::min(dirs.find(':', from), dirs.size());
      const fs::path candidate = fs::path(dirs.substr(from, to - from)) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
      from = to + 1;
    }
  }
  return "";
}

// Runs argv to its end with its output discarded; returns its exit status, or -1.
int run_quietly(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace

std::string print_pdf(const std::string& html, const std::string& pdf_path) {
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    return "no Chromium to print with: install chromium or set ALLOT_CHROMIUM to its path";
  }
  std::error_code ec;
  const fs::path work = fs::temp_directory_path(ec) / fmt::format("allot-pdf-{}", getpid());
  fs::create_directories(work / "profile", ec);
  if (ec) return fmt::format("cannot make a working directory: {}", ec.message());
  const fs::path page = work / "invoice.html";
  std::ofstream(page, std::ios::binary) << html;
  const fs::path out = fs::absolute(pdf_path, ec);
  fs::remove(out, ec);
  // A profile of its own, so that a browser the user has open is neither used nor disturbed.
  const int status =
      run_quietly({chromium, "--headless", "--no-sandbox", "--disable-gpu",
                   "--user-data-dir=" + (work / "profile").string(), "--no-pdf-header-footer",
                   "--print-to-pdf=" + out.string(), "file://" + page.string()});
  fs::remove_all(work, ec);
  if (status != 0 || !fs::is_regular_file(out) || fs::file_size(out, ec) == 0) {
    return fmt::format("{} did not print the PDF (exit status {})", chromium, status);
  }
  return "";
}

}  // namespace allot::cli
