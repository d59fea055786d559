// SPDX-License-Identifier: Apache-2.0
/// @file
/// Shapes of the HLO reference IR: element types, layouts (minor-to-major, tiling, memory space
/// `S(n)`, split configuration `SC(d:i)`, and the rarer `D`, `L`, `#`, `*`, `E`, `P`, `M` parts),
/// array, buffer (`b(...)`) and tuple shapes, byte sizes, and the HLO text form of all of them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xlamem/checked.hpp"
#include "xlamem/compact_vector.hpp"
#include "xlamem/graph/graph_traits.hpp"

namespace xlamem::hlo {

/// Element types of XLA, in the spelling of HLO text.
enum class element_type : std::uint8_t {
  invalid,
  pred,
  s1, s2, s4, s8, s16, s32, s64,
  u1, u2, u4, u8, u16, u32, u64,
  f16, bf16, f32, f64,
  f8e5m2, f8e4m3fn, f8e4m3b11fnuz, f8e5m2fnuz, f8e4m3fnuz, f8e3m4, f8e4m3, f8e8m0fnu,
  f4e2m1fn, f6e2m3fn, f6e3m2fn,
  c64, c128,
  token, opaque,
  tuple,
};

namespace detail {
struct element_type_entry {
  std::string_view name;
  element_type type;
  std::uint16_t bits;  // storage bits of one element when not packed (pred: 8)
  std::uint16_t packed_bits;  // bits when the layout packs sub-byte types (E(n))
};
inline constexpr std::array<element_type_entry, 35> element_types{{
    {"bf16", element_type::bf16, 16, 16},
    {"c128", element_type::c128, 128, 128},
    {"c64", element_type::c64, 64, 64},
    {"f16", element_type::f16, 16, 16},
    {"f32", element_type::f32, 32, 32},
    {"f4e2m1fn", element_type::f4e2m1fn, 8, 4},
    {"f64", element_type::f64, 64, 64},
    {"f6e2m3fn", element_type::f6e2m3fn, 8, 6},
    {"f6e3m2fn", element_type::f6e3m2fn, 8, 6},
    {"f8e3m4", element_type::f8e3m4, 8, 8},
    {"f8e4m3", element_type::f8e4m3, 8, 8},
    {"f8e4m3b11fnuz", element_type::f8e4m3b11fnuz, 8, 8},
    {"f8e4m3fn", element_type::f8e4m3fn, 8, 8},
    {"f8e4m3fnuz", element_type::f8e4m3fnuz, 8, 8},
    {"f8e5m2", element_type::f8e5m2, 8, 8},
    {"f8e5m2fnuz", element_type::f8e5m2fnuz, 8, 8},
    {"f8e8m0fnu", element_type::f8e8m0fnu, 8, 8},
    {"opaque", element_type::opaque, 0, 0},
    {"pred", element_type::pred, 8, 8},
    {"s1", element_type::s1, 8, 1},
    {"s16", element_type::s16, 16, 16},
    {"s2", element_type::s2, 8, 2},
    {"s32", element_type::s32, 32, 32},
    {"s4", element_type::s4, 8, 4},
    {"s64", element_type::s64, 64, 64},
    {"s8", element_type::s8, 8, 8},
    {"token", element_type::token, 0, 0},
    {"u1", element_type::u1, 8, 1},
    {"u16", element_type::u16, 16, 16},
    {"u2", element_type::u2, 8, 2},
    {"u32", element_type::u32, 32, 32},
    {"u4", element_type::u4, 8, 4},
    {"u64", element_type::u64, 64, 64},
    {"u8", element_type::u8, 8, 8},
    {"invalid", element_type::invalid, 0, 0},
}};
}  // namespace detail

/// The element type spelled `name` ("f32", "bf16", "pred", ...), or nullopt.
[[nodiscard]] constexpr std::optional<element_type> element_type_from_name(std::string_view name) noexcept {
  if (name.empty()) return std::nullopt;
  for (const auto& e : detail::element_types) {
    // First character and length before the full compare: this runs for every shape read.
    if (e.name.size() == name.size() && e.name[0] == name[0] && e.name == name && e.type != element_type::invalid) {
      return e.type;
    }
  }
  return std::nullopt;
}

/// The HLO spelling of an element type ("tuple" for tuples).
[[nodiscard]] constexpr std::string_view name_of(element_type t) noexcept {
  if (t == element_type::tuple) return "tuple";
  for (const auto& e : detail::element_types) {
    if (e.type == t) return e.name;
  }
  return "invalid";
}

/// Storage bits of one element: 8 for pred and unpacked sub-byte types, 0 for token/opaque.
[[nodiscard]] constexpr unsigned element_bits(element_type t, bool packed = false) noexcept {
  for (const auto& e : detail::element_types) {
    if (e.type == t) return packed ? e.packed_bits : e.bits;
  }
  return 0;
}

/// Tile dimension printed as `*` (XLA's combine dimension).
inline constexpr std::int64_t combine_dimension = INT64_MIN;

/// The parts of a layout that sparse, tiled, physical and split layouts write and most layouts
/// leave out: kept out of line (`layout::details`), so that the usual layout stays small.
struct layout_details {
  std::string dim_level_types;                   ///< D(D,C+,S~) of sparse layouts, kept as text
  std::vector<std::vector<std::int64_t>> tiles;  ///< T(8,128)(2,1); `*` is combine_dimension
  std::int64_t tail_padding_alignment = 1;       ///< L(n), printed when not 1
  element_type index_type = element_type::invalid;    ///< #(s32)
  element_type pointer_type = element_type::invalid;  ///< *(s64)
  std::string physical_shape;                    ///< P(...) kept as text
  std::int64_t dynamic_metadata_prefix_bytes = 0;  ///< M(n)
  std::vector<split_config> split_configs;       ///< SC(d:i,...) each

