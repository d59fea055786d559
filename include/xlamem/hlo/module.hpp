// SPDX-License-Identifier: Apache-2.0
/// @file
/// The HLO reference IR: opcodes, instructions, computations and modules, and each opcode's
/// memory semantics (`semantics_of`). The `graph_traits<hlo::module>` specialisation that makes
/// a module a `dense_graph`, a `memory_space_graph` and a `module_graph`, and answers the
/// planning questions, is in `hlo/graph_model.hpp`: include that header to run passes on a
/// module. Which XLA compiler's rules apply is `backend` (`hlo/backend.hpp`).
///
/// The IR keeps what memory planning needs in structured form (names, opcodes, shapes with
/// layouts, operands, users, parameter numbers, tuple indices, called computations,
/// input_output_alias, is_scheduled) and every attribute verbatim, so that printing a parsed
/// module gives text that parses to the same IR. Instruction ids are dense and module-wide;
/// each computation lists its instructions in text order (for a scheduled module, the schedule).
///
/// Thread safety: a module is a value; concurrent reads are fine, writes need exclusive access.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "xlamem/compact_vector.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/hlo/attribute_list.hpp"
#include "xlamem/hlo/backend.hpp"
#include "xlamem/hlo/shape.hpp"

namespace xlamem::hlo {

/// An opcode: an index into `opcode_names` (sorted, so lookup is a binary search).
enum class opcode : std::uint16_t {};

/// Every opcode the reader accepts, sorted by name.
inline constexpr std::array<std::string_view, 125> opcode_names{
    "abs", "add", "add-dependency", "after-all", "all-gather", "all-gather-done",
    "all-gather-start", "all-reduce", "all-reduce-done", "all-reduce-start", "all-to-all", "and",
    "async-done", "async-start", "async-update", "atan2", "batch-norm-grad",
    "batch-norm-inference", "batch-norm-training", "bitcast", "bitcast-convert", "broadcast",
    "call", "cbrt", "ceil", "cholesky", "clamp", "clz", "collective-broadcast",
    "collective-permute", "collective-permute-done", "collective-permute-start", "compare",
    "complex", "concatenate", "conditional", "constant", "convert", "convolution", "copy",
    "copy-done", "copy-start", "cosine", "custom-call", "divide", "domain", "dot",
    "dynamic-reshape", "dynamic-slice", "dynamic-update-slice", "erf", "exponential",
    "exponential-minus-one", "fft", "floor", "fusion", "gather", "get-dimension-size",
    "get-tuple-element", "imag", "infeed", "iota", "is-finite", "log", "log-plus-one", "logistic",
    "map", "maximum", "minimum", "multiply", "negate", "not", "opt-barrier",
    "optimization-barrier", "or", "outfeed", "pad", "parameter", "partition-id", "popcnt",
    "power", "ragged-all-to-all", "ragged-dot", "real", "recv", "recv-done", "reduce",
    "reduce-precision", "reduce-scatter", "reduce-window", "remainder", "replica-id", "reshape",
    "reverse", "rng", "rng-bit-generator", "rng-get-and-update-state", "round-nearest-afz",
    "round-nearest-even", "rsqrt", "scaled-dot", "scatter", "select", "select-and-scatter", "send",
    "send-done", "set-dimension-size", "shift-left", "shift-right-arithmetic",
    "shift-right-logical", "sign", "sine", "slice", "sort", "sqrt", "stochastic-convert",
    "subtract", "tan", "tanh", "topk", "transpose", "triangular-solve", "tuple", "while", "xor"};

namespace detail {
constexpr bool opcode_names_sorted() {
  for (std::size_t i = 1; i < opcode_names.size(); ++i) {
    if (!(opcode_names[i - 1] < opcode_names[i])) return false;
  }
  return true;
}
static_assert(opcode_names_sorted(), "opcode_names must stay sorted: lookup is a binary search");
}  // namespace detail

/// The opcode spelled `name`, or nullopt for an unknown opcode.
[[nodiscard]] constexpr std::optional<opcode> opcode_from_name(std::string_view name) noexcept {
  // Names are short: an inline character loop beats a memcmp call per probe.
  auto less = [](std::string_view a, std::string_view b) {
    const std::size_t n = a.size() < b.size() ? a.size() : b.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (a[i] != b[i]) return a[i] < b[i];
    }
    return a.size() < b.size();
  };
  std::size_t lo = 0, hi = opcode_names.size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (less(opcode_names[mid], name)) lo = mid + 1;
    else hi = mid;
  }
  if (lo < opcode_names.size() && opcode_names[lo] == name) return static_cast<opcode>(lo);
  return std::nullopt;
}

