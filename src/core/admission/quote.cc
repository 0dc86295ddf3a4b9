#include "core/admission/quote.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/limits.h"
#include "common/money.h"
#include "core/kernel/validate.h"

namespace allot {
namespace {

std::optional<int64_t> measure(const QuoteOption& o, Prefer prefer) {
  switch (prefer) {
    case Prefer::kCarbon:
      return o.carbon_mg_per_hour;
    case Prefer::kLatency:
      return o.latency_ms;
    case Prefer::kNone:
    case Prefer::kPrice:
      break;
  }
  return o.price_micros_per_hour;
}

std::string grams(int64_t mg) { return fmt::format("{}.{:03} g/h", mg / 1000, mg % 1000); }

// A value of the preferred measure as people read it; `diff` words a difference (no unit per
// hour on money, since "0.600000/h below" reads worse than "0.600000 below").
std::string show(Prefer prefer, int64_t value, bool diff = false) {
  switch (prefer) {
    case Prefer::kCarbon:
      return grams(value);
    case Prefer::kLatency:
      return fmt::format("{} ms", value);
    case Prefer::kNone:
    case Prefer::kPrice:
      break;
  }
  return Money::from_micros(value).to_string() + (diff ? "" : "/h");
}

// How a quote words a measure: its best option, and an option where the measure is not known.
struct MeasureWords {
  std::string_view best;
  std::string_view unknown;
};

MeasureWords words(Prefer prefer) {
  switch (prefer) {
    case Prefer::kCarbon:
      return {.best = "cleanest", .unknown = "no carbon intensity known"};
    case Prefer::kLatency:
      return {.best = "closest", .unknown = "no latency known"};
    case Prefer::kNone:
    case Prefer::kPrice:
      break;
  }
  return {.best = "cheapest", .unknown = "no price set"};
}

// The order: room now first, then the measure (known first, lower first), then the price (known
// first, lower first), then region and model names, so that no two options compare equal.
using OrderKey =
    std::tuple<bool, bool, int64_t, bool, int64_t, const std::string&, const std::string&>;

OrderKey order_key(const QuoteOption& o, Prefer prefer) {
  const std::optional<int64_t> m = measure(o, prefer);
  return OrderKey(!o.fits, !m.has_value(), m.value_or(0), !o.price_micros_per_hour.has_value(),
                  o.price_micros_per_hour.value_or(0), o.region, o.gpu_model);
}

// Why `a`, which ranks right before `b`, comes before it when their measure is equal.
std::string tie_break(const QuoteOption& a, const QuoteOption& b) {
  if (a.price_micros_per_hour != b.price_micros_per_hour) return "ahead by price";
  return a.region != b.region ? "ahead by region name" : "ahead by model name";
}

std::string why_fitting(const std::vector<RankedOption>& ranked, size_t i, Prefer prefer) {
  const QuoteOption& o = ranked[i].option;
  const std::optional<int64_t> m = measure(o, prefer);
  if (!m) return std::string(words(prefer).unknown) + ", ranked after those known";
  const QuoteOption& best = ranked.front().option;
  if (i > 0) {
    const int64_t behind = *m - *measure(best, prefer);
    if (behind == 0)
      return fmt::format("{}, tied with the best, behind it by price or name", show(prefer, *m));
    return fmt::format("{}, {} above the best", show(prefer, *m), show(prefer, behind, true));
  }
  std::string out = fmt::format("{}: {}", words(prefer).best, show(prefer, *m));
  if (ranked.size() > 1 && ranked[1].option.fits) {
    const QuoteOption& next = ranked[1].option;
    const std::optional<int64_t> next_m = measure(next, prefer);
    if (!next_m) return out + ", the only one with the measure known";
    if (*next_m == *m) return out + ", tied with next, " + tie_break(o, next);
    out += fmt::format(", {} below next", show(prefer, *next_m - *m, true));
  }
  return out;
}

std::string why(const std::vector<RankedOption>& ranked, size_t i, Prefer prefer) {
  const QuoteOption& o = ranked[i].option;
  if (o.fits) return why_fitting(ranked, i, prefer);
  const std::optional<int64_t> m = measure(o, prefer);
  return fmt::format("no room now: at most {} whole GPUs free on one node{}", o.free_gpus,
                     m ? ", " + show(prefer, *m) : "");
}

// Why the hard limits leave `o` out, or empty when they do not.
std::string excluded_why(const QuoteOption& o, const RegionWishes& wishes) {
  if (!wishes.regions.empty() &&
      std::ranges::find(wishes.regions, o.region) == wishes.regions.end()) {
    return "not in allowed regions";
  }
  // Work is never placed where it would go uncharged.
  if (!o.price_micros_per_gpu_hour) {
    return fmt::format("no {} price set", price_class_name(wishes.price_class));
  }
  if (wishes.max_price_micros > 0 && *o.price_micros_per_gpu_hour > wishes.max_price_micros) {
    return "over max price " + Money::from_micros(wishes.max_price_micros).to_string();
  }
  if (wishes.prefer == Prefer::kLatency && !o.latency_ms) {
    return "no latency known from " + wishes.from;
  }
  return "";
}

}  // namespace

Status check_region_name(const std::string& region) {
  if (region.empty()) return fail(ErrorCode::kInvalidArgument, "a region name must not be empty");
  if (auto ok = check_name("region", region); !ok) return ok;
  if (region.find_first_of(", \t") != std::string::npos) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("region '{}' is not a region name: no commas or spaces", region));
  }
  return {};
}

