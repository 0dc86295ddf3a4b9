// The framework's default queue-sort and reserve plugins, and the Policy defaults that use them.
#include <tuple>

#include "sched/sched.h"

namespace allot::sched {
namespace {

class PriorityFairShare final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "priority-fair-share"; }
  bool less(const QueuedRequest& a, const QueuedRequest& b) const override {
    return std::tie(a.priority, a.weighted_share, a.created_ms, a.id) <
           std::tie(b.priority, b.weighted_share, b.created_ms, b.id);
  }
};

class Resources final : public ReservePlugin {
 public:
  std::string_view name() const override { return "resources"; }
  void reserve(NodeView& node, const Request& request, const Choice& choice) const override {
    allocate(node, request, choice);
  }
  void unreserve(NodeView& node, const Request& request, const Choice& choice) const override {
    release(node, request, choice);
  }
};

}  // namespace

const QueueSortPlugin& priority_fair_share_sort() {
  static const PriorityFairShare kPlugin;
  return kPlugin;
}

const ReservePlugin& resources_reserve() {
  static const Resources kPlugin;
  return kPlugin;
}

const QueueSortPlugin& Policy::queue_sort() const { return priority_fair_share_sort(); }

void Policy::reserve(NodeView& node, const Request& request, const Choice& choice) const {
  resources_reserve().reserve(node, request, choice);
}

void Policy::unreserve(NodeView& node, const Request& request, const Choice& choice) const {
  resources_reserve().unreserve(node, request, choice);
}

}  // namespace allot::sched
