// How many replicas the autoscaler wants, from the traffic the proxy measured.
#include "daemon/service_controller.h"

#include <gtest/gtest.h>

namespace allot {
namespace {

constexpr TimeMs kT0 = 1'800'000'000'000;

HostedService service(int desired) {
  return HostedService{.name = "chat",
                       .min_replicas = 1,
                       .max_replicas = 4,
                       .target_concurrency = 2,
                       .scale_to_zero_after_ms = 60'000,
                       .desired = desired,
                       .scale_reason = "before",
                       .created_at_ms = kT0,
                       .updated_at_ms = kT0};
}

class WantedReplicasTest : public ::testing::Test {
 protected:
  std::pair<int, std::string> wanted(const HostedService& s, TrafficStats t, TimeMs at) {
    return wanted_replicas(s, t, at, memory, options);
  }
  ServiceMemory memory;
  ServiceControllerOptions options;
};

TEST_F(WantedReplicasTest, AtZeroOnlyAWaitingRequestWakesIt) {
  EXPECT_EQ(wanted(service(0), {}, kT0 + 1'000).first, 0);
  const auto [want, why] = wanted(service(0), TrafficStats{.held = 1}, kT0 + 1'000);
  EXPECT_EQ(want, 1);
  EXPECT_EQ(why, "a request is waiting for a replica");
}

TEST_F(WantedReplicasTest, AQuietSpellTakesEveryReplicaAway) {
  const TrafficStats quiet{.last_request_ms = kT0 + 10'000};
  EXPECT_EQ(wanted(service(2), quiet, kT0 + 69'000).first, 2);  // Still within the delay.
  const auto [want, why] = wanted(service(2), quiet, kT0 + 70'000);
  EXPECT_EQ(want, 0);
  EXPECT_EQ(why, "no request for 60 s");
  // Not while a request is in flight.
  EXPECT_NE(
      wanted(service(2), TrafficStats{.in_flight = 1, .last_request_ms = kT0}, kT0 + 90'000).first,
      0);
}

TEST_F(WantedReplicasTest, LoadOverTheStableWindowSetsTheCountWithinTheRange) {
  const TrafficStats busy{.concurrency_stable = 5, .concurrency_panic = 5, .last_request_ms = kT0};
  EXPECT_EQ(wanted(service(1), busy, kT0 + 1'000).first, 3);  // 5 / 2, rounded up.
  const TrafficStats heavy{.concurrency_stable = 40, .last_request_ms = kT0};
  EXPECT_EQ(wanted(service(1), heavy, kT0 + 1'000).first, 4);  // The most.
}

TEST_F(WantedReplicasTest, APanicGrowsAtOnceAndFewerReplicasWaitTheirTurn) {
  const TrafficStats burst{.concurrency_stable = 1, .concurrency_panic = 7, .last_request_ms = kT0};
  const auto [want, why] = wanted(service(1), burst, kT0 + 1'000);
  EXPECT_EQ(want, 4);
  EXPECT_TRUE(why.starts_with("panic")) << why;
  // Less load: the count holds until fewer replicas have done for the delay.
  const TrafficStats calm{.concurrency_stable = 1, .concurrency_panic = 1, .last_request_ms = kT0};
  EXPECT_EQ(wanted(service(4), calm, kT0 + 2'000).first, 4);
  EXPECT_EQ(wanted(service(4), calm, kT0 + 2'000 + options.scale_down_delay_ms - 1).first, 4);
  EXPECT_EQ(wanted(service(4), calm, kT0 + 2'000 + options.scale_down_delay_ms).first, 1);
}

}  // namespace
}  // namespace allot
