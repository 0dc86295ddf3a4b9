#include "core/admission/admission.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/kernel/gpu_models.h"
#include "core/kernel/scheduler.h"
#include "core/money/budgets.h"
#include "core/money/money.h"

namespace allot {
namespace {

int64_t milli_of(const InstanceSpec& spec) {
  return spec.gpus > 0 ? int64_t{1000} * spec.gpus : spec.gpu_milli;
}

bool accepts(const InstanceSpec& spec, const std::string& model) {
  return spec.gpu_models.empty() ||
         std::any_of(spec.gpu_models.begin(), spec.gpu_models.end(),
                     [&](const std::string& m) { return gpu_model_matches(m, model); });
}

// A rule's model ("" for all, a model or a family) covers a GPU model.
bool covers(const std::string& rule_model, const std::string& model) {
  return rule_model.empty() || gpu_model_matches(rule_model, model);
}

bool applies(const Quota& q, const Instance& instance) {
  return q.live() && q.tenant_id == instance.tenant_id &&
         (q.project_id.empty() || q.project_id == instance.project_id);
}

using PerModel = ModelMilli;

// What the draft's placed instances hold per GPU model (by tenant, and of the instance's project)
// and the free milli per model: the state's indexes, corrected for what the draft has changed.
class Usage {
 public:
  Usage(const Draft& draft, const Instance& instance) : base_(draft.base()) {
    if (auto it = base_.held_by_project.find(instance.project_id);
        it != base_.held_by_project.end()) {
      project = it->second;
    }
    free = base_.free_by_model;
    draft.for_each_changed_node([&](const Node& now) {
      if (const Node* before = base_.node(now.id)) add_free(free, *before, -1);
      add_free(free, now, 1);
    });
    draft.for_each_changed_instance([&](const Instance& now) {
      PerModel change;
      if (const Instance* before = base_.instance(now.id)) {
        if (const Node* node = base_.node(before->node_id)) add_held(change, *node, *before, -1);
      }
      if (const Node* node = draft.node(now.node_id)) add_held(change, *node, now, 1);
      for (const auto& [model, milli] : change) {
        add_milli(changed_[now.tenant_id], model, milli);
        if (now.project_id == instance.project_id) add_milli(project, model, milli);
      }
    });
  }

  // What the tenant's placed work holds.
  PerModel of_tenant(const std::string& tenant) const {
    PerModel held;
    if (auto it = base_.held_by_tenant.find(tenant); it != base_.held_by_tenant.end()) {
      held = it->second;
    }
    if (auto it = changed_.find(tenant); it != changed_.end()) {
      for (const auto& [model, milli] : it->second) add_milli(held, model, milli);
    }
    return held;
  }

  PerModel project;  // What the instance's project holds.
  PerModel free;     // Free milli of healthy GPUs on nodes that take work.

