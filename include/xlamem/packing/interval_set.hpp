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
    insert_node(static_cast<index>(nodes_.size() - 1));
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
  // Node `n` goes where the treap's order puts it: down from the root while the nodes there
  // have a priority at least its own (each now also covering its end), then in place of the
  // first one that has not, whose subtree splits into its left and right (ties in start go
  // left: the in-order sequence is by start, then by insertion). The tree is the one inserting
  // at a leaf and rotating up builds, without a recursion the tree's depth deep and without
  // recomputing every ancestor's latest end from both children on the way back.
  void insert_node(index n) {
    const std::int64_t lo = nodes_[n].lo, hi = nodes_[n].hi;
    const std::uint64_t priority = nodes_[n].priority;
    index* link = &root_;
    while (*link != none && nodes_[*link].priority >= priority) {
      node& t = nodes_[*link];
      t.max_hi = std::max(t.max_hi, hi);
      link = lo < t.lo ? &t.left : &t.right;
    }
    split(*link, lo, nodes_[n].left, nodes_[n].right);
    pull(n);
    *link = n;
  }
  // Splits subtree `t` into the nodes starting at or before `lo` (`l`) and after it (`r`).
  // Recursion depth is the split path's length: the rotations an insert makes, fewer than 2
  // expected.
  void split(index t, std::int64_t lo, index& l, index& r) {
    if (t == none) {
      l = r = none;
      return;
    }
    if (nodes_[t].lo <= lo) {
      split(nodes_[t].right, lo, nodes_[t].right, r);
      l = t;
    } else {
      split(nodes_[t].left, lo, l, nodes_[t].left);
      r = t;
    }
    pull(t);
  }
};

}  // namespace xlamem::detail
