// SPDX-License-Identifier: Apache-2.0
/// @file
/// A reader for XLA's buffer-assignment dump (`--xla_dump_to`): the allocation blocks of
/// `*-buffer-assignment.txt`, the "Total bytes used" line and "Used values" of
/// `*-buffer-assignment-values.txt`, and the `HloLiveRange` of `*-live-range.txt`. Older XLA
/// writes all of them into the one `-buffer-assignment.txt`; both layouts are read, because each
/// section is recognised by its own header line wherever it stands.
///
/// From the allocations, `buffer_assignment_dump::stats()` derives the figures of XLA's
/// `CompiledMemoryStats` (JAX `compiled.memory_analysis()`) with the same
/// `stats_from_allocations` (`passes/memory_stats.hpp`) that buffer assignment uses, so tests
/// hold a planner to XLA allocation by allocation and in total.
///
/// Parsing is linear in the input. Errors are `errc::parse_error` with `file:line:column`;
/// a reader never crashes or loops on malformed text. Not thread-safe per object (plain data).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/input_file.hpp"
#include "xlamem/passes/memory_stats.hpp"

namespace xlamem {

/// What XLA decided for one module's buffers, as its dump files print it.
struct buffer_assignment_dump {
  /// XLA's memory space of host memory (`kHostMemorySpace`), the `S(5)` of layouts.
  static constexpr std::int64_t host_memory_space = xlamem::host_memory_space;

  /// One value placed in an allocation:
  /// ` value: <ID NAME[{index}][ (phi)][ @COLOR]> (size=S,offset=O): SHAPE`.
  struct assigned_value {
    std::uint64_t id = 0;                   ///< the HloValue id
    std::string instruction;                ///< defining instruction name
    std::vector<std::int64_t> shape_index;  ///< index into a tuple-shaped instruction
    bool has_shape_index = false;           ///< the index was printed (the instruction is a tuple)
    bool is_phi = false;                    ///< printed " (phi)"
    std::optional<std::int64_t> color;      ///< printed " @C"
    std::uint64_t size = 0;                 ///< bytes
    std::uint64_t offset = 0;               ///< offset inside the allocation
    std::string shape;                      ///< shape with layout, as printed
    std::size_t line = 0;                   ///< 1-based line in its file
  };

  /// One allocation block: `allocation I: size N[, color C][, parameter K, shape |S| at
  /// ShapeIndex {..}][, output shape is |S|][, constant][, thread-local][, maybe-live-out]
  /// [, preallocated-temp]:` followed by its values (and, in xlamem's own tables, a
  /// ` copy: LEAF (emulated copy insertion)` line, `io/xla/buffer_assignment_text.hpp`).
  struct allocation {
    std::uint64_t index = 0;
    std::uint64_t size = 0;
    std::int64_t color = 0;                           ///< 0 when not printed
    std::optional<std::int64_t> parameter;            ///< entry parameter number
    std::string parameter_shape;                      ///< shape without layout, from |...|
    std::vector<std::int64_t> parameter_shape_index;  ///< "at ShapeIndex {..}"
    std::optional<std::string> output_shape;          ///< "output shape is |...|"
    bool is_constant = false;
    bool is_thread_local = false;
    bool maybe_live_out = false;
    bool is_preallocated_temp = false;
    std::vector<std::string> other_flags;  ///< flags this reader does not know, kept verbatim
    std::string copy_of;  ///< xlamem's tables only: the output leaf an emulated copy holds
    std::vector<assigned_value> values;
    std::size_t line = 0;

    /// An entry-computation parameter allocation.
    [[nodiscard]] bool is_entry_parameter() const noexcept { return parameter.has_value(); }
    /// A parameter that also lives out: XLA's `is_parameter_aliased_with_output` on the
    /// corpus (donated arguments, `input_output_alias`).
    [[nodiscard]] bool is_aliased_parameter() const noexcept {
      return parameter.has_value() && maybe_live_out;
    }
  };

  /// `name[ {index}]` as printed for a position in "Used values".
  struct position {
    std::string instruction;
    std::vector<std::int64_t> shape_index;
  };

  /// `name, operand N[ {index}]` as printed for a use in "Used values".
  struct use {
    std::string instruction;
    std::int64_t operand = 0;
    std::vector<std::int64_t> operand_index;
  };