  friend bool operator==(const layout_details&, const layout_details&) = default;
  /// Whether every part is at its default (nothing to print).
  [[nodiscard]] bool empty() const { return *this == layout_details{}; }
};

/// A layout: `{minor_to_major:T(..)L(n)#(t)*(t)E(n)S(n)SC(d:i)P(shape)M(n)}`. What memory
/// planning reads is inline; the rest is `details()`, allocated when first written.
struct layout {
  compact_vector<std::int64_t> minor_to_major;
  std::int64_t element_size_bits = 0;            ///< E(n): sub-byte packing
  std::int64_t memory_space = 0;                 ///< S(n)

  layout() = default;
  layout(const layout& o)
      : minor_to_major(o.minor_to_major), element_size_bits(o.element_size_bits), memory_space(o.memory_space),
        details_(o.details_ ? std::make_unique<layout_details>(*o.details_) : nullptr) {}
  layout(layout&&) noexcept = default;
  layout& operator=(const layout& o) {
    if (this != &o) *this = layout(o);
    return *this;
  }
  layout& operator=(layout&&) noexcept = default;
  ~layout() = default;

  /// The rare parts (all at their defaults when none was written).
  [[nodiscard]] const layout_details& details() const noexcept { return details_ ? *details_ : no_details(); }
  /// The rare parts, to write.
  [[nodiscard]] layout_details& details() {
    if (!details_) details_ = std::make_unique<layout_details>();
    return *details_;
  }

  /// Whether a rare part is set (`details()` is not all defaults).
  [[nodiscard]] bool has_details() const { return details_ != nullptr && !details_->empty(); }

  friend bool operator==(const layout& a, const layout& b) {
    // Neither has rare parts (the usual case): no defaults to build and compare.
    const bool same_details = (a.details_ == nullptr && b.details_ == nullptr) || a.details() == b.details();
    return a.minor_to_major == b.minor_to_major && a.element_size_bits == b.element_size_bits &&
           a.memory_space == b.memory_space && same_details;
  }

 private:
  std::unique_ptr<layout_details> details_;
  static const layout_details& no_details() noexcept {
    static const layout_details none;
    return none;
  }
};

/// An HLO shape: an array (element type, dimensions, optional layout), a token/opaque, or a tuple.
struct shape {
  element_type type = element_type::invalid;
  bool has_layout = false;              ///< whether a `{...}` layout was written / is set
  bool is_buffer = false;               ///< XLA's buffer shape `b(f32[4])`: the array as a buffer
  compact_vector<std::int64_t> dims;    ///< bounds; -1 for an unbounded dynamic `?`
  std::vector<bool> dynamic;            ///< empty, or one flag per dimension (`<=N`, `?`)
  hlo::layout layout;                   ///< meaningful for arrays when `has_layout`
  std::vector<shape> elements;          ///< tuple elements when `type == tuple`

