// A 2xx is durable: allotd killed with SIGKILL right after answering loses nothing. SIGTERM
// finishes what is in flight and exits 0.
#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include <signal.h>
#include <nlohmann/json.hpp>

#include "support/daemon.h"
#include "support/postgres.h"

namespace allot::testing {
namespace {

using nlohmann::json;

class DurabilityTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string url;
    if (GetParam() == "postgres") {
      if (!postgres_available()) GTEST_SKIP() << "no PostgreSQL test server";
      auto database = new_postgres_database();
      ASSERT_TRUE(database);
      url = *database;
    }
    daemon_ = std::make_unique<Daemon>(url);
    ASSERT_TRUE(daemon_->start());
    key_ = daemon_->admin_key();
  }

  std::unique_ptr<Daemon> daemon_;
  std::string key_;
};

TEST_P(DurabilityTest, AWriteAnsweredJustBeforeSigkillIsThereAfterRestart) {
  std::vector<std::string> created;
  for (int round = 0; round < 3; ++round) {
    const std::string name = "tenant-" + std::to_string(round);
    const ClientResponse response =
        daemon_->request("POST", "/v1/tenants", json{{"name", name}}.dump(), key_);
    ASSERT_EQ(response.status, 201) << response.body;
    daemon_->kill();  // No chance to flush anything after the answer.
    created.push_back(json::parse(response.body).value("id", ""));
    ASSERT_TRUE(daemon_->start());
    for (const std::string& id : created) {
      EXPECT_EQ(daemon_->request("GET", "/v1/tenants/" + id, "", key_).status, 200) << id;
    }
  }
  // The first start's key still works and no second operator key was printed.
  EXPECT_EQ(daemon_->request("GET", "/v1/whoami", "", key_).status, 200);
  EXPECT_EQ(daemon_->output().find("shown once"), daemon_->output().rfind("shown once"));
}

TEST_P(DurabilityTest, SigtermAnswersRequestsInFlightThenExitsZero) {
  std::atomic<int> ok{0};
  std::atomic<int> refused{0};
  std::atomic<bool> stop{false};
  std::vector<std::string> created[4];
  std::vector<std::thread> writers;
  writers.reserve(4);
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      auto client = HttpClient::connect_to(daemon_->url()).value();
      for (int i = 0; !stop && i < 10'000; ++i) {
        const json body{{"name", "w" + std::to_string(w) + "-" + std::to_string(i)}};
        auto response = client->send("POST", "/v1/tenants", body.dump(), key_);
        if (!response) break;  // The server has closed: fine once it is stopping.
        if (response->status == 201) {
          ++ok;
          created[w].push_back(json::parse(response->body).value("id", ""));
        } else {
          ++refused;
        }
      }
    });
  }
  while (ok < 20) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(daemon_->stop(), 0) << daemon_->output();
  stop = true;
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(refused, 0);
  ASSERT_TRUE(daemon_->start());
  for (const auto& ids : created) {
    for (const std::string& id : ids) {
      EXPECT_EQ(daemon_->request("GET", "/v1/tenants/" + id, "", key_).status, 200) << id;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, DurabilityTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace allot::testing