/// The HLO spelling of an opcode.
[[nodiscard]] constexpr std::string_view name_of(opcode op) noexcept {
  const auto i = static_cast<std::size_t>(op);
  return i < opcode_names.size() ? opcode_names[i] : std::string_view("<bad opcode>");
}

/// Named opcodes the library gives meaning to.
namespace opcodes {
inline constexpr opcode add_dependency = *opcode_from_name("add-dependency");
inline constexpr opcode all_gather_done = *opcode_from_name("all-gather-done");
inline constexpr opcode all_gather_start = *opcode_from_name("all-gather-start");
inline constexpr opcode all_reduce = *opcode_from_name("all-reduce");
inline constexpr opcode all_reduce_done = *opcode_from_name("all-reduce-done");
inline constexpr opcode all_reduce_start = *opcode_from_name("all-reduce-start");
inline constexpr opcode async_done = *opcode_from_name("async-done");
inline constexpr opcode async_start = *opcode_from_name("async-start");
inline constexpr opcode async_update = *opcode_from_name("async-update");
inline constexpr opcode bitcast = *opcode_from_name("bitcast");
inline constexpr opcode call = *opcode_from_name("call");
inline constexpr opcode collective_broadcast = *opcode_from_name("collective-broadcast");
inline constexpr opcode collective_permute = *opcode_from_name("collective-permute");
inline constexpr opcode collective_permute_done = *opcode_from_name("collective-permute-done");
inline constexpr opcode collective_permute_start = *opcode_from_name("collective-permute-start");
inline constexpr opcode conditional = *opcode_from_name("conditional");
inline constexpr opcode constant = *opcode_from_name("constant");
inline constexpr opcode copy = *opcode_from_name("copy");
inline constexpr opcode copy_done = *opcode_from_name("copy-done");
inline constexpr opcode copy_start = *opcode_from_name("copy-start");
inline constexpr opcode custom_call = *opcode_from_name("custom-call");
inline constexpr opcode domain = *opcode_from_name("domain");
inline constexpr opcode dynamic_slice = *opcode_from_name("dynamic-slice");
inline constexpr opcode dynamic_update_slice = *opcode_from_name("dynamic-update-slice");
inline constexpr opcode fusion = *opcode_from_name("fusion");
inline constexpr opcode get_tuple_element = *opcode_from_name("get-tuple-element");
inline constexpr opcode opt_barrier = *opcode_from_name("opt-barrier");
inline constexpr opcode optimization_barrier = *opcode_from_name("optimization-barrier");
inline constexpr opcode parameter = *opcode_from_name("parameter");
inline constexpr opcode ragged_all_to_all = *opcode_from_name("ragged-all-to-all");
inline constexpr opcode recv_done = *opcode_from_name("recv-done");
inline constexpr opcode reduce = *opcode_from_name("reduce");
inline constexpr opcode reshape = *opcode_from_name("reshape");
inline constexpr opcode scatter = *opcode_from_name("scatter");
inline constexpr opcode send = *opcode_from_name("send");
inline constexpr opcode set_dimension_size = *opcode_from_name("set-dimension-size");
inline constexpr opcode sort = *opcode_from_name("sort");
inline constexpr opcode transpose = *opcode_from_name("transpose");
inline constexpr opcode triangular_solve = *opcode_from_name("triangular-solve");
inline constexpr opcode tuple = *opcode_from_name("tuple");
inline constexpr opcode while_loop = *opcode_from_name("while");
}  // namespace opcodes

/// Dense, module-wide instruction number.
enum class instruction_id : std::uint32_t {};
/// Dense computation number (the order computations appear in the text).
enum class computation_id : std::uint32_t {};

/// Position of an id in its array.
[[nodiscard]] constexpr std::size_t index_of(instruction_id i) noexcept { return static_cast<std::size_t>(i); }
[[nodiscard]] constexpr std::size_t index_of(computation_id c) noexcept { return static_cast<std::size_t>(c); }

/// One `key=value` attribute, value verbatim as written (strings keep their quotes).
struct attribute {
  std::string key;
  std::string value;
  friend bool operator==(const attribute&, const attribute&) = default;
};

