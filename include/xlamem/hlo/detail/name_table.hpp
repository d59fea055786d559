// SPDX-License-Identifier: Apache-2.0
/// @file
/// The reader's name lookup: names sliced from the text to dense 32-bit ids, in one flat
/// open-addressed table. Every instruction's name goes in once and every operand looks one up,
/// so this is the reader's innermost loop: one probe into a contiguous array (a 32-bit hash
/// compared before any text), no node per name, and `clear()` in constant time by bumping a
/// generation, so that a module of one huge computation followed by many small ones does not
/// pay the huge table again per computation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace xlamem::hlo::detail {

/// Maps names to ids of type `Id` (a 32-bit enum or integer). Keys are views: the text they
/// point into must outlive the table's use.
template <class Id>
class name_table {
 public:
  /// Adds `name` -> `id` unless `name` is there. @returns the id stored under `name` and
  /// whether it was added.
  std::pair<Id, bool> emplace(std::string_view name, Id id) { return emplace(name, prepare(name), id); }
  /// The same with `h = prepare(name)`, computed earlier.
  std::pair<Id, bool> emplace(std::string_view name, std::uint32_t h, Id id) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    for (std::size_t k = h & mask();; k = (k + 1) & mask()) {
      slot& s = slots_[k];
      if (s.generation != generation_) {
        s = {name, h, generation_, id};
        ++size_;
        return {id, true};
      }
      if (s.hash == h && s.key == name) return {s.id, false};
    }
  }
  /// Makes room for one more name and starts fetching `name`'s first slot into the cache.
  /// @returns its hash, for `emplace(name, hash, id)`. The reader calls this when it has read
  /// an instruction's name and inserts the name after the rest of the line: slots are random,
  /// so in a module of 10^6 names each insert was a cache miss, now overlapped with parsing.
  std::uint32_t prepare(std::string_view name) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    const std::uint32_t h = hash(name);
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(&slots_[h & mask()], 1);
#endif
    return h;
  }
  /// The id stored under `name`, or null.
  [[nodiscard]] const Id* find(std::string_view name) const {
    if (size_ == 0) return nullptr;
    const std::uint32_t h = hash(name);
    for (std::size_t k = h & mask();; k = (k + 1) & mask()) {
      const slot& s = slots_[k];
      if (s.generation != generation_) return nullptr;
      if (s.hash == h && s.key == name) return &s.id;
    }
  }
  [[nodiscard]] bool contains(std::string_view name) const { return find(name) != nullptr; }
  /// Makes room for `n` names in all, so that adding them does not grow the table again (10^6
  /// names: 20 doublings, each moving every name so far).
  void reserve(std::size_t n) {
    std::size_t slots = slots_.size() < 16 ? 16 : slots_.size();
    while ((n + 1) * 2 > slots) slots *= 2;
    if (slots > slots_.size()) rehash(slots);
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// Forgets every name in constant time; the slots stay for the next computation.
  void clear() noexcept {
    size_ = 0;
    if (++generation_ == 0) {  // after 2^32 clears: stale stamps could look current
      for (auto& s : slots_) s.generation = 0;
      generation_ = 1;
    }
  }

 private:
  struct slot {
    std::string_view key;
    std::uint32_t hash = 0;
    std::uint32_t generation = 0;  // the slot is in use when this is the table's generation
    Id id{};
  };
  std::vector<slot> slots_;
  std::size_t size_ = 0;
  std::uint32_t generation_ = 1;

  [[nodiscard]] std::size_t mask() const noexcept { return slots_.size() - 1; }
  [[nodiscard]] static std::uint32_t hash(std::string_view name) noexcept {
    const std::size_t h = std::hash<std::string_view>{}(name);
    return static_cast<std::uint32_t>(h ^ (h >> 32));
  }
  // Doubles the slots (16 at first) and puts the current names back: at most half full, so a
  // probe run stays short.
  void grow() { rehash(slots_.size() < 16 ? 16 : slots_.size() * 2); }
  void rehash(std::size_t slots) {  // a power of two, above twice the names
    std::vector<slot> old(slots);
    old.swap(slots_);
    for (const auto& s : old) {
      if (s.generation != generation_) continue;
      std::size_t k = s.hash & mask();
      while (slots_[k].generation == generation_) k = (k + 1) & mask();
      slots_[k] = s;
    }
  }
};

}  // namespace xlamem::hlo::detail
