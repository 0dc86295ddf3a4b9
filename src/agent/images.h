// A container node's image store as the controller sees it: the images it holds, how full the
// filesystem under them is, and the operator's pre-pulls, which run one at a time on a thread of
// their own so that a long pull never holds up the node's reports.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

namespace allot::agent {

struct ImageStoreOptions {
  std::string podman = "podman";
  std::string registries_conf;  // CONTAINERS_REGISTRIES_CONF for pulls; empty: the node's own.
  std::string work_dir;         // Where a pull's credential file lives while it runs.
  std::chrono::milliseconds refresh{60'000};  // How often the listing is read again.
};

class ImageStore {
 public:
  explicit ImageStore(ImageStoreOptions options);
  ~ImageStore();
  ImageStore(const ImageStore&) = delete;
  ImageStore& operator=(const ImageStore&) = delete;

  // A pull the controller asks for ({"pull_id", "image"[, "registry_username",
  // "registry_password"]}); one already known is left as it is.
  void want(const nlohmann::json& pull);
  // What the next report says of the pulls: [{"pull_id", "state", "message"}].
  nlohmann::json reports() const;
  // Drops the finished pulls the controller no longer lists: it has recorded their end.
  void keep_only(const std::set<std::string>& listed);
  // The listing, when it changed since it was last taken: {"list", "store_total_bytes",
  // "store_free_bytes"}.
  std::optional<nlohmann::json> take_listing();

 private:
  struct Pull {
    std::string image;
    std::string username;
    std::string password;
    std::string state = "pending";  // pending, pulling, done or failed.
    std::string message;
  };

  void work();
  void pull(const std::string& id, Pull pull);
  bool refresh();  // False when podman could not list the images.

  ImageStoreOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable woken_;
  std::map<std::string, Pull> pulls_;  // Guarded by mutex_, as are the three below.
  std::deque<std::string> queue_;
  std::optional<nlohmann::json> listing_;
  bool listing_taken_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace allot::agent
