// SPDX-License-Identifier: Apache-2.0
/// @file
/// The entry computation with every `call` replaced by the body it calls, as XLA's call
/// inliner does before SPMD partitioning. JAX lowers each nested `jax.jit` (and library
/// functions wrapped in one: `jax.nn.relu`, `softmax`, `gelu`, ...) to a `call`; left as it is,
/// the auto-sharding builder would hold every value of the body replicated, at its whole size,
/// so a 256 MiB relu inside a call would set a floor no sharding goes below. Inlined, each of
/// those values is an operation of the entry and splits like any other.
///
/// Rules: a `call` of the entry (and, transitively, one inside a body being inlined) with one
/// `to_apply` computation is replaced by copies of that computation's instructions, its
/// parameters by the call's operands; a `get-tuple-element` of an inlined `tuple` becomes the
/// tuple's operand, and an inlined tuple nobody uses any more is dropped. Copies keep their
/// names and attributes (metadata, shardings); a name another instruction of the module holds
/// gets a suffix `.N`. Computations no longer called are dropped. Calls inside loops and
/// branches stay as they are. The result is printed and read again, so it is a module as the
/// reader makes it (users, one block of ids per computation); errors name the module.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"

namespace xlamem::autoshard {

namespace detail {

/// Whether `in` is a call the inliner replaces.
[[nodiscard]] inline bool is_inlinable_call(const hlo::instruction& in) {
  return in.opcode == hlo::opcodes::call && in.calls.size() == 1 && in.calls[0].role == hlo::call_role::to_apply;
}

class call_inliner {
 public:
  explicit call_inliner(hlo::module& m) : m_(m), original_count_(m.instructions.size()), replaced_(m.instructions.size()) {
    for (std::size_t i = 0; i < replaced_.size(); ++i) replaced_[i] = static_cast<hlo::instruction_id>(i);
  }

  /// The entry's new instruction list; copies are appended to the module's instructions.
  std::vector<hlo::instruction_id> run() {
    const auto entry = m_.entry;
    const auto old = m_[entry].instructions;
    for (const auto id : old) {
      hlo::instruction& in = m_[id];
      for (auto& o : in.operands) o = replaced_[hlo::index_of(o)];
      if (is_inlinable_call(in)) {
        replaced_[hlo::index_of(id)] = expand(in.calls[0].computation, std::vector<hlo::instruction_id>(in.operands.begin(), in.operands.end()));
        continue;
      }
      if (const auto forwarded = forwarded_element(in)) {
        replaced_[hlo::index_of(id)] = *forwarded;
        continue;
      }
      order_.push_back(id);
    }
    const auto root = replaced_[hlo::index_of(m_[entry].root)];
    drop_unused_copies(root);
    for (const auto id : order_) m_[id].is_root = false;
    m_[entry].root = root;
    m_[root].is_root = true;
    return order_;
  }

  /// Whether instruction `id` is a copy the inliner made.
  [[nodiscard]] bool is_copy(hlo::instruction_id id) const { return hlo::index_of(id) >= original_count_; }

 private:
  hlo::module& m_;
  std::size_t original_count_;
  std::vector<hlo::instruction_id> replaced_;  ///< per original instruction: what stands for it now
  std::vector<hlo::instruction_id> order_;

  // A get-tuple-element of an inlined tuple: the element itself.
  [[nodiscard]] std::optional<hlo::instruction_id> forwarded_element(const hlo::instruction& in) const {
    if (in.opcode != hlo::opcodes::get_tuple_element || in.operands.size() != 1) return std::nullopt;
    const auto t = in.operands[0];
    const hlo::instruction& tuple = m_[t];
    if (!is_copy(t) || tuple.opcode != hlo::opcodes::tuple || in.tuple_index < 0 ||
        static_cast<std::size_t>(in.tuple_index) >= tuple.operands.size()) {
      return std::nullopt;
    }
    return tuple.operands[static_cast<std::size_t>(in.tuple_index)];
  }