  /// One entry of "Used values": the value header, its positions and uses and its defining
  /// instruction's text.
  struct used_value {
    std::uint64_t id = 0;
    std::string instruction;
    std::vector<std::int64_t> shape_index;
    bool has_shape_index = false;
    bool is_phi = false;
    std::optional<std::int64_t> color;
    std::vector<position> positions;
    std::vector<use> uses;
    std::string from_instruction;  ///< the text after " from instruction: "
    std::size_t line = 0;
  };

  /// `name{index}:start-end` from "BufferLiveRange".
  struct buffer_live_range {
    std::string instruction;
    std::vector<std::int64_t> shape_index;
    std::int64_t start = 0;
    std::int64_t end = 0;
    std::size_t line = 0;
  };

  /// `name{index}: N bytes (cumulative: M bytes)` from "Live ranges at T (peak)".
  struct peak_entry {
    std::string instruction;
    std::vector<std::int64_t> shape_index;
    std::uint64_t bytes = 0;
    std::uint64_t cumulative = 0;
  };

  /// The `HloLiveRange (max T):` section.
  struct live_range {
    std::int64_t max_time = 0;
    std::size_t line = 0;  ///< of the `HloLiveRange (max T):` header
    std::vector<std::string> instruction_sequence;  ///< the flattened schedule, by time
    std::vector<buffer_live_range> buffers;
    std::optional<std::int64_t> peak_time;
    std::vector<peak_entry> peak;             ///< in printed order
    std::optional<std::uint64_t> peak_bytes;  ///< last cumulative figure of `peak`
  };

  /// The figures of XLA's `CompiledMemoryStats` derived from the allocations, plus what XLA
  /// counts in no stats field (constants, thread-local) and the total.
  struct memory_stats {
    /// Argument, output, alias and temp bytes, device and host, and the device total, by the
    /// same `stats_from_allocations` that buffer assignment uses (peak and code size stay 0).
    compiled_memory_stats compiled;
    std::int64_t constant = 0;            ///< constant allocations (in no CompiledMemoryStats field)
    std::int64_t thread_local_bytes = 0;  ///< thread-local allocations (in no field either)
    std::int64_t total = 0;               ///< all allocations, host ones too: XLA's "Total bytes used"
  };

  std::vector<allocation> allocations;            ///< in printed order (index order)
  std::optional<std::uint64_t> total_bytes_used;  ///< "Total bytes used: N (...)"
  std::vector<used_value> used_values;
  std::optional<live_range> live_ranges;  ///< present when the dump printed HloLiveRange

  /// The allocation with this index, or null.
  [[nodiscard]] const allocation* find_allocation(std::uint64_t index) const noexcept {
    if (index < allocations.size() && allocations[index].index == index) return &allocations[index];
    for (const auto& a : allocations) {
      if (a.index == index) return &a;
    }
    return nullptr;
  }

  /// The allocation holding the value defined by `instruction` at `shape_index`, or null.
  [[nodiscard]] const allocation* allocation_of(
      std::string_view instruction, const std::vector<std::int64_t>& shape_index = {}) const {
    for (const auto& a : allocations) {
      for (const auto& v : a.values) {
        if (v.instruction == instruction && v.shape_index == shape_index) return &a;
      }
    }
    return nullptr;
  }

  /// The live range of the buffer `instruction{shape_index}`, or null.
  [[nodiscard]] const buffer_live_range* live_range_of(
      std::string_view instruction, const std::vector<std::int64_t>& shape_index = {}) const {
    if (!live_ranges) return nullptr;
    for (const auto& r : live_ranges->buffers) {
      if (r.instruction == instruction && r.shape_index == shape_index) return &r;
    }
    return nullptr;
  }

  /// The flags XLA's statistics read, as this dump prints them: an entry parameter that is also
  /// live-out is XLA's `is_parameter_aliased_with_output` (donated arguments,
  /// `input_output_alias`). XLA splits device and host by the memory space of each
  /// allocation's values; with XLA's default colourer that is the colour.
  [[nodiscard]] static allocation_flags flags_of(const allocation& a) noexcept {
    allocation_flags f;
    f.size = static_cast<std::int64_t>(a.size);
    f.color = a.color;
    f.is_entry_parameter = a.is_entry_parameter();
    f.is_parameter_aliased_with_output = a.is_aliased_parameter();
    f.maybe_live_out = a.maybe_live_out;
    f.is_thread_local = a.is_thread_local;
    f.is_constant = a.is_constant;
    return f;
  }