  friend bool operator==(const shape&, const shape&) = default;

  [[nodiscard]] bool is_tuple() const noexcept { return type == element_type::tuple; }
  [[nodiscard]] bool is_array() const noexcept {
    return type != element_type::tuple && type != element_type::token &&
           type != element_type::opaque && type != element_type::invalid;
  }

  /// Number of elements of an array (product of the dimensions; dynamic ones at their bound),
  /// or nullopt when the product does not fit in 64 bits.
  [[nodiscard]] std::optional<std::uint64_t> checked_element_count() const noexcept {
    std::uint64_t n = 1;
    for (auto d : dims) {
      const auto m = checked_mul(n, d < 0 ? std::uint64_t{0} : static_cast<std::uint64_t>(d));
      if (!m) return std::nullopt;
      n = *m;
    }
    return n;
  }
  /// Number of elements; saturates at UINT64_MAX (the reader refuses such shapes).
  [[nodiscard]] std::uint64_t element_count() const noexcept {
    return checked_element_count().value_or(UINT64_MAX);
  }

  /// Bits an element of this array takes in memory: `E(n)` of the layout where packed, else
  /// its type's size.
  [[nodiscard]] std::uint64_t stored_element_bits() const noexcept {
    const bool packed = has_layout && layout.element_size_bits > 0;
    return packed ? static_cast<std::uint64_t>(layout.element_size_bits) : element_bits(type);
  }

  /// Buffer bytes of this node: arrays are element count times element size (sub-byte types
  /// are packed only with `E(n)`), tuples 8 bytes per element, tokens 0. Tiling padding is not
  /// modelled. Nullopt when the size does not fit in 64 bits.
  [[nodiscard]] std::optional<std::uint64_t> checked_byte_size() const noexcept {
    if (is_tuple()) return checked_mul(std::uint64_t{8}, static_cast<std::uint64_t>(elements.size()));
    if (!is_array()) return std::uint64_t{0};
    const auto count = checked_element_count();
    if (!count) return std::nullopt;
    const auto total_bits = checked_mul(*count, stored_element_bits());
    if (!total_bits) return std::nullopt;
    return *total_bits / 8 + (*total_bits % 8 != 0 ? 1 : 0);
  }
  /// `checked_byte_size()`, saturating at UINT64_MAX: never wraps to a small number. The reader
  /// refuses any shape above `max_total_bytes`, so read modules never saturate.
  [[nodiscard]] std::uint64_t byte_size() const noexcept { return checked_byte_size().value_or(UINT64_MAX); }

  /// The subshape at `index`, or null when the index leaves the tree.
  [[nodiscard]] const shape* subshape(const shape_index& index) const noexcept {
    const shape* s = this;
    for (auto k : index) {
      if (!s->is_tuple() || k < 0 || static_cast<std::size_t>(k) >= s->elements.size()) return nullptr;
      s = &s->elements[static_cast<std::size_t>(k)];
    }
    return s;
  }
  [[nodiscard]] shape* subshape(const shape_index& index) noexcept {
    return const_cast<shape*>(static_cast<const shape&>(*this).subshape(index));
  }

  /// Gives an array shape without a written layout the default descending layout, so that a
  /// memory space or split can be attached.
  void ensure_layout() {
    if (has_layout || !is_array()) return;
    has_layout = true;
    layout.minor_to_major.clear();
    for (std::size_t i = dims.size(); i-- > 0;) layout.minor_to_major.push_back(static_cast<std::int64_t>(i));
  }
};

/// Calls `f(index, subshape)` for every node of `s` in pre-order (tuple before its elements).
template <class F>
void for_each_subshape(const shape& s, F&& f) {
  shape_index index;
  auto visit = [&](auto& self, const shape& node) -> void {
    f(static_cast<const shape_index&>(index), node);
    if (!node.is_tuple()) return;
    for (std::size_t k = 0; k < node.elements.size(); ++k) {
      index.push_back(static_cast<std::int64_t>(k));
      self(self, node.elements[k]);
      index.pop_back();
    }
  };
  visit(visit, s);
}

namespace detail {
inline void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  char* p = buf + sizeof buf;
  std::uint64_t u = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) *--p = '-';
  out.append(p, static_cast<std::size_t>(buf + sizeof buf - p));
}
}  // namespace detail