/// Which attribute named a called computation.
enum class call_role : std::uint8_t {
  calls,               ///< `calls=` (fusion, async-start, custom-call)
  to_apply,            ///< `to_apply=` (call, reduce, map, sort, scatter, all-reduce, ...)
  condition,           ///< `condition=` (while)
  body,                ///< `body=` (while)
  branch,              ///< `branch_computations=`, `true_computation=` (0), `false_computation=` (1)
  called_computations, ///< `called_computations={...}`
};

/// A computation referenced by an instruction.
struct computation_ref {
  computation_id computation{};
  call_role role = call_role::calls;
  std::size_t branch = 0;  ///< branch number for `call_role::branch`
  friend bool operator==(const computation_ref&, const computation_ref&) = default;
};

/// Text most instructions leave empty (a constant's literal, async sugar as written), kept out
/// of line: 8 bytes in every instruction instead of a 32-byte string. Reads as a
/// `std::string_view`; copies and compares by value; an empty text holds nothing.
class rare_text {
 public:
  rare_text() = default;
  rare_text(std::string s) { *this = std::move(s); }  // NOLINT: as a string member was set
  rare_text(const rare_text& o) : text_(o.text_ ? std::make_unique<std::string>(*o.text_) : nullptr) {}
  rare_text(rare_text&&) noexcept = default;
  rare_text& operator=(const rare_text& o) {
    if (this != &o) *this = rare_text(o);
    return *this;
  }
  rare_text& operator=(rare_text&&) noexcept = default;
  rare_text& operator=(std::string s) {
    if (s.empty()) text_.reset();
    else text_ = std::make_unique<std::string>(std::move(s));
    return *this;
  }
  ~rare_text() = default;

  [[nodiscard]] bool empty() const noexcept { return !text_; }
  [[nodiscard]] const std::string& str() const noexcept { return text_ ? *text_ : none(); }
  operator std::string_view() const noexcept { return str(); }  // NOLINT: reads as text
  friend bool operator==(const rare_text& a, const rare_text& b) noexcept { return a.str() == b.str(); }
  template <class Text>  // a string, a string_view or a literal, compared as text
    requires std::convertible_to<const Text&, std::string_view>
  friend bool operator==(const rare_text& a, const Text& b) noexcept {
    return std::string_view(a.str()) == std::string_view(b);
  }

 private:
  std::unique_ptr<std::string> text_;
  static const std::string& none() noexcept {
    static const std::string empty;
    return empty;
  }
};

/// One instruction. `operands`, `users`, `calls`, `parameter_number` and `tuple_index` are
/// derived from the text; `attributes` keep everything else verbatim.
struct instruction {
  // Small members last, side by side: a module of 10^6 instructions holds 10^6 of these.
  std::string name;                     ///< without the `%`
  hlo::shape shape;
  compact_vector<instruction_id> operands;
  compact_vector<instruction_id> users;  ///< each user once, in order of first use
  attribute_list attributes;             ///< in text order
  std::vector<computation_ref> calls;   ///< computations named by the attributes
  rare_text literal;                    ///< the text inside `constant(...)`
  rare_text opcode_spelling;            ///< async sugar as written (`custom-call-start`), else empty
  std::int64_t parameter_number = -1;   ///< for `parameter(N)`
  std::int64_t tuple_index = -1;        ///< for get-tuple-element `index=`
  computation_id parent{};
  hlo::opcode opcode{};
  bool is_root = false;

  /// The verbatim value of attribute `key`, or nullopt.
  [[nodiscard]] std::optional<std::string_view> find_attribute(std::string_view key) const noexcept {
    return attributes.find(key);
  }
};

/// One computation: instructions in order, parameters by number, one root.
struct computation {
  std::string name;                         ///< without the `%`
  std::vector<instruction_id> instructions; ///< text order (the schedule when scheduled)
  std::vector<instruction_id> parameters;   ///< parameter k at position k
  instruction_id root{};
  bool is_entry = false;
  std::vector<attribute> attributes;        ///< e.g. execution_thread, verbatim
};

/// `input_output_alias` entry: output `output_index` aliases parameter `parameter` at
/// `parameter_index`.
struct alias_entry {
  shape_index output_index;
  std::int64_t parameter = 0;
  shape_index parameter_index;
  bool must_alias = false;  ///< `must-alias`; `may-alias` (the default) otherwise
  friend bool operator==(const alias_entry&, const alias_entry&) = default;
};

