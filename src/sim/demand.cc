#include "sim/demand.h"

#include <algorithm>

namespace allot::sim {

Demand hourly_demand(const std::vector<TimedPod>& pods) {
  int64_t end_s = 0;
  for (const TimedPod& pod : pods) end_s = std::max(end_s, pod.deletion_s);
  Demand demand;
  demand.hours = static_cast<int>(end_s / kHourS);
  demand.created.assign(static_cast<size_t>(demand.hours), 0);
  for (const TimedPod& pod : pods) {
    const int64_t milli = gpu_milli_of(pod.request);
    if (milli == 0) continue;
    const std::string model =
        pod.request.models.empty() ? std::string(kAnyModel) : pod.request.models.front();
    std::vector<double>& series = demand.gpus_by_model[model];
    series.resize(static_cast<size_t>(demand.hours), 0.0);
    ++demand.pods_by_model[model];
    const int64_t created_hour = pod.creation_s / kHourS;
    if (created_hour < demand.hours) ++demand.created[static_cast<size_t>(created_hour)];
    const double gpus = static_cast<double>(milli) / 1000;
    const int64_t last_hour =
        std::min<int64_t>(demand.hours, (pod.deletion_s + kHourS - 1) / kHourS);
    for (int64_t hour = created_hour; hour < last_hour; ++hour) {
      const int64_t from_s = std::max(pod.creation_s, hour * kHourS);
      const int64_t to_s = std::min(pod.deletion_s, (hour + 1) * kHourS);
      series[static_cast<size_t>(hour)] += gpus * static_cast<double>(to_s - from_s) / kHourS;
    }
  }
  return demand;
}

int first_busy_hour(const std::vector<int>& created, int pods_per_day) {
  constexpr size_t kDay = 24;
  int in_day = 0;
  for (size_t hour = 0; hour < created.size(); ++hour) {
    in_day += created[hour];
    if (hour >= kDay) in_day -= created[hour - kDay];
    // The window [hour - 23, hour] is full from hour 23 on; before that it is a shorter start.
    if (in_day >= pods_per_day) return static_cast<int>(hour >= kDay - 1 ? hour + 1 - kDay : 0);
  }
  return -1;
}

}  // namespace allot::sim