  // Copies of computation `c`'s instructions onto the entry with `args` for its parameters;
  // what stands for its root.
  hlo::instruction_id expand(hlo::computation_id c, const std::vector<hlo::instruction_id>& args) {
    const auto body = m_[c].instructions;  // a copy: the module's vectors grow below
    std::unordered_map<std::size_t, hlo::instruction_id> local;  // body instruction -> stand-in
    const auto stand_in = [&](hlo::instruction_id id) {
      const auto found = local.find(hlo::index_of(id));
      return found == local.end() ? id : found->second;  // not found: never for a body the reader checked
    };
    for (const auto id : body) {
      const hlo::instruction& in = m_[id];
      if (in.opcode == hlo::opcodes::parameter) {
        const auto k = static_cast<std::size_t>(in.parameter_number);
        local.emplace(hlo::index_of(id), k < args.size() ? args[k] : id);
        continue;
      }
      hlo::instruction copy = in;
      copy.users.clear();
      copy.is_root = false;
      copy.parent = m_.entry;
      for (auto& o : copy.operands) o = stand_in(o);
      if (is_inlinable_call(copy)) {
        local.emplace(hlo::index_of(id), expand(copy.calls[0].computation, std::vector<hlo::instruction_id>(copy.operands.begin(), copy.operands.end())));
        continue;
      }
      if (const auto forwarded = forwarded_element(copy)) {
        local.emplace(hlo::index_of(id), *forwarded);
        continue;
      }
      const auto fresh = static_cast<hlo::instruction_id>(m_.instructions.size());
      m_.instructions.push_back(std::move(copy));
      order_.push_back(fresh);
      local.emplace(hlo::index_of(id), fresh);
    }
    return stand_in(m_[c].root);
  }

  // Inlined instructions nobody uses (the tuples whose elements were forwarded, and what only
  // they used), latest first.
  void drop_unused_copies(hlo::instruction_id root) {
    std::vector<std::size_t> uses(m_.instructions.size(), 0);
    for (const auto id : order_) {
      for (const auto o : m_[id].operands) ++uses[hlo::index_of(o)];
    }
    std::vector<bool> dropped(m_.instructions.size(), false);
    for (std::size_t k = order_.size(); k-- > 0;) {
      const auto id = order_[k];
      if (!is_copy(id) || id == root || uses[hlo::index_of(id)] != 0) continue;
      const auto op = m_[id].opcode;
      if (op != hlo::opcodes::tuple && op != hlo::opcodes::get_tuple_element) continue;  // keep what a body computes
      dropped[hlo::index_of(id)] = true;
      for (const auto o : m_[id].operands) --uses[hlo::index_of(o)];
    }
    std::erase_if(order_, [&](hlo::instruction_id id) { return dropped[hlo::index_of(id)]; });
  }
};

/// The computations reachable from the entry through the instructions of `m`.
[[nodiscard]] inline std::vector<bool> reachable_computations(const hlo::module& m) {
  std::vector<bool> seen(m.computations.size(), false);
  std::vector<hlo::computation_id> work{m.entry};
  seen[hlo::index_of(m.entry)] = true;
  while (!work.empty()) {
    const auto c = work.back();
    work.pop_back();
    for (const auto id : m[c].instructions) {
      for (const auto& ref : m[id].calls) {
        if (!seen[hlo::index_of(ref.computation)]) {
          seen[hlo::index_of(ref.computation)] = true;
          work.push_back(ref.computation);
        }
      }
    }
  }
  return seen;
}

}  // namespace detail

/// Whether the entry of `m` has a call `inline_calls` replaces.
[[nodiscard]] inline bool has_inlinable_calls(const hlo::module& m) {
  for (const auto id : m[m.entry].instructions) {
    if (detail::is_inlinable_call(m[id])) return true;
  }
  return false;
}

/// `m` with the entry's calls inlined (see the file comment).
[[nodiscard]] inline result<hlo::module> inline_calls(const hlo::module& m) {
  hlo::module work = m;
  detail::call_inliner inliner(work);
  work[work.entry].instructions = inliner.run();
  // Names: every instruction the printed module keeps is unique in it; copies give way.
  const auto keep = detail::reachable_computations(work);
  std::unordered_set<std::string> taken;
  for (std::size_t c = 0; c < work.computations.size(); ++c) {
    if (!keep[c]) continue;
    for (const auto id : work.computations[c].instructions) {
      if (!inliner.is_copy(id)) taken.insert(work[id].name);
    }
  }
  for (const auto id : work[work.entry].instructions) {
    if (!inliner.is_copy(id)) continue;
    auto& name = work[id].name;
    if (taken.insert(name).second) continue;
    for (std::size_t k = 1;; ++k) {
      std::string candidate = name + "." + std::to_string(k);
      if (taken.insert(candidate).second) {
        name = std::move(candidate);
        break;
      }
    }
  }
  std::vector<hlo::computation> kept;
  for (std::size_t c = 0; c < work.computations.size(); ++c) {
    if (keep[c]) kept.push_back(std::move(work.computations[c]));
  }
  work.computations = std::move(kept);
  auto again = hlo::parse_module(hlo::to_string(work), m.name);
  if (!again) return again.error().with_context("auto-sharding: module '" + m.name + "' with its calls inlined");
  again->backend = m.backend;
  return again;
}

}  // namespace xlamem::autoshard