/// `buffer_donor` entry.
struct buffer_donor_entry {
  std::int64_t parameter = 0;
  shape_index parameter_index;
  friend bool operator==(const buffer_donor_entry&, const buffer_donor_entry&) = default;
};

/// One stack-frame table section (`FileNames`, `FunctionNames`, `FileLocations`, `StackFrames`):
/// entries `id value`, values verbatim.
struct stack_frame_section {
  std::string name;
  std::vector<std::pair<std::int64_t, std::string>> entries;
  friend bool operator==(const stack_frame_section&, const stack_frame_section&) = default;
};

/// An HLO module.
struct module {
  std::string name;
  std::vector<computation> computations;
  std::vector<instruction> instructions;       ///< indexed by instruction_id
  computation_id entry{};
  bool is_scheduled = false;
  std::vector<alias_entry> input_output_alias;
  std::vector<buffer_donor_entry> buffer_donors;
  std::optional<std::vector<shape>> entry_parameter_layouts;  ///< from entry_computation_layout
  std::optional<shape> entry_result_layout;                   ///< from entry_computation_layout
  std::vector<attribute> attributes;           ///< other header attributes, verbatim
  std::vector<stack_frame_section> stack_frames;
  xla_backend backend = xla_backend::cpu;      ///< whose aliasing rules plan it (not in the text; hlo/backend.hpp)

  [[nodiscard]] instruction& operator[](instruction_id i) { return instructions[index_of(i)]; }
  [[nodiscard]] const instruction& operator[](instruction_id i) const { return instructions[index_of(i)]; }
  [[nodiscard]] computation& operator[](computation_id c) { return computations[index_of(c)]; }
  [[nodiscard]] const computation& operator[](computation_id c) const { return computations[index_of(c)]; }

  /// The computation named `n` (with or without `%`), or nullopt. Linear in the count.
  [[nodiscard]] std::optional<computation_id> find_computation(std::string_view n) const noexcept {
    if (!n.empty() && n.front() == '%') n.remove_prefix(1);
    for (std::size_t k = 0; k < computations.size(); ++k) {
      if (computations[k].name == n) return static_cast<computation_id>(k);
    }
    return std::nullopt;
  }
  /// The instruction named `n` in computation `c`, or nullopt. Linear in its size.
  [[nodiscard]] std::optional<instruction_id> find_instruction(computation_id c, std::string_view n) const noexcept {
    if (!n.empty() && n.front() == '%') n.remove_prefix(1);
    for (auto i : computations[index_of(c)].instructions) {
      if (instructions[index_of(i)].name == n) return i;
    }
    return std::nullopt;
  }
  /// The instruction named `n` in the computation named `comp`, or nullopt.
  [[nodiscard]] std::optional<instruction_id> find_instruction(std::string_view comp, std::string_view n) const noexcept {
    auto c = find_computation(comp);
    if (!c) return std::nullopt;
    return find_instruction(*c, n);
  }
};

namespace detail {

/// Parses `{{0}: (0, {}), {1}: (2, {1})}` (custom-call/fusion output_to_operand_aliasing) into
/// in-place pairs. Malformed text gives an empty list (the reader has already checked it).
inline std::vector<in_place_pair> parse_output_to_operand_aliasing(std::string_view v) {
  std::vector<in_place_pair> out;
  std::size_t p = 0;
  auto skip = [&] {
    while (p < v.size() && (v[p] == ' ' || v[p] == '\n' || v[p] == '\t' || v[p] == '\r')) ++p;
  };
  auto parse_int = [&](std::int64_t& x) {
    skip();
    bool neg = false;
    if (p < v.size() && v[p] == '-') neg = true, ++p;
    if (p >= v.size() || v[p] < '0' || v[p] > '9') return false;
    x = 0;
    while (p < v.size() && v[p] >= '0' && v[p] <= '9' && x < (INT64_MAX / 10 - 10)) x = x * 10 + (v[p++] - '0');
    if (neg) x = -x;
    return true;
  };
  auto parse_index = [&](shape_index& idx) {
    skip();
    if (p >= v.size() || v[p] != '{') return false;
    ++p;
    skip();
    if (p < v.size() && v[p] == '}') return ++p, true;
    for (;;) {
      std::int64_t x;
      if (!parse_int(x)) return false;
      idx.push_back(x);
      skip();
      if (p < v.size() && v[p] == ',') { ++p; continue; }
      if (p < v.size() && v[p] == '}') return ++p, true;
      return false;
    }
  };
  skip();
  if (p >= v.size() || v[p] != '{') return {};
  ++p;
  for (;;) {
    skip();
    if (p < v.size() && v[p] == '}') break;
    in_place_pair pair;
    std::int64_t operand = 0;
    if (!parse_index(pair.output_index)) return {};
    skip();
    if (p >= v.size() || v[p] != ':') return {};
    ++p;
    skip();
    if (p >= v.size() || v[p] != '(') return {};
    ++p;
    if (!parse_int(operand) || operand < 0) return {};
    skip();
    if (p >= v.size() || v[p] != ',') return {};
    ++p;
    if (!parse_index(pair.operand_index)) return {};
    skip();
    if (p >= v.size() || v[p] != ')') return {};
    ++p;
    pair.operand = static_cast<std::size_t>(operand);
    out.push_back(std::move(pair));
    skip();
    if (p < v.size() && v[p] == ',') ++p;
  }
  return out;
}

}  // namespace detail

