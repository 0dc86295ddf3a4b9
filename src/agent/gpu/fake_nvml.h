// A fake libnvidia-ml for tests: a shared library exporting the NVML entry points the agent uses,
// driven by the state below. The test loads it by path and reaches the state through
// fake_nvml_state(); the backend under test loads the same library, so both see one state.
#pragma once

#include <string>
#include <vector>

namespace allot::agent::fake {

struct Gpu {
  std::string name = "NVIDIA H200";
  std::string uuid;
  std::string bus_id;
  unsigned long long memory_total = 150'754'820'096;
  unsigned long long memory_used = 0;
  unsigned int utilization_pct = 0;
  unsigned int power_mw = 0;
  unsigned long long energy_mj = 0;
  unsigned int temperature_c = 0;
  unsigned long long ecc_errors = 0;
  int ecc_result = 0;  // An NVML return code for nvmlDeviceGetTotalEccErrors.
  int mig_result = 3;  // NOT_SUPPORTED, as on GPUs without MIG.
  unsigned int mig_mode = 0;
  bool lost = false;  // Every device call answers NVML_ERROR_GPU_IS_LOST.
  bool xids_registered = false;
};

struct Event {
  int gpu = 0;
  unsigned long long type = 0;
  unsigned long long data = 0;
};

struct State {
  int init_result = 0;
  std::vector<Gpu> gpus;
  std::vector<Event> events;  // Pending, oldest first.
  int energy_calls = 0;
  int shutdowns = 0;
};

}  // namespace allot::agent::fake

extern "C" allot::agent::fake::State* fake_nvml_state();
