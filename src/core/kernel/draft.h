// A command's working copy of the objects it changes. Reads see the draft over the state; nothing
// reaches the state until the command has succeeded, so a rejection changes nothing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/kernel/state.h"

namespace allot {

class Draft {
 public:
  explicit Draft(const State& base) : base_(&base), last_event_seq_(base.last_event_seq) {}

  const State& base() const { return *base_; }

  const Node* node(const std::string& id) const;
  const Instance* instance(const std::string& id) const;
  // A copy to change; the first call copies the object from the state.
  Node& edit_node(const std::string& id);
  Instance& edit_instance(const std::string& id);
  // Adds a new object.
  Node& add_node(Node node);
  Instance& add_instance(Instance instance);
  // Volumes: what placement changes of them (a local volume's node).
  const Volume* volume(const std::string& id) const;
  Volume& edit_volume(const std::string& id);

  // Every node as the draft sees it, in id order, calling fn(const Node&).
  template <typename Fn>
  void for_each_node(Fn&& fn) const {
    for (const auto& [id, node] : base_->nodes) fn(nodes_.contains(id) ? nodes_.at(id) : node);
    for (const auto& [id, node] : nodes_) {
      if (!base_->nodes.contains(id)) fn(node);
    }
  }

  // Every instance as the draft sees it, added ones too, calling fn(const Instance&).
  template <typename Fn>
  void for_each_instance(Fn&& fn) const {
    for (const auto& [id, instance] : base_->instances) {
      auto it = instances_.find(id);
      fn(it != instances_.end() ? it->second : instance);
    }
    for (const auto& [id, instance] : instances_) {
      if (!base_->instances.contains(id)) fn(instance);
    }
  }

  // The ids of the node's instances that hold GPUs (not final), as the draft sees them.
  std::vector<std::string> instances_on(const std::string& node_id) const;

  // Every changed or added instance, calling fn(const Instance&).
  template <typename Fn>
  void for_each_changed_instance(Fn&& fn) const {
    for (const auto& [id, instance] : instances_) fn(instance);
  }

  // Every changed or added node, calling fn(const Node&).
  template <typename Fn>
  void for_each_changed_node(Fn&& fn) const {
    for (const auto& [id, node] : nodes_) fn(node);
  }

  // Money moved by the command, applied to the ledger as one chain when the command succeeds.
  void add_account(ledger::Account account) { accounts_.push_back(std::move(account)); }
  void add_transfer(ledger::Transfer transfer) { transfers_.push_back(std::move(transfer)); }
  const std::vector<ledger::Account>& accounts() const { return accounts_; }
  const std::vector<ledger::Transfer>& transfers() const { return transfers_; }
  // The number of the command's next event: the one counter every part of a command numbers its
  // events with, so that two parts never give the same number.
  int64_t next_event_seq() { return ++last_event_seq_; }

  // Any other changed object (the books' rows), written after the rest.
  void add_row(Row row) { others_.push_back(std::move(row)); }

  // The changed objects, nodes first, then instances and volumes, then the ledger's new accounts
  // and transfers, then others.
  std::vector<Row> rows() const;

  // Why a budget blocks new work per (tenant, project), as admission found it in this command.
  // The base state and the time are fixed within a command, so each is computed once however
  // many queued instances ask (see budgets.h).
  using BudgetMemo = std::map<std::pair<std::string, std::string>, std::optional<std::string>>;
  BudgetMemo& budget_memo() const { return budget_memo_; }

 private:
  const State* base_;  // A pointer, so that a trial copy of a draft can replace it.
  std::map<std::string, Node> nodes_;
  std::map<std::string, Instance> instances_;
  std::map<std::string, Volume> volumes_;
  std::vector<ledger::Account> accounts_;
  std::vector<ledger::Transfer> transfers_;
  std::vector<Row> others_;
  int64_t last_event_seq_;
  mutable BudgetMemo budget_memo_;  // A cache of what the base state decides: not a change.
};

}  // namespace allot