/// Memory semantics of instruction `i` (XLA's dataflow rules, written as data).
namespace detail {
/// Opcodes XLA treats as elementwise on every operand (`IsElementwise`), without `copy`.
inline constexpr std::string_view elementwise_opcode_names[] = {
    "abs", "add", "and", "atan2", "bitcast-convert", "cbrt", "ceil", "clamp", "clz", "compare",
    "complex", "convert", "cosine", "divide", "erf", "exponential", "exponential-minus-one",
    "floor", "imag", "is-finite", "log", "log-plus-one", "logistic", "maximum", "minimum",
    "multiply", "negate", "not", "or", "popcnt", "power", "real", "reduce-precision",
    "remainder", "round-nearest-afz", "round-nearest-even", "rsqrt", "select", "shift-left",
    "shift-right-arithmetic", "shift-right-logical", "sign", "sine", "sqrt",
    "stochastic-convert", "subtract", "tan", "tanh", "xor"};
/// `elementwise_opcode_names` as a flag per opcode: the planner asks once per reuse candidate.
inline constexpr auto elementwise_opcodes = [] {
  std::array<bool, opcode_names.size()> flags{};
  for (const auto n : elementwise_opcode_names) flags[static_cast<std::size_t>(*opcode_from_name(n))] = true;
  return flags;
}();
inline bool is_elementwise(opcode op) noexcept {
  const auto i = static_cast<std::size_t>(op);
  return i < elementwise_opcodes.size() && elementwise_opcodes[i];
}
/// XLA's `IsElementwiseOnOperand` for an instruction inside a fused computation: the
/// elementwise opcodes plus `copy`, and `dynamic-update-slice` on the array it updates.
inline bool fused_is_elementwise_on(const instruction& user, std::size_t operand_number) noexcept {
  if (user.opcode == opcodes::dynamic_update_slice) return operand_number == 0;
  return user.opcode == opcodes::copy || is_elementwise(user.opcode);
}

/// Whether `text` contains `word` (ASCII letters compared without case).
[[nodiscard]] inline bool contains_ignoring_case(std::string_view text, std::string_view word) noexcept {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (std::size_t i = 0; i + word.size() <= text.size(); ++i) {
    std::size_t j = 0;
    while (j < word.size() && lower(text[i + j]) == lower(word[j])) ++j;
    if (j == word.size()) return true;
  }
  return false;
}

/// Whether tracing an in-place pair through a fused computation passes over `i` (XLA's
/// `IsNoOpForAliasAnalysis`): a bitcast, and on XLA:GPU a reshape too.
[[nodiscard]] inline bool is_alias_no_op(const module& m, const instruction& i) noexcept {
  return i.opcode == opcodes::bitcast || (m.backend == xla_backend::gpu && i.opcode == opcodes::reshape);
}

/// The instruction and index that output `index` of `i` comes from, through tuples,
/// get-tuple-elements and no-ops (XLA's `FollowTupleIndirection`, then `FollowNoOpIndirection`).
[[nodiscard]] inline std::pair<instruction_id, shape_index> follow_alias_indirections(const module& m, instruction_id i,
                                                                                     shape_index index) {
  while (m[i].opcode == opcodes::tuple && !index.empty() && index.front() >= 0 &&
         static_cast<std::size_t>(index.front()) < m[i].operands.size()) {
    i = m[i].operands[static_cast<std::size_t>(index.front())];
    index.erase(index.begin());
  }
  while (m[i].opcode == opcodes::get_tuple_element && !m[i].operands.empty()) {
    index.insert(index.begin(), m[i].tuple_index);
    i = m[i].operands[0];
  }
  while (index.empty() && is_alias_no_op(m, m[i]) && !m[i].operands.empty()) i = m[i].operands[0];
  return {i, std::move(index)};
}

/// How many fusions deep, counting the one asked about, the in-place trace goes; a fusion deeper
/// adds no pair (XLA's optimised modules nest two or three; docs/error-handling.md lists it).
inline constexpr std::size_t max_traced_fusion_nesting = 16;

/// The fusions `in_place_pairs` has traced during one question: each instruction once (nested
/// fusions may be reached along many paths), and a fused computation reached again on its own
/// path contributes nothing (the reader refuses call cycles; a module built otherwise may not).
struct in_place_trace {
  std::unordered_map<std::uint32_t, std::vector<in_place_pair>> done;  // by instruction index
  std::vector<computation_id> path;
};

[[nodiscard]] inline std::vector<in_place_pair> in_place_pairs(const module& m, instruction_id id, in_place_trace& trace);

/// XLA's `AliasInfo::GetInPlaceInputOutputPairs`: the operands `id` updates in place, each with
/// the output it becomes. A fusion's pairs are traced from each output leaf back through its
/// fused computation to an in-place instruction and from its input to a fused parameter.
[[nodiscard]] inline std::vector<in_place_pair> in_place_pairs(const module& m, instruction_id id) {
  in_place_trace trace;
  return in_place_pairs(m, id, trace);
}

[[nodiscard]] inline std::vector<in_place_pair> in_place_pairs(const module& m, instruction_id id, in_place_trace& trace) {
  const instruction& in = m[id];
  const opcode op = in.opcode;
  const std::size_t n = in.operands.size();
  std::vector<in_place_pair> out;
  auto one_or_each = [&](std::size_t count) {  // one operand: the output; else operand k: {k}
    if (count == 1) out.push_back({0, {}, {}});
    else
      for (std::size_t k = 0; k < count; ++k) out.push_back({k, {}, {static_cast<std::int64_t>(k)}});
  };
  if (op == opcodes::dynamic_update_slice) {
    out.push_back({0, {}, {}, true});
  } else if (op == opcodes::scatter) {
    const std::size_t inputs = n >= 3 ? (n - 1) / 2 : 0;  // inputs..., indices, updates...
    if (inputs > 0) one_or_each(inputs);
  } else if (op == opcodes::all_reduce_start) {
    // Not with an NVSHMEM backend, whose one-shot algorithm needs separate buffers.
    const auto config = in.find_attribute("backend_config");
    if (n > 0 && (!config || !contains_ignoring_case(*config, "nvshmem"))) one_or_each(n);
  } else if ((op == opcodes::collective_permute || op == opcodes::collective_permute_start) && n == 4) {
    // The in-place form (input, output, input and output start indices) writes into operand 1;
    // the start form's output {1} is the received buffer.
    const shape_index base = op == opcodes::collective_permute ? shape_index{} : shape_index{1};
    out.push_back({1, {}, base});
    const shape& target = m[in.operands[1]].shape;
    for (std::size_t k = 0; target.is_tuple() && k < target.elements.size(); ++k) {
      shape_index o = base;
      o.push_back(static_cast<std::int64_t>(k));
      out.push_back({1, {static_cast<std::int64_t>(k)}, std::move(o)});
    }
  } else if (op == opcodes::set_dimension_size) {
    if (n > 0) out.push_back({0, {}, {}});
  } else if (op == opcodes::ragged_all_to_all) {
    if (n > 1) out.push_back({1, {}, {}});
  } else if (op == opcodes::fusion) {
    const auto key = static_cast<std::uint32_t>(index_of(id));
    if (const auto it = trace.done.find(key); it != trace.done.end()) return it->second;
    const computation* fused = nullptr;
    std::optional<computation_id> fused_id;
    for (const auto& ref : in.calls) {
      if (ref.role == call_role::calls) fused = &m[*(fused_id = ref.computation)];
    }
    if (fused_id && (trace.path.size() >= max_traced_fusion_nesting ||
                     std::find(trace.path.begin(), trace.path.end(), *fused_id) != trace.path.end())) {
      fused = nullptr;
    }
    if (fused != nullptr) {
      trace.path.push_back(*fused_id);
      for_each_subshape(in.shape, [&](const shape_index& leaf, const shape& s) {
        if (s.is_tuple()) return;
        const auto [src, src_index] = follow_alias_indirections(m, fused->root, leaf);
        std::optional<std::pair<instruction_id, shape_index>> input;
        for (const auto& p : in_place_pairs(m, src, trace)) {
          if (p.output_index != src_index || p.operand >= m[src].operands.size()) continue;
          input = follow_alias_indirections(m, m[src].operands[p.operand], p.operand_index);
          // A nested fusion updating its own operand in place: trace on to what feeds it.
          if (m[input->first].opcode == opcodes::fusion) {
            for (const auto& q : in_place_pairs(m, input->first, trace)) {
              if (q.output_index != input->second || q.operand >= m[input->first].operands.size()) continue;
              input = follow_alias_indirections(m, m[input->first].operands[q.operand], q.operand_index);
              break;
            }
          }
        }
        if (!input) return;
        const instruction& param = m[input->first];
        if (param.opcode == opcodes::parameter && param.parameter_number >= 0 &&
            static_cast<std::size_t>(param.parameter_number) < n) {
          out.push_back({static_cast<std::size_t>(param.parameter_number), input->second, leaf});
        }
      });
      trace.path.pop_back();
    }
  }
  // Custom calls, fusions and async starts may also name pairs themselves.
  if (const auto v = in.find_attribute("output_to_operand_aliasing")) {
    for (auto& p : parse_output_to_operand_aliasing(*v)) {
      if (p.operand < n) out.push_back(std::move(p));
    }
  }
  if (op == opcodes::fusion) trace.done.emplace(static_cast<std::uint32_t>(index_of(id)), out);
  return out;
}
}  // namespace detail

