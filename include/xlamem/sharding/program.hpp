// SPDX-License-Identifier: Apache-2.0
/// @file
/// A program as the auto-sharding builder sees it: a list of operations in an order where every
/// operand comes before its user, each producing one array, each described by index letters
/// the way an einsum is.
///
/// Every dimension of an operation's result and of each operand carries a letter. Dimensions
/// with the same letter run over the same index, so they may be split over the same mesh axes
/// and the operation still computes each shard from shards: an elementwise add gives all three
/// arrays the same letters; a broadcast gives its operand a subset of the result's; a transpose
/// permutes them; a dot gives batch and contracting dimensions letters shared by both operands,
/// and a letter that appears in operands but not in the result is summed over (a contracting
/// dimension, or a reduce's reduced dimensions). A dimension that no axis may split (a sliced,
/// padded or concatenated dimension, a gather's operand) carries `whole_dimension`. An operation
/// whose every dimension is whole can only run replicated: the builder's always-correct choice
/// for what it does not model (custom calls, sorts, loops).
///
/// `program_traits<P>` reads a program (the primary template forwards to members `op_count()`
/// and `op(i)`), so a user's IR can be read in place; `sharding_program` holds the operations in
/// a vector, as the HLO front end (autoshard/hlo_program.hpp) builds it. `check_program` states
/// the rules every operation must keep.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/sharding/problem.hpp"
#include "xlamem/sharding/tensor_sharding.hpp"

namespace xlamem::sharding {

/// The letter of a dimension that no mesh axis may split.
inline constexpr std::int32_t whole_dimension = -1;

/// One operation of a program: the array it produces and how its dimensions relate to its
/// operands' (see the file comment).
struct program_op {
  std::string name;                 ///< for messages and reports (the instruction's name)
  array_shape shape;                ///< the result; a tuple or token is a rank-0 array of its bytes
  std::vector<std::size_t> operands;  ///< indices of earlier operations (one entry per use)
  std::vector<std::int32_t> output_letters;               ///< one per result dimension
  std::vector<std::vector<std::int32_t>> operand_letters;  ///< per operand, one per its dimension
  std::vector<array_shape> operand_shapes;  ///< the shape each use reads (the operand's result)
  double flops = 0;                 ///< arithmetic of the whole operation, unsharded
  std::optional<tensor_sharding> fixed;  ///< a sharding the program already fixes (kept as is)
  live_interval live;               ///< the time steps its result is held, from the program's liveness
  bool is_input = false;            ///< a program argument: its splits must be even (JAX's rule)
  bool is_output = false;           ///< a program result: its splits must be even (JAX's rule)
};

/// How the builder reads a program. The primary template forwards to members of the same
/// names; specialise it to read another type. Operation `i`'s operands are all below `i`.
template <class P>
struct program_traits {
  static std::size_t op_count(const P& p) { return p.op_count(); }
  static const program_op& op(const P& p, std::size_t i) { return p.op(i); }
};

/// A type the auto-sharding builder can read.
template <class P>
concept shardable_program = requires(const P& p, std::size_t i) {
  { program_traits<P>::op_count(p) } -> std::convertible_to<std::size_t>;
  { program_traits<P>::op(p, i) } -> std::convertible_to<const program_op&>;
};

/// A program held as a vector of operations.
struct sharding_program {
  std::string name;
  std::vector<program_op> ops;
  [[nodiscard]] std::size_t op_count() const noexcept { return ops.size(); }
  [[nodiscard]] const program_op& op(std::size_t i) const noexcept { return ops[i]; }
};
static_assert(shardable_program<sharding_program>);

/// The number of letters `op` uses (one more than the largest).
[[nodiscard]] inline std::size_t letter_count(const program_op& op) noexcept {
  std::int32_t top = -1;
  for (auto l : op.output_letters) top = l > top ? l : top;
  for (const auto& v : op.operand_letters) {
    for (auto l : v) top = l > top ? l : top;
  }
  return static_cast<std::size_t>(top + 1);
}

namespace detail {

/// Ok when `letters` fits an array of `shape`.
[[nodiscard]] inline result<void> check_letters(const std::vector<std::int32_t>& letters, const array_shape& shape,
                                                const std::string& who) {
  if (letters.size() != shape.dims.size()) {
    return make_error(errc::invalid_argument, who + " has " + std::to_string(letters.size()) + " letters for " +
                                                  std::to_string(shape.dims.size()) + " dimensions");
  }
  for (std::size_t d = 0; d < letters.size(); ++d) {
    if (letters[d] < whole_dimension) return make_error(errc::invalid_argument, who + ": a negative letter");
    if (shape.dims[d] < 0) return make_error(errc::invalid_argument, who + ": dimension " + std::to_string(d) + " is negative");
  }
  return {};
}

}  // namespace detail

/// Ok when every operation of `p` keeps the rules of this file: operands come first and are
/// read with their own shapes, letters fit the shapes, figures are finite. Errors name the
/// operation.
template <shardable_program P>
[[nodiscard]] result<void> check_program(const P& p) {
  using traits = program_traits<P>;
  const std::size_t n = traits::op_count(p);
  for (std::size_t i = 0; i < n; ++i) {
    const program_op& op = traits::op(p, i);
    const std::string who = "operation " + std::to_string(i) + " ('" + op.name + "')";
    if (op.shape.element_bytes < 1) return make_error(errc::invalid_argument, who + ": elements need at least 1 byte");
    if (auto ok = detail::check_letters(op.output_letters, op.shape, who + "'s result"); !ok) return ok;
    if (op.operand_letters.size() != op.operands.size() || op.operand_shapes.size() != op.operands.size()) {
      return make_error(errc::invalid_argument, who + ": one letter list and one shape per operand are needed");
    }
    for (std::size_t k = 0; k < op.operands.size(); ++k) {
      const std::string where = who + "'s operand " + std::to_string(k);
      if (op.operands[k] >= i) {
        return make_error(errc::invalid_argument, where + " is operation " + std::to_string(op.operands[k]) +
                                                      ", which does not come before it");
      }
      const array_shape& made = traits::op(p, op.operands[k]).shape;
      if (made.dims != op.operand_shapes[k].dims || made.element_bytes != op.operand_shapes[k].element_bytes) {
        return make_error(errc::invalid_argument, where + " is read with another shape than it has");
      }
      if (auto ok = detail::check_letters(op.operand_letters[k], op.operand_shapes[k], where); !ok) return ok;
    }
    if (!(op.flops >= 0 && op.flops < 1e300)) return make_error(errc::invalid_argument, who + ": flops must be finite and >= 0");
    if (op.live.lower < 0) return make_error(errc::invalid_argument, who + ": its live interval starts before 0");
  }
  return {};
}

}  // namespace xlamem::sharding