/// Appends `{i,j,...}` (XLA's ShapeIndex spelling).
inline void append_shape_index(std::string& out, const shape_index& index) {
  out += '{';
  for (std::size_t k = 0; k < index.size(); ++k) {
    if (k) out += ',';
    detail::append_int(out, index[k]);
  }
  out += '}';
}

/// Appends the `{...}` text of a layout, parts in XLA's fixed order.
inline void append_layout(std::string& out, const layout& l) {
  out += '{';
  for (std::size_t k = 0; k < l.minor_to_major.size(); ++k) {
    if (k) out += ',';
    detail::append_int(out, l.minor_to_major[k]);
  }
  const layout_details& d = l.details();
  const bool extras = l.element_size_bits != 0 || l.memory_space != 0 || l.has_details();
  if (extras) {
    out += ':';
    if (!d.dim_level_types.empty()) {
      out += "D(";
      out += d.dim_level_types;
      out += ')';
    }
    if (!d.tiles.empty()) {
      out += 'T';
      for (const auto& t : d.tiles) {
        out += '(';
        for (std::size_t k = 0; k < t.size(); ++k) {
          if (k) out += ',';
          if (t[k] == combine_dimension) out += '*';
          else detail::append_int(out, t[k]);
        }
        out += ')';
      }
    }
    if (d.tail_padding_alignment != 1) {
      out += "L(";
      detail::append_int(out, d.tail_padding_alignment);
      out += ')';
    }
    if (d.index_type != element_type::invalid) {
      out += "#(";
      out += name_of(d.index_type);
      out += ')';
    }
    if (d.pointer_type != element_type::invalid) {
      out += "*(";
      out += name_of(d.pointer_type);
      out += ')';
    }
    if (l.element_size_bits != 0) {
      out += "E(";
      detail::append_int(out, l.element_size_bits);
      out += ')';
    }
    if (l.memory_space != 0) {
      out += "S(";
      detail::append_int(out, l.memory_space);
      out += ')';
    }
    for (const auto& sc : d.split_configs) {
      out += "SC(";
      detail::append_int(out, sc.dimension);
      out += ':';
      for (std::size_t k = 0; k < sc.indices.size(); ++k) {
        if (k) out += ',';
        detail::append_int(out, sc.indices[k]);
      }
      out += ')';
    }
    if (!d.physical_shape.empty()) {
      out += "P(";
      out += d.physical_shape;
      out += ')';
    }
    if (d.dynamic_metadata_prefix_bytes != 0) {
      out += "M(";
      detail::append_int(out, d.dynamic_metadata_prefix_bytes);
      out += ')';
    }
  }
  out += '}';
}

/// Appends the HLO text of a shape: `f32[2,3]{1,0:S(1)}`, `(s32[], f32[<=4])`, `token[]`.
inline void append_shape(std::string& out, const shape& s) {
  if (s.is_buffer) {
    out += "b(";
    shape inner = s;
    inner.is_buffer = false;
    append_shape(out, inner);
    out += ')';
    return;
  }
  if (s.is_tuple()) {
    out += '(';
    for (std::size_t k = 0; k < s.elements.size(); ++k) {
      if (k) out += ", ";
      append_shape(out, s.elements[k]);
    }
    out += ')';
    return;
  }
  out += name_of(s.type);
  out += '[';
  for (std::size_t k = 0; k < s.dims.size(); ++k) {
    if (k) out += ',';
    const bool dyn = k < s.dynamic.size() && s.dynamic[k];
    if (dyn && s.dims[k] < 0) {
      out += '?';
    } else {
      if (dyn) out += "<=";
      detail::append_int(out, s.dims[k]);
    }
  }
  out += ']';
  if (s.has_layout && s.is_array()) append_layout(out, s.layout);
}

/// The HLO text of a shape.
[[nodiscard]] inline std::string to_string(const shape& s) {
  std::string out;
  append_shape(out, s);
  return out;
}

}  // namespace xlamem::hlo