[[nodiscard]] inline memory_semantics<computation_id> semantics_of(const module& m, instruction_id id) {
  const instruction& in = m[id];
  memory_semantics<computation_id> s;
  const opcode op = in.opcode;
  const std::size_t n = in.operands.size();
  auto forward_all = [&](std::size_t operand, shape_index from) {
    if (operand < n) s.forwards.push_back({{}, operand, std::move(from)});
  };
  // The async ops define every tuple-shaped subshape of their output themselves and pass only
  // arrays through (HloDataflowAnalysis: "defines all of the tuple-shaped values"): output
  // `to` + L comes from operand `operand` at `from` + L, for each array leaf L of `leaves`.
  auto forward_arrays = [&](const shape_index& to, std::size_t operand, const shape_index& from, const shape& leaves) {
    if (operand >= n) return;
    for_each_subshape(leaves, [&](const shape_index& leaf, const shape& sub) {
      if (sub.is_tuple()) return;
      shape_index out = to, in_index = from;
      out.insert(out.end(), leaf.begin(), leaf.end());
      in_index.insert(in_index.end(), leaf.begin(), leaf.end());
      s.forwards.push_back({std::move(out), operand, std::move(in_index)});
    });
  };
  if (op == opcodes::tuple) {
    for (std::size_t k = 0; k < n; ++k) s.forwards.push_back({{static_cast<std::int64_t>(k)}, k, {}});
  } else if (op == opcodes::get_tuple_element) {
    forward_all(0, {in.tuple_index});
  } else if (op == opcodes::bitcast) {
    s.is_bitcast = true;
  } else if (op == opcodes::copy) {
    // A copy of a tuple copies only the pointer table; the elements are the operand's buffers.
    if (in.shape.is_tuple() && n == 1) {
      for (std::size_t k = 0; k < in.shape.elements.size(); ++k) {
        s.forwards.push_back({{static_cast<std::int64_t>(k)}, 0, {static_cast<std::int64_t>(k)}});
      }
    }
  } else if (op == opcodes::domain || op == opcodes::opt_barrier ||
             op == opcodes::optimization_barrier || op == opcodes::add_dependency ||
             op == opcodes::all_reduce_done) {
    forward_all(0, {});
  } else if (op == opcodes::async_update) {
    forward_arrays({}, 0, {}, in.shape);
  } else if (op == opcodes::async_done) {
    forward_arrays({}, 0, {1}, in.shape);
  } else if (op == opcodes::copy_done) {
    forward_all(0, {0});
  } else if (op == opcodes::all_gather_done || op == opcodes::collective_permute_done) {
    // The operand's {1}. A combined (several-output) done defines its own tuple table and
    // forwards only the arrays, {k} <- {1, k} (UpdateAllGatherDoneValueSet,
    // UpdateCollectivePermuteDoneValueSet): XLA gives that table a value and a buffer.
    if (in.shape.is_tuple()) {
      forward_arrays({}, 0, {1}, in.shape);
    } else {
      forward_all(0, {1});
    }
  } else if (op == opcodes::recv_done) {
    // (data, token): the data is the recv's element {0} (UpdateRecvDoneValueSet).
    if (n >= 1 && in.shape.is_tuple() && !in.shape.elements.empty()) s.forwards.push_back({{0}, 0, {0}});
  } else if (op == opcodes::copy_start) {
    if (n >= 1) s.forwards.push_back({{1}, 0, {}});
  } else if (op == opcodes::send || op == opcodes::all_gather_start ||
             op == opcodes::collective_permute_start) {
    // Element {0} is the operand; XLA:GPU's combined collectives take several operands and
    // print `((a, b), (a', b'))`: element {0, k} is operand k (HloDataflowAnalysis).
    const bool combined = n > 1 && in.shape.is_tuple() && !in.shape.elements.empty() &&
                          in.shape.elements[0].is_tuple() && in.shape.elements[0].elements.size() == n;
    if (combined) {
      for (std::size_t k = 0; k < n; ++k) s.forwards.push_back({{0, static_cast<std::int64_t>(k)}, k, {}});
    } else if (n >= 1 && in.shape.is_tuple() && !in.shape.elements.empty()) {
      s.forwards.push_back({{0}, 0, {}});
    }
  } else if (op == opcodes::async_start) {
    // ((operands...), output, contexts...): the arrays of element {0, k} are operand k's; those
    // of {1} are the wrapped computation's root (its async_wrapped binding).
    if (in.shape.is_tuple() && !in.shape.elements.empty() && in.shape.elements[0].is_tuple()) {
      for (std::size_t k = 0; k < n && k < in.shape.elements[0].elements.size(); ++k) {
        forward_arrays({0, static_cast<std::int64_t>(k)}, k, {}, in.shape.elements[0].elements[k]);
      }
    }
  }
  s.in_place = detail::in_place_pairs(m, id);
  // Only these pass forwarded buffers through without reading them (XLA's MayUseOperandValue).
  s.reads_forwarded = !s.forwards.empty() && op != opcodes::tuple && op != opcodes::get_tuple_element &&
                      op != opcodes::copy && op != opcodes::domain;
  // Called computations and their binding.
  for (const auto& ref : in.calls) {
    call_binding b = call_binding::embedded;
    std::size_t first = 0;
    if (op == opcodes::fusion && ref.role == call_role::calls) {
      b = call_binding::fusion;
    } else if (op == opcodes::call && ref.role == call_role::to_apply) {
      b = call_binding::call;
    } else if (op == opcodes::while_loop && ref.role == call_role::body) {
      b = call_binding::while_body;
    } else if (op == opcodes::while_loop && ref.role == call_role::condition) {
      b = call_binding::while_condition;
    } else if (op == opcodes::conditional && ref.role == call_role::branch) {
      b = call_binding::conditional_branch;
      first = ref.branch + 1;
    } else if (op == opcodes::async_start && ref.role == call_role::calls) {
      b = call_binding::async_wrapped;
    } else if ((op == opcodes::async_update || op == opcodes::async_done) && ref.role == call_role::calls) {
      continue;  // the chain's computation belongs to its async-start (XLA's IsFirstFullyBound)
    }
    s.calls.push_back({ref.computation, b, first});
  }
  return s;
}

namespace detail {
/// A range of dense ids `[0, n)`.
template <class Id>
class id_range {
 public:
  class iterator {
   public:
    using value_type = Id;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(std::uint32_t v) : v_(v) {}
    Id operator*() const noexcept { return static_cast<Id>(v_); }
    iterator& operator++() noexcept { ++v_; return *this; }
    iterator operator++(int) noexcept { auto t = *this; ++v_; return t; }
    friend bool operator==(iterator a, iterator b) noexcept { return a.v_ == b.v_; }
   private:
    std::uint32_t v_ = 0;
  };
  explicit id_range(std::size_t n) : n_(static_cast<std::uint32_t>(n)) {}
  [[nodiscard]] iterator begin() const noexcept { return iterator(0); }
  [[nodiscard]] iterator end() const noexcept { return iterator(n_); }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
 private:
  std::uint32_t n_;
};
}  // namespace detail

}  // namespace xlamem::hlo
