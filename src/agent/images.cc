#include "agent/images.h"

#include <sys/statvfs.h>

#include <filesystem>
#include <set>

#include <spdlog/spdlog.h>

#include "agent/runtime/command.h"
#include "agent/runtime/state_file.h"
#include "common/base64.h"
#include "common/image_ref.h"
#include "common/limits.h"

namespace allot::agent {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr auto kListTimeout = 60s;
constexpr auto kPullTimeout = std::chrono::hours(2);
constexpr auto kRetry = 5s;

// The JSON array podman printed, without the warnings it may have written around it (the output
// holds its stderr too): from the first line that opens an array to the last that closes one.
std::string json_array_in(const std::string& output) {
  size_t begin = output.starts_with('[') ? 0 : output.find("\n[");
  if (begin == std::string::npos) return output;
  begin += output[begin] == '\n' ? 1 : 0;
  const size_t end = output.rfind(']');
  return end == std::string::npos || end < begin ? output : output.substr(begin, end - begin + 1);
}

// podman's image listing as the controller takes it, newest first, at most kMaxNodeImages.
std::optional<json> read_listing(const std::string& podman) {
  auto listed = run_command({podman, "images", "--format", "json"}, kListTimeout);
  if (!listed || listed->exit_code != 0) return std::nullopt;
  const json images = json::parse(json_array_in(listed->output), nullptr, false);
  if (!images.is_array()) return std::nullopt;
  json list = json::array();
  std::set<std::string> seen;  // podman lists an image once per name it has.
  for (const json& image : images) {
    if (list.size() == limits::kMaxNodeImages) break;
    if (!seen.insert(image.value("Id", "")).second) continue;
    json names = image.value("Names", json(nullptr));
    list.push_back({{"id", image.value("Id", "")},
                    {"names", names.is_array() ? names : json::array()},
                    {"size_bytes", image.value("Size", int64_t{0})},
                    {"created_at_ms", image.value("Created", int64_t{0}) * 1000}});
  }
  json out = {{"list", list}, {"store_total_bytes", 0}, {"store_free_bytes", 0}};
  auto root = run_command({podman, "info", "--format", "{{.Store.GraphRoot}}"}, kListTimeout);
  struct statvfs fs{};
  if (root && root->exit_code == 0 && ::statvfs(last_line(root->output).c_str(), &fs) == 0) {
    out["store_total_bytes"] =
        static_cast<int64_t>(fs.f_blocks) * static_cast<int64_t>(fs.f_frsize);
    out["store_free_bytes"] = static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
  }
  return out;
}

}  // namespace

ImageStore::ImageStore(ImageStoreOptions options) : options_(std::move(options)) {
  worker_ = std::thread([this] { work(); });
}

ImageStore::~ImageStore() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  woken_.notify_all();
  // A pull under way finishes first (at most kPullTimeout): podman must not be cut mid-write.
  worker_.join();
}

void ImageStore::want(const json& pull) {
  const std::string id = pull.value("pull_id", "");
  if (id.empty()) return;
  std::lock_guard lock(mutex_);
  if (pulls_.contains(id)) return;
  Pull wanted{.image = pull.value("image", ""),
              .username = pull.value("registry_username", ""),
              .password = pull.value("registry_password", "")};
  if (!parse_image_ref(wanted.image)) {
    wanted.state = "failed";
    wanted.message = "not an image reference: " + wanted.image;
  } else {
    queue_.push_back(id);
  }
  pulls_.emplace(id, std::move(wanted));
  woken_.notify_all();
}

json ImageStore::reports() const {
  std::lock_guard lock(mutex_);
  json out = json::array();
  for (const auto& [id, pull] : pulls_) {
    if (pull.state == "pending") continue;
    out.push_back({{"pull_id", id}, {"state", pull.state}, {"message", pull.message}});
  }
  return out;
}

void ImageStore::keep_only(const std::set<std::string>& listed) {
  std::lock_guard lock(mutex_);
  std::erase_if(pulls_, [&](const auto& entry) {
    const std::string& state = entry.second.state;
    return (state == "done" || state == "failed") && !listed.contains(entry.first);
  });
}

std::optional<json> ImageStore::take_listing() {
  std::lock_guard lock(mutex_);
  if (listing_taken_ || !listing_) return std::nullopt;
  listing_taken_ = true;
  return listing_;
}

void ImageStore::work() {
  auto next_refresh = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!queue_.empty()) {
      const std::string id = queue_.front();
      queue_.pop_front();
      Pull& wanted = pulls_.at(id);
      wanted.state = "pulling";
      Pull copy = wanted;
      lock.unlock();
      pull(id, std::move(copy));
      lock.lock();
      next_refresh = std::chrono::steady_clock::now();
      continue;
    }
    if (std::chrono::steady_clock::now() >= next_refresh) {
      lock.unlock();
      const bool listed = refresh();
      lock.lock();
      // podman can fail while another of its commands holds its store: try again soon.
      next_refresh = std::chrono::steady_clock::now() + (listed ? options_.refresh : kRetry);
      continue;
    }
    woken_.wait_until(lock, next_refresh);
  }
}

// One pre-pull, with the operator's credential for the image's registry (or none); the file that
// holds it lives only while the pull runs.
void ImageStore::pull(const std::string& id, Pull wanted) {
  const auto ref = parse_image_ref(wanted.image);
  json auths = json::object();
  if (!wanted.username.empty()) {
    auths[ref->registry] = {{"auth", base64_encode(wanted.username + ":" + wanted.password)}};
  }
  const std::string auth = options_.work_dir + "/pull-" + id + ".json";
  std::string state = "failed";
  std::string message;
  if (Status written =
          write_file_atomically(auth, auth + ".tmp", json{{"auths", auths}}.dump(), 0600);
      !written) {
    message = written.error().message;
  } else {
    std::vector<std::string> argv = {"env"};
    if (!options_.registries_conf.empty()) {
      argv.push_back("CONTAINERS_REGISTRIES_CONF=" + options_.registries_conf);
    }
    argv.insert(argv.end(), {options_.podman, "pull", "--quiet", "--authfile", auth, ref->full()});
    auto out = run_command(argv, kPullTimeout);
    std::error_code ec;
    std::filesystem::remove(auth, ec);
    if (!out) {
      message = out.error().message;
    } else if (out->exit_code != 0) {
      message = last_line(out->output);
      if (message.starts_with("Error: ")) message = message.substr(7);
    } else {
      state = "done";
    }
  }
  spdlog::info("msg=\"pre-pull\" pull={} image={} state={} message=\"{}\"", id, wanted.image, state,
               message);
  std::lock_guard lock(mutex_);
  Pull& pulled = pulls_.at(id);
  pulled.state = state;
  pulled.message = message.substr(0, 500);
}

bool ImageStore::refresh() {
  auto listing = read_listing(options_.podman);
  if (!listing) {
    spdlog::warn("msg=\"cannot list the node's images\"");
    return false;
  }
  std::lock_guard lock(mutex_);
  if (listing_ != listing) {
    listing_ = std::move(listing);
    listing_taken_ = false;
  }
  return true;
}

}  // namespace allot::agent
