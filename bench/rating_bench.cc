// Rating speed: 1,000,000 usage intervals priced against an effective-dated catalog with a price
// change every hour of a 30-day month, for 8 models x 4 regions x 3 price classes.
//
//   rating_bench [--intervals 1000000] [--seed 42]
//
// Each interval is an instance's run: a key, GPU milli (a share or 1-8 whole GPUs), CPU, memory,
// and a start and length (up to a day) in the month; its charge is the sum over the stretches
// between price changes of the charge rule. Prints one JSON line: intervals, stretches rated,
// seconds, intervals per second, and the total charged (so the work cannot be optimised away).
#include <chrono>
#include <iostream>
#include <random>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "meter/rating.h"

int main(int argc, char** argv) {
  CLI::App app("rating speed");
  size_t intervals = 1'000'000;
  uint64_t seed = 42;
  app.add_option("--intervals", intervals, "how many usage intervals");
  app.add_option("--seed", seed, "random seed");
  CLI11_PARSE(app, argc, argv);

  using allot::PriceClass;
  const allot::TimeMs month_start = 1'796'083'200'000;  // 2026-12-01T00:00:00Z
  const int64_t month_s = int64_t{30} * 24 * 3600;
  std::mt19937_64 rng(seed);
  allot::meter::PriceCatalog catalog;
  std::vector<allot::meter::PriceKey> keys;
  for (const char* model : {"A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB", "B200-180GB",
                            "L4-24GB", "L40S-48GB", "RTX4090-24GB"}) {
    for (const char* region : {"eu-west", "eu-north", "us-east", "us-west"}) {
      for (PriceClass c : {PriceClass::kOnDemand, PriceClass::kSpot, PriceClass::kReserved}) {
        allot::meter::PriceKey key{.model = model, .region = region, .price_class = c};
        for (int64_t hour = 0; hour < month_s / 3600; ++hour) {
          const allot::meter::Price price{
              .key = key,
              .effective_ms = month_start + hour * 3'600'000,
              .gpu_hour_micros = 500'000 + static_cast<int64_t>(rng() % 4'000'000),
              .cpu_hour_micros = 10'000,
              .memory_gib_hour_micros = 2'000};
          if (!catalog.add(price, month_start)) return 2;
        }
        keys.push_back(std::move(key));
      }
    }
  }
  struct Interval {
    size_t key;
    int64_t milli, cpu, memory, start_s, end_s;
  };
  std::vector<Interval> work;
  work.reserve(intervals);
  for (size_t i = 0; i < intervals; ++i) {
    const int64_t start = month_start / 1000 + static_cast<int64_t>(rng() % month_s);
    const int64_t milli = rng() % 4 == 0 ? 1 + static_cast<int64_t>(rng() % 999)
                                         : 1000 * (1 + static_cast<int64_t>(rng() % 8));
    work.push_back({static_cast<size_t>(rng() % keys.size()), milli,
                    static_cast<int64_t>(rng() % 64'000), static_cast<int64_t>(rng() % 524'288),
                    start, start + 1 + static_cast<int64_t>(rng() % 86'400)});
  }
  int64_t total = 0;
  size_t stretches = 0;
  const auto begin = std::chrono::steady_clock::now();
  for (const Interval& w : work) {
    const auto parts = catalog.stretches(keys[w.key], w.start_s, w.end_s);
    stretches += parts.size();
    auto charge = allot::meter::stretches_charge(parts, w.milli, w.cpu, w.memory);
    if (!charge) return 2;
    total += *charge;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::cout << nlohmann::json{{"intervals", intervals},
                              {"stretches", stretches},
                              {"seconds", seconds},
                              {"intervals_per_s",
                               std::round(static_cast<double>(intervals) / seconds)},
                              {"total_charged_micros", total}}
                   .dump()
            << "\n";
  return 0;
}