  /// XLA's memory figures derived from the allocations (`PopulateBufferStatsFromAllocations`),
  /// and the constant, thread-local and total bytes.
  [[nodiscard]] memory_stats stats() const {
    std::vector<allocation_flags> flags;
    flags.reserve(allocations.size());
    memory_stats s;
    for (const auto& a : allocations) {
      flags.push_back(flags_of(a));
      const auto size = static_cast<std::int64_t>(a.size);
      s.total += size;
      if (a.is_constant) s.constant += size;
      if (a.is_thread_local) s.thread_local_bytes += size;
    }
    s.compiled = stats_from_allocations(flags);
    return s;
  }
};

namespace detail::assignment_dump {

/// A cursor over one line of a dump, producing `file:line:column` errors.
class line_cursor {
 public:
  line_cursor(std::string_view file, std::size_t line, std::string_view text) noexcept
      : file_(file), line_(line), text_(text) {}

  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
  [[nodiscard]] bool at_end() const noexcept { return pos_ >= text_.size(); }
  [[nodiscard]] std::string_view rest() const noexcept { return text_.substr(pos_); }
  [[nodiscard]] char peek() const noexcept { return at_end() ? '\0' : text_[pos_]; }
  void skip_spaces() noexcept {
    while (!at_end() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r')) ++pos_;
  }
  bool consume(std::string_view s) noexcept {
    if (rest().substr(0, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }
  void advance(std::size_t n) noexcept { pos_ = pos_ + n > text_.size() ? text_.size() : pos_ + n; }

  [[nodiscard]] error fail(std::string_view what) const { return fail_at(pos_, what); }
  [[nodiscard]] error fail_at(std::size_t col, std::string_view what) const {
    std::string m(file_);
    m += ':';
    m += std::to_string(line_);
    m += ':';
    m += std::to_string(col + 1);
    m += ": ";
    m += what;
    return error(errc::parse_error, std::move(m));
  }

  /// `expected` or an error naming it and what stands there instead.
  [[nodiscard]] result<void> expect(std::string_view expected) {
    if (consume(expected)) return {};
    std::string m = "expected '";
    m += expected;
    m += "', found ";
    m += describe_here();
    return fail(m);
  }

  [[nodiscard]] std::string describe_here() const {
    if (at_end()) return "end of line";
    constexpr std::string_view hex = "0123456789abcdef";
    std::string s = "'";
    for (const char ch : rest().substr(0, 24)) {
      const auto u = static_cast<unsigned char>(ch);
      if (u >= 0x20 && u < 0x7f) {
        s += ch;
      } else {  // keep messages printable whatever the input holds
        s += "\\x";
        s += hex[u >> 4];
        s += hex[u & 0xf];
      }
    }
    s += rest().size() > 24 ? "...'" : "'";
    return s;
  }

  /// A non-negative decimal integer that fits in 64 bits.
  [[nodiscard]] result<std::uint64_t> unsigned_integer(std::string_view what) {
    return integer<std::uint64_t>(what);
  }

  /// A decimal integer with an optional '-' that fits in int64.
  [[nodiscard]] result<std::int64_t> signed_integer(std::string_view what) {
    return integer<std::int64_t>(what);
  }

  /// An HLO name: letters, digits, '_', '.', '-' (XLA's instruction and computation names).
  [[nodiscard]] result<std::string> name(std::string_view what) {
    const std::size_t b = pos_;
    while (!at_end()) {
      const char c = text_[pos_];
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '-';
      if (!ok) break;
      ++pos_;
    }
    if (pos_ == b)
      return fail(std::string("expected ") + std::string(what) + ", found " + describe_here());
    return std::string(text_.substr(b, pos_ - b));
  }

  /// A shape index `{}` or `{1,0,2}`.
  [[nodiscard]] result<std::vector<std::int64_t>> shape_index() {
    std::vector<std::int64_t> idx;
    if (auto r = expect("{"); !r) return r.error();
    skip_spaces();
    if (consume("}")) return idx;
    for (;;) {
      skip_spaces();
      auto v = signed_integer("a shape index element");
      if (!v) return v.error();
      idx.push_back(*v);
      skip_spaces();
      if (consume("}")) return idx;
      if (auto r = expect(","); !r) return r.error();
    }
  }

 private:
  // A decimal integer of type T (a leading '-' only when T is signed), or an error naming `what`.
  template <class T>
  [[nodiscard]] result<T> integer(std::string_view what) {
    T v = 0;
    const char* b = text_.data() + pos_;
    const char* e = text_.data() + text_.size();
    const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    const bool digit = b != e && (is_digit(*b) || (std::is_signed_v<T> && *b == '-' && b + 1 != e && is_digit(b[1])));
    if (!digit) return fail(std::string("expected ") + std::string(what) + ", found " + describe_here());
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec == std::errc::result_out_of_range) return fail(std::string(what) + " does not fit in 64 bits");
    pos_ += static_cast<std::size_t>(p - b);
    return v;
  }

  std::string_view file_;
  std::size_t line_;
  std::string_view text_;
  std::size_t pos_ = 0;
};

/// Parses `<ID NAME[{index}][ (phi)][ @COLOR]>` into the fields shared by both value kinds.
template <class Value>
[[nodiscard]] result<void> parse_value_header(line_cursor& c, Value& v) {
  if (auto r = c.expect("<"); !r) return r;
  auto id = c.unsigned_integer("a value id");
  if (!id) return id.error();
  v.id = *id;
  if (auto r = c.expect(" "); !r) return r;
  auto n = c.name("an instruction name");
  if (!n) return n.error();
  v.instruction = std::move(*n);
  if (c.peek() == '{') {
    auto idx = c.shape_index();
    if (!idx) return idx.error();
    v.shape_index = std::move(*idx);
    v.has_shape_index = true;
  }
  if (c.consume(" (phi)")) v.is_phi = true;
  if (c.consume(" @")) {
    auto col = c.signed_integer("a colour");
    if (!col) return col.error();
    v.color = *col;
  }
  return c.expect(">");
}

/// `name[ {index}]` (positions) or `name{index}` (live ranges): the index is optional.
[[nodiscard]] inline result<void> parse_name_and_index(line_cursor& c, std::string& name,
                                                       std::vector<std::int64_t>& index) {
  auto n = c.name("an instruction name");
  if (!n) return n.error();
  name = std::move(*n);
  c.skip_spaces();
  if (c.peek() == '{') {
    auto idx = c.shape_index();
    if (!idx) return idx.error();
    index = std::move(*idx);
  }
  return {};
}

[[nodiscard]] inline std::size_t indent(std::string_view line) noexcept {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  return i;
}

[[nodiscard]] inline result<void> parse_allocation_header(
    line_cursor& c, buffer_assignment_dump::allocation& a) {
  if (auto r = c.expect("allocation "); !r) return r;
  auto idx = c.unsigned_integer("an allocation index");
  if (!idx) return idx.error();
  a.index = *idx;
  if (auto r = c.expect(": size "); !r) return r;
  auto size = c.unsigned_integer("an allocation size in bytes");
  if (!size) return size.error();
  a.size = *size;
  if (!c.at_end() && c.peek() != ',' && c.peek() != ':') {
    return c.fail("expected an integer size in bytes (human-readable sizes are not exact)");
  }
  while (c.consume(", ")) {
    const std::size_t col = c.pos();
    if (c.consume("color ")) {
      auto v = c.signed_integer("a colour");
      if (!v) return v.error();
      a.color = *v;
    } else if (c.consume("parameter ")) {
      auto v = c.signed_integer("a parameter number");
      if (!v) return v.error();
      a.parameter = *v;
      // Older XLA stops here or prints only " at ShapeIndex {..}".
      if (c.consume(", shape |")) {
        const auto rest = c.rest();
        const auto bar = rest.find('|');
        if (bar == std::string_view::npos) return c.fail("unterminated '|' in a parameter shape");
        a.parameter_shape = std::string(rest.substr(0, bar));
        c.advance(bar + 1);
      }
      if (c.consume(" at ShapeIndex ")) {
        auto si = c.shape_index();
        if (!si) return si.error();
        a.parameter_shape_index = std::move(*si);
      }
    } else if (c.consume("output shape is |")) {
      const auto rest = c.rest();
      const auto bar = rest.find('|');
      if (bar == std::string_view::npos) return c.fail("unterminated '|' in the output shape");
      a.output_shape = std::string(rest.substr(0, bar));
      c.advance(bar + 1);
    } else if (c.consume("constant")) {
      a.is_constant = true;
    } else if (c.consume("thread-local")) {
      a.is_thread_local = true;
    } else if (c.consume("maybe-live-out")) {
      a.maybe_live_out = true;
    } else if (c.consume("preallocated-temp")) {
      a.is_preallocated_temp = true;
    } else {
      // A flag of a newer XLA: keep it verbatim up to the next ", " or the closing ':'.
      const auto rest = c.rest();
      std::size_t end = rest.find(", ");
      if (end == std::string_view::npos) end = rest.size() > 0 ? rest.size() - 1 : 0;
      if (end == 0) return c.fail_at(col, "empty allocation flag");
      a.other_flags.emplace_back(rest.substr(0, end));
      c.advance(end);
    }
    if (c.peek() != ',' && c.peek() != ':') {
      return c.fail("expected ', ' or ':' after an allocation flag, found " + c.describe_here());
    }
  }
  if (auto r = c.expect(":"); !r) return r;
  c.skip_spaces();
  if (!c.at_end())
    return c.fail("unexpected text after an allocation header: " + c.describe_here());
  return {};
}

[[nodiscard]] inline result<void> parse_assigned_value(
    line_cursor& c, buffer_assignment_dump::assigned_value& v,
    const buffer_assignment_dump::allocation& a) {
  c.skip_spaces();
  if (auto r = c.expect("value: "); !r) return r;
  if (auto r = parse_value_header(c, v); !r) return r;
  if (auto r = c.expect(" (size="); !r) return r;
  const std::size_t size_col = c.pos();
  auto size = c.unsigned_integer("a value size");
  if (!size) return size.error();
  v.size = *size;
  if (auto r = c.expect(",offset="); !r) return r;
  auto off = c.unsigned_integer("a value offset");
  if (!off) return off.error();
  v.offset = *off;
  if (auto r = c.expect("):"); !r) return r;
  c.skip_spaces();
  v.shape = std::string(c.rest());
  while (!v.shape.empty() && (v.shape.back() == ' ' || v.shape.back() == '\r')) v.shape.pop_back();
  if (v.shape.empty()) return c.fail("expected the value's shape");
  if (v.offset > a.size || v.size > a.size - v.offset) {
    return c.fail_at(size_col, "value [" + std::to_string(v.offset) + ", " +
                                   std::to_string(v.offset + v.size) +
                                   ") lies outside allocation " + std::to_string(a.index) + " of " +
                                   std::to_string(a.size) + " bytes");
  }
  return {};
}

/// Where the reader is inside a dump file.
enum class section_kind {
  none,
  allocations,
  used_values,
  used_positions,
  used_uses,
  live_range,
  live_sequence,
  live_buffers,
  live_peak,
  skipped,
};

}  // namespace detail::assignment_dump

namespace detail::assignment_dump {

/// The rest of a ` copy: LEAF (emulated copy insertion)` line, after `copy: `: the leaf.
[[nodiscard]] inline result<void> parse_copy_line(line_cursor& c, buffer_assignment_dump::allocation& a) {
  constexpr std::string_view tail = " (emulated copy insertion)";
  const std::string_view rest = c.rest();
  if (rest.size() <= tail.size() || !rest.ends_with(tail)) {
    return c.fail("expected 'LEAF (emulated copy insertion)' after 'copy: ', found " + c.describe_here());
  }
  if (!a.copy_of.empty()) {
    return c.fail_at(c.pos() - std::string_view("copy: ").size(), "a second 'copy:' line in allocation " + std::to_string(a.index));
  }
  a.copy_of = std::string(rest.substr(0, rest.size() - tail.size()));
  return {};
}

/// A line at the start of a line (a section header, an allocation header, a used value), read
/// into `dump`; `section` becomes the section it opens. `allocation_total` is the sum of the
/// allocation sizes so far.
[[nodiscard]] inline result<void> top_level_line(buffer_assignment_dump& dump, line_cursor& c, std::string_view line,
                                                 std::string_view file, std::size_t line_no, section_kind& section,
                                                 std::uint64_t& allocation_total) {
  if (line == "BufferAssignment:") {
    section = section_kind::allocations;
    return {};
  }
  if (c.consume("allocation ")) {
    c = line_cursor(file, line_no, line);
    buffer_assignment_dump::allocation a;
    a.line = line_no;
    if (auto r = parse_allocation_header(c, a); !r) return r;
    const std::size_t expected = dump.allocations.size();
    if (a.index != expected) {
      return c.fail_at(11, "allocation " + std::to_string(a.index) +
                               " is out of order (expected " + std::to_string(expected) + ")");
    }
    // stats() adds sizes up in compiled_memory_stats' signed 64-bit fields: refuse a dump
    // whose allocations overflow them together.
    constexpr auto max_total = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (a.size > max_total - allocation_total) {
      return c.fail_at(19, "allocation sizes add up to more than 2^63 - 1 bytes");
    }
    allocation_total += a.size;
    dump.allocations.push_back(std::move(a));
    section = section_kind::allocations;
    return {};
  }
  if (c.consume("Total bytes used: ")) {
    auto v = c.unsigned_integer("a byte count");
    if (!v) return v.error();
    if (dump.total_bytes_used) return c.fail_at(0, "a second 'Total bytes used' line");
    dump.total_bytes_used = *v;
    section = section_kind::none;
    return {};
  }
  if (line == "Used values:") {
    section = section_kind::used_values;
    return {};
  }
  if (c.consume("HloLiveRange (max ")) {
    if (dump.live_ranges) return c.fail_at(0, "a second HloLiveRange section");
    auto v = c.signed_integer("the last time step");
    if (!v) return v.error();
    if (auto r = c.expect("):"); !r) return r;
    dump.live_ranges = buffer_assignment_dump::live_range{};
    dump.live_ranges->max_time = *v;
    dump.live_ranges->line = line_no;
    section = section_kind::live_range;
    return {};
  }
  if (line == "BufferAssignment stats:" || c.consume("Memory Space: ")) {
    section = section_kind::skipped;  // human-readable summaries: nothing exact to read
    return {};
  }
  if (line.front() == '<' &&
      (section == section_kind::used_values || section == section_kind::used_positions ||
       section == section_kind::used_uses)) {
    buffer_assignment_dump::used_value v;
    v.line = line_no;
    if (auto r = parse_value_header(c, v); !r) return r;
    c.skip_spaces();
    if (!c.at_end()) return c.fail("unexpected text after a value: " + c.describe_here());
    dump.used_values.push_back(std::move(v));
    section = section_kind::used_values;
    return {};
  }
  if (section == section_kind::skipped) return {};
  return c.fail("unexpected line in a buffer-assignment dump: " + c.describe_here());
}

/// An indented line of "Used values": a list header, or an entry of positions or uses.
[[nodiscard]] inline result<void> used_value_line(buffer_assignment_dump& dump, line_cursor& c, std::size_t indent,
                                                  section_kind& section) {
  if (dump.used_values.empty()) return c.fail("a line before the first used value");
  auto& v = dump.used_values.back();
  if (indent == 1) {
    if (c.consume("positions:")) {
      section = section_kind::used_positions;
    } else if (c.consume("uses:")) {
      section = section_kind::used_uses;
    } else if (c.consume("from instruction: ")) {
      v.from_instruction = std::string(c.rest());
      section = section_kind::used_values;
      return {};
    } else {
      return c.fail("expected 'positions:', 'uses:' or 'from instruction:', found " +
                    c.describe_here());
    }
    c.skip_spaces();
    if (!c.at_end())
      return c.fail("unexpected text after a list header: " + c.describe_here());
    return {};
  }
  if (c.consume("(none)")) return {};
  if (section == section_kind::used_positions) {
    buffer_assignment_dump::position p;
    if (auto r = parse_name_and_index(c, p.instruction, p.shape_index); !r)
      return r;
    v.positions.push_back(std::move(p));
  } else if (section == section_kind::used_uses) {
    buffer_assignment_dump::use u;
    auto n = c.name("an instruction name");
    if (!n) return n.error();
    u.instruction = std::move(*n);
    if (auto r = c.expect(", operand "); !r) return r;
    auto k = c.signed_integer("an operand number");
    if (!k) return k.error();
    u.operand = *k;
    c.skip_spaces();
    if (c.peek() == '{') {
      auto idx = c.shape_index();
      if (!idx) return idx.error();
      u.operand_index = std::move(*idx);
    }
    v.uses.push_back(std::move(u));
  } else {
    return c.fail("expected 'positions:' or 'uses:' before a list entry");
  }
  c.skip_spaces();
  if (!c.at_end()) return c.fail("unexpected text after a list entry: " + c.describe_here());
  return {};
}

/// An indented line of the HloLiveRange section: a sub-section header, a step of the
/// instruction sequence, a buffer's live range or an entry of the peak.
[[nodiscard]] inline result<void> live_range_line(buffer_assignment_dump& dump, line_cursor& c, std::size_t indent,
                                                  std::size_t line_no, section_kind& section) {
  auto& lr = *dump.live_ranges;
  if (indent <= 2) {
    if (c.consume("InstructionSequence:")) {
      section = section_kind::live_sequence;
    } else if (c.consume("BufferLiveRange:")) {
      section = section_kind::live_buffers;
    } else if (c.consume("Live ranges at ")) {
      auto t = c.signed_integer("a time step");
      if (!t) return t.error();
      if (auto r = c.expect(" (peak):"); !r) return r;
      lr.peak_time = *t;
      section = section_kind::live_peak;
    } else if (c.consume("Stack trace breakdown")) {
      section = section_kind::skipped;  // a tree of op names; nothing the planner matches
      return {};
    } else {
      return c.fail("unexpected line in HloLiveRange: " + c.describe_here());
    }
    c.skip_spaces();
    if (!c.at_end())
      return c.fail("unexpected text after a section header: " + c.describe_here());
    return {};
  }
  if (section == section_kind::live_sequence) {
    auto t = c.unsigned_integer("a time step");
    if (!t) return t.error();
    if (*t != lr.instruction_sequence.size()) {
      return c.fail_at(indent, "time step " + std::to_string(*t) +
                                   " is out of order (expected " +
                                   std::to_string(lr.instruction_sequence.size()) + ")");
    }
    if (auto r = c.expect(":"); !r) return r;
    auto n = c.name("an instruction name");
    if (!n) return n.error();
    lr.instruction_sequence.push_back(std::move(*n));
  } else if (section == section_kind::live_buffers) {
    buffer_assignment_dump::buffer_live_range b;
    b.line = line_no;
    if (auto r = parse_name_and_index(c, b.instruction, b.shape_index); !r)
      return r;
    if (auto r = c.expect(":"); !r) return r;
    const std::size_t col = c.pos();
    auto s = c.signed_integer("a start time");
    if (!s) return s.error();
    if (auto r = c.expect("-"); !r) return r;
    auto e = c.signed_integer("an end time");
    if (!e) return e.error();
    if (*s > *e || *s < 0 || *e > lr.max_time) {
      return c.fail_at(col, "live range " + std::to_string(*s) + "-" + std::to_string(*e) +
                                " is not within 0-" + std::to_string(lr.max_time));
    }
    b.start = *s;
    b.end = *e;
    lr.buffers.push_back(std::move(b));
  } else if (section == section_kind::live_peak) {
    buffer_assignment_dump::peak_entry p;
    if (auto r = parse_name_and_index(c, p.instruction, p.shape_index); !r)
      return r;
    if (auto r = c.expect(": "); !r) return r;
    auto bytes = c.unsigned_integer("a byte count");
    if (!bytes) return bytes.error();
    if (auto r = c.expect(" bytes (cumulative: "); !r) return r;
    auto cum = c.unsigned_integer("a byte count");
    if (!cum) return cum.error();
    if (auto r = c.expect(" bytes)"); !r) return r;
    p.bytes = *bytes;
    p.cumulative = *cum;
    lr.peak_bytes = *cum;
    lr.peak.push_back(std::move(p));
  } else {
    return c.fail("expected 'InstructionSequence:', 'BufferLiveRange:' or 'Live ranges at'");
  }
  c.skip_spaces();
  if (!c.at_end()) return c.fail("unexpected text after an entry: " + c.describe_here());
  return {};
}

}  // namespace detail::assignment_dump

/// Reads one dump file's text into `dump`, adding to what earlier files put there: call it once
/// for `-buffer-assignment.txt` and again for `-buffer-assignment-values.txt` and
/// `-live-range.txt` when XLA split them. `file` names the text in error messages.
/// @returns an `errc::parse_error` naming `file:line:column` on malformed text; then `dump` holds
/// what was read before the error.
[[nodiscard]] inline result<void> parse_buffer_assignment_dump_into(
    buffer_assignment_dump& dump, std::string_view text, std::string_view file = "<input>") {
  using detail::assignment_dump::section_kind;
  section_kind section = section_kind::none;
  std::size_t line_no = 0;
  std::size_t start = 0;
  const std::size_t allocations_before = dump.allocations.size();
  std::uint64_t allocation_total = 0;  // earlier calls checked that this does not overflow
  for (const auto& a : dump.allocations) allocation_total += a.size;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    detail::assignment_dump::line_cursor c(file, line_no, line);
    c.skip_spaces();
    if (c.at_end()) continue;  // blank lines separate sections
    const std::size_t indent = detail::assignment_dump::indent(line);
    result<void> r;
    // Section headers stand at the start of a line, wherever they are.
    if (indent == 0) {
      r = detail::assignment_dump::top_level_line(dump, c, line, file, line_no, section, allocation_total);
    } else if (section == section_kind::none) {
      return c.fail("unexpected indented line outside any section: " + c.describe_here());
    } else if (section == section_kind::skipped) {
      continue;
    } else if (section == section_kind::allocations) {
      if (dump.allocations.size() == allocations_before) return c.fail("a value line before any allocation header");
      auto& a = dump.allocations.back();
      if (c.consume("copy: ")) {  // xlamem's own tables: what an emulated output copy copies
        r = detail::assignment_dump::parse_copy_line(c, a);
      } else {
        buffer_assignment_dump::assigned_value v;
        v.line = line_no;
        r = detail::assignment_dump::parse_assigned_value(c, v, a);
        if (r) a.values.push_back(std::move(v));
      }
    } else if (section == section_kind::used_values || section == section_kind::used_positions ||
               section == section_kind::used_uses) {
      r = detail::assignment_dump::used_value_line(dump, c, indent, section);
    } else {
      r = detail::assignment_dump::live_range_line(dump, c, indent, line_no, section);
    }
    if (!r) return r;
  }
  // XLA's max is the length of the InstructionSequence it prints; a larger one is not a schedule
  // but a claim, and the report would size its timeline by it (10^12 steps).
  if (const auto& lr = dump.live_ranges; lr && lr->line != 0 && lr->max_time > static_cast<std::int64_t>(lr->instruction_sequence.size())) {
    return result<void>(errc::parse_error, std::string(file) + ":" + std::to_string(lr->line) + ":1: HloLiveRange (max " +
                                               std::to_string(lr->max_time) + ") but its InstructionSequence lists " +
                                               std::to_string(lr->instruction_sequence.size()) + " steps");
  }
  return {};
}

/// Parses one dump text (any layout) into a new `buffer_assignment_dump`.
[[nodiscard]] inline result<buffer_assignment_dump> parse_buffer_assignment_dump(
    std::string_view text, std::string_view file = "<input>") {
  buffer_assignment_dump dump;
  if (auto r = parse_buffer_assignment_dump_into(dump, text, file); !r) return r.error();
  return dump;
}

namespace detail::assignment_dump {
[[nodiscard]] inline result<std::string> read_file(const std::filesystem::path& path) {
  return read_input_file(path.string());  // regular files only, size-limited
}
}  // namespace detail::assignment_dump

/// Reads `path` (a `*-buffer-assignment.txt`) and, when XLA wrote them beside it, the
/// `*-buffer-assignment-values.txt` and `*-live-range.txt` of the same module (the layout of
/// newer XLA with `--xla_dump_buffer_assignment_analysis`).
/// @returns `errc::not_found` when `path` cannot be opened, `errc::parse_error` with
/// `file:line:column` for malformed text.
[[nodiscard]] inline result<buffer_assignment_dump> read_buffer_assignment_dump(
    const std::filesystem::path& path) try {
  buffer_assignment_dump dump;
  auto text = detail::assignment_dump::read_file(path);
  if (!text) return text.error();
  const std::string name = path.string();
  if (auto r = parse_buffer_assignment_dump_into(dump, *text, name); !r) return r.error();
  constexpr std::string_view suffix = "-buffer-assignment.txt";
  const std::string file = path.filename().string();
  if (file.size() > suffix.size() &&
      file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const std::string stem = file.substr(0, file.size() - suffix.size());
    for (const char* extra : {"-buffer-assignment-values.txt", "-live-range.txt"}) {
      const auto sibling = path.parent_path() / (stem + extra);
      std::error_code ec;
      if (!std::filesystem::is_regular_file(sibling, ec)) continue;
      auto more = detail::assignment_dump::read_file(sibling);
      if (!more) return more.error();
      if (auto r = parse_buffer_assignment_dump_into(dump, *more, sibling.string()); !r)
        return r.error();
    }
  }
  return dump;
} catch (const std::bad_alloc&) {
  return error(errc::out_of_memory, path.string() + ": out of memory while reading the buffer assignment");
}

}  // namespace xlamem
