// SPDX-License-Identifier: Apache-2.0
/// @file
/// A growing set of closed intervals, each with a payload, that finds the ones meeting a query
/// interval in time proportional to log n plus the number visited: a treap ordered by the
/// intervals' starts, each node knowing the latest end in its subtree. Buffer assignment keeps
/// one per allocation, so that asking whether a buffer can join an allocation meets only the
/// values whose lifetimes reach it, not every value already there; XLA's best fit keeps the
/// placed pieces of colocated items in one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace xlamem::detail {

template <class Payload>
class interval_set {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }

  void insert(std::int64_t lo, std::int64_t hi, Payload payload) {
    // Priorities from a hash of the insertion count (splitmix64): deterministic, and the
    // tree's depth is O(log n) whatever order the intervals come in.
    std::uint64_t z = (nodes_.size() + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    nodes_.push_back({lo, hi, hi, payload, z ^ (z >> 31), none, none});
    root_ = insert_at(root_, static_cast<index>(nodes_.size() - 1));
  }

  /// Calls `stop(payload)` for intervals meeting [lo, hi] (closed), in no particular order,
  /// until it returns true; returns whether it did.
  template <class Stop>
  bool any_meeting(std::int64_t lo, std::int64_t hi, Stop&& stop) const {
    // The nodes still to visit: on the stack while few (a query per buffer placed; the
    // treap's depth is about 3 log n), in a vector past that.
    constexpr std::size_t on_stack = 128;
    index near[on_stack];
    std::size_t count = 0;
    std::vector<index> far;
    const auto push = [&](index t) {
      if (count < on_stack) {
        near[count++] = t;
      } else {
        far.push_back(t);
      }
    };
    const auto pop = [&] {
      if (!far.empty()) {
        const index t = far.back();
        far.pop_back();
        return t;
      }
      return near[--count];
    };
    if (root_ != none) push(root_);
    while (count > 0 || !far.empty()) {
      const node& n = nodes_[pop()];
      if (n.max_hi < lo) continue;  // nothing below reaches lo
      if (n.left != none) push(n.left);
      if (n.lo > hi) continue;  // this one and everything to its right start after hi
      if (n.hi >= lo && stop(n.payload)) return true;
      if (n.right != none) push(n.right);
    }
    return false;
  }

 private:
  using index = std::uint32_t;
  static constexpr index none = ~index{0};
  struct node {
    std::int64_t lo, hi, max_hi;
    Payload payload;
    std::uint64_t priority;
    index left, right;
  };
  std::vector<node> nodes_;
  index root_ = none;

  void pull(index t) {
    auto& n = nodes_[t];
    n.max_hi = n.hi;
    if (n.left != none) n.max_hi = std::max(n.max_hi, nodes_[n.left].max_hi);
    if (n.right != none) n.max_hi = std::max(n.max_hi, nodes_[n.right].max_hi);
  }
  index rotate_right(index t) {
    const index l = nodes_[t].left;
    nodes_[t].left = nodes_[l].right;
    nodes_[l].right = t;
    pull(t);
    pull(l);
    return l;
  }
  index rotate_left(index t) {
    const index r = nodes_[t].right;
    nodes_[t].right = nodes_[r].left;
    nodes_[r].left = t;
    pull(t);
    pull(r);
    return r;
  }
  // Recursion depth is the treap's depth: O(log n) expected.
  index insert_at(index t, index n) {
    if (t == none) return n;
    if (nodes_[n].lo < nodes_[t].lo) {
      nodes_[t].left = insert_at(nodes_[t].left, n);
      if (nodes_[nodes_[t].left].priority > nodes_[t].priority) return rotate_right(t);
    } else {
      nodes_[t].right = insert_at(nodes_[t].right, n);
      if (nodes_[nodes_[t].right].priority > nodes_[t].priority) return rotate_left(t);
    }
    pull(t);
    return t;
  }
};

}  // namespace xlamem::detail