RegionWishes wishes_of(const InstanceSpec& spec) {
  return RegionWishes{.prefer = spec.prefer,
                      .from = spec.from,
                      .max_price_micros = spec.max_price_micros,
                      .regions = spec.regions,
                      .price_class = spec.price_class};
}

Status check_wishes(const RegionWishes& wishes) {
  if (wishes.prefer == Prefer::kLatency && wishes.from.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "preferring latency needs 'from': the client location it is measured from");
  }
  if (!wishes.from.empty()) {
    if (auto ok = check_name("from", wishes.from); !ok) return ok;
  }
  if (wishes.max_price_micros < 0 || wishes.max_price_micros > limits::kMaxMoneyMicros) {
    return fail(ErrorCode::kInvalidArgument, "max_price must be 0 (any) or a positive amount");
  }
  if (wishes.regions.size() > limits::kMaxAllowedRegions) {
    return fail(ErrorCode::kLimitExceeded,
                fmt::format("at most {} allowed regions", limits::kMaxAllowedRegions));
  }
  std::set<std::string> seen;
  for (const std::string& region : wishes.regions) {
    if (auto ok = check_region_name(region); !ok) return ok;
    if (!seen.insert(region).second) {
      return fail(ErrorCode::kInvalidArgument, fmt::format("region '{}' is named twice", region));
    }
  }
  return {};
}

Quote rank_quote(std::vector<QuoteOption> options, const RegionWishes& wishes) {
  Quote quote;
  quote.prefer = wishes.prefer == Prefer::kNone ? Prefer::kPrice : wishes.prefer;
  const Prefer prefer = quote.prefer;
  std::ranges::sort(options, [prefer](const QuoteOption& a, const QuoteOption& b) {
    return order_key(a, prefer) < order_key(b, prefer);
  });
  quote.ranked.reserve(options.size());
  for (QuoteOption& option : options) {
    std::string reason = excluded_why(option, wishes);
    if (!reason.empty()) {
      quote.excluded.push_back(ExcludedOption{.option = std::move(option), .reason = reason});
      continue;
    }
    const int rank = static_cast<int>(quote.ranked.size()) + 1;
    quote.ranked.push_back(RankedOption{.option = std::move(option), .rank = rank, .why = ""});
  }
  for (size_t i = 0; i < quote.ranked.size(); ++i) {
    quote.ranked[i].why = why(quote.ranked, i, prefer);
  }
  return quote;
}

}  // namespace allot