 private:
  const State& base_;
  std::map<std::string, PerModel> changed_;  // What the draft's changes add, per tenant.
};

int64_t sum_covered(const PerModel& held, const std::string& rule_model) {
  int64_t total = 0;
  for (const auto& [model, milli] : held) total += covers(rule_model, model) ? milli : 0;
  return total;
}

std::string quota_scope(const Quota& q) {
  std::string scope = q.project_id.empty() ? "the tenant" : "project " + q.project_id;
  return q.gpu_model.empty() ? scope : fmt::format("{} on {}", scope, q.gpu_model);
}

// Why `model` is closed to the instance, or empty when it is open.
std::string closed_because(const State& state, const Instance& instance, const Usage& u,
                           const std::string& model, TimeMs now_ms) {
  const InstanceSpec& spec = instance.spec;
  const int64_t need = milli_of(spec);
  for (const auto& [id, q] : state.quotas) {
    if (!applies(q, instance) || !covers(q.gpu_model, model)) continue;
    const PerModel held = q.project_id.empty() ? u.of_tenant(instance.tenant_id) : u.project;
    const int64_t used = sum_covered(held, q.gpu_model);
    if (used + need > q.gpu_milli) {
      return fmt::format("quota {}: {} holds {} of its {} GPUs and asks {} more", q.id,
                         quota_scope(q), gpus_text(used), gpus_text(q.gpu_milli), gpus_text(need));
    }
  }
  if (spec.price_class == PriceClass::kSpot) return {};
  // Reserved milli per holder on this model, less what the holder already uses of it.
  std::map<std::string, int64_t> reserved;
  for (const auto& [id, r] : state.reservations) {
    if (r.in_force(now_ms) && covers(r.gpu_model, model)) {
      reserved[r.tenant_id] += int64_t{1000} * r.gpus;
    }
  }
  int64_t held_for_others = 0;
  for (const auto& [tenant, milli] : reserved) {
    if (tenant == instance.tenant_id) continue;
    const int64_t used = sum_covered(u.of_tenant(tenant), model);
    held_for_others += std::max<int64_t>(0, milli - used);
  }
  if (spec.price_class == PriceClass::kReserved) {
    auto own = reserved.find(instance.tenant_id);
    if (own == reserved.end()) return fmt::format("no reservation of {} is in force", model);
    const int64_t used = sum_covered(u.of_tenant(instance.tenant_id), model);
    if (used + need > own->second) {
      return fmt::format("its reservation of {} GPUs of {} is in full use", gpus_text(own->second),
                         model);
    }
  }
  auto free = u.free.find(model);
  const int64_t free_milli = free == u.free.end() ? 0 : free->second;
  if (held_for_others > 0 && free_milli - need < held_for_others) {
    return fmt::format("{} of the {} free GPUs of {} are reserved for other tenants",
                       gpus_text(std::min(held_for_others, free_milli)), gpus_text(free_milli),
                       model);
  }
  return {};
}

bool any_reservation_in_force(const State& state, TimeMs now_ms) {
  return std::any_of(state.reservations.begin(), state.reservations.end(),
                     [&](const auto& entry) { return entry.second.in_force(now_ms); });
}

}  // namespace

std::string gpus_text(int64_t milli) {
  if (milli % 1000 == 0) return fmt::format("{}", milli / 1000);
  std::string text = fmt::format("{}.{:03}", milli / 1000, milli % 1000);
  while (text.back() == '0') text.pop_back();
  return text;
}

Admission admit(const Draft& draft, const Instance& instance, TimeMs now_ms) {
  if (auto why = funds_block(draft, instance.tenant_id, now_ms)) return {.ok = false, .why = *why};
  const State& state = draft.base();
  auto& memo = draft.budget_memo();
  const auto scope = std::pair{instance.tenant_id, instance.project_id};
  auto blocked = memo.find(scope);
  if (blocked == memo.end()) {
    blocked = memo.emplace(scope, budget_blocks(state, scope.first, scope.second, now_ms)).first;
  }
  if (blocked->second) return Admission{.ok = false, .models = {}, .why = *blocked->second};
  const bool quotas = std::any_of(state.quotas.begin(), state.quotas.end(),
                                  [&](const auto& e) { return applies(e.second, instance); });
  if (!quotas && instance.spec.price_class != PriceClass::kReserved &&
      (instance.spec.price_class == PriceClass::kSpot ||
       !any_reservation_in_force(state, now_ms))) {
    return {};
  }
  const Usage usage(draft, instance);
  // The models the nodes have (a node's GPUs never go, so the state's and the draft's new nodes').
  std::set<std::string> models;
  for (const auto& [model, count] : state.gpus_by_model) {
    if (accepts(instance.spec, model)) models.insert(model);
  }
  draft.for_each_changed_node([&](const Node& node) {
    for (const Gpu& gpu : node.gpus) {
      if (accepts(instance.spec, gpu.model)) models.insert(gpu.model);
    }
  });
  Admission out;
  bool narrowed = false;
  std::string first_why;  // Every closed model's reason.
  for (const std::string& model : models) {
    std::string why = closed_because(state, instance, usage, model, now_ms);
    if (why.empty()) {
      out.models.push_back(model);
    } else {
      narrowed = true;
      // Each closed model's reason, once: several models often close for the same one.
      if (first_why.find(why) == std::string::npos) {
        first_why += (first_why.empty() ? "" : "; ") + why;
      }
    }
  }
  if (out.models.empty() && narrowed) return Admission{.ok = false, .models = {}, .why = first_why};
  if (!narrowed) out.models.clear();  // Nothing closed: the request stands as it is.
  return out;
}

Status check_priced(const State& state, const InstanceSpec& spec) {
  const bool falls_back = spec.price_class == PriceClass::kSpot && state.prices.spot_falls_back();
  for (const auto& [key, by_time] : state.prices.prices()) {
    const bool of_class = key.price_class == spec.price_class ||
                          (falls_back && key.price_class == PriceClass::kOnDemand);
    // A price that takes effect later counts: the work waits for it.
    if (of_class && !by_time.empty() && model_allowed(spec, key.model) &&
        (spec.region.empty() || spec.region == key.region) && region_allowed(spec, key.region)) {
      return {};
    }
  }
  const std::string models = spec.gpu_models.empty()
                                 ? "any GPU model"
                                 : fmt::format("{}", fmt::join(spec.gpu_models, "|"));
  std::string where = "in any region";
  if (!spec.region.empty()) where = "in region " + spec.region;
  if (!spec.regions.empty()) where = fmt::format("in regions {}", fmt::join(spec.regions, "|"));
  return fail(ErrorCode::kNoPrice,
              fmt::format("no {} price is set for {} {}: work there would go uncharged, so it is "
                          "not placed until an operator sets one (allot prices set){}",
                          price_class_name(spec.price_class), models, where,
                          spec.price_class == PriceClass::kSpot && !falls_back
                              ? " or lets spot fall back to on-demand (spot_fallback)"
                              : ""));
}

// The quota and reservation rules of check_admissible.
Status check_rules(const State& state, const std::string& tenant_id, const std::string& project_id,
                   const InstanceSpec& spec, TimeMs now_ms) {
  if (auto ok = check_budget(state, tenant_id, project_id, now_ms); !ok) return ok;
  const int64_t need = milli_of(spec) * std::max(1, spec.nodes);
  for (const auto& [id, q] : state.quotas) {
    if (!q.live() || q.tenant_id != tenant_id ||
        (!q.project_id.empty() && q.project_id != project_id) || need <= q.gpu_milli) {
      continue;
    }
    // Over this limit: refused when every model the request accepts falls under it.
    const bool all_covered =
        q.gpu_model.empty() ||
        (!spec.gpu_models.empty() &&
         std::all_of(spec.gpu_models.begin(), spec.gpu_models.end(),
                     [&](const std::string& m) { return gpu_model_matches(q.gpu_model, m); }));
    if (all_covered) {
      return fail(ErrorCode::kLimitExceeded,
                  fmt::format("asks {} GPUs, over quota {} ({} may hold {})", gpus_text(need), id,
                              quota_scope(q), gpus_text(q.gpu_milli)));
    }
  }
  if (spec.price_class != PriceClass::kReserved) return {};
  for (const auto& [id, r] : state.reservations) {
    if (r.tenant_id != tenant_id || r.cancelled_at_ms != 0 || r.ends_at_ms <= now_ms) continue;
    if (spec.gpu_models.empty() ||
        std::any_of(spec.gpu_models.begin(), spec.gpu_models.end(), [&](const std::string& m) {
          return gpu_model_matches(m, r.gpu_model) || gpu_model_matches(r.gpu_model, m);
        })) {
      return {};
    }
  }
  return fail(ErrorCode::kInvalidArgument,
              "price class reserved runs on the tenant's reservations, and it holds none, now or "
              "later, of a model this instance accepts");
}

Status check_admissible(const State& state, const std::string& tenant_id,
                        const std::string& project_id, const InstanceSpec& spec, TimeMs now_ms) {
  if (auto ok = check_rules(state, tenant_id, project_id, spec, now_ms); !ok) return ok;
  return check_priced(state, spec);
}

}  // namespace allot
