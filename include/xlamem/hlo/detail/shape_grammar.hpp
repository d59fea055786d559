// SPDX-License-Identifier: Apache-2.0
/// @file
/// The HLO text reader's grammar of shapes and layouts (`hlo/reader.hpp` is the reader):
/// array shapes with dynamic dimensions (`f32[<=4,?]`), tuples, buffer shapes `b(...)`, and
/// layouts with every part XLA prints (`{1,0:D(D,C+)T(8,128)(2,1)L(2)#(s32)*(s64)E(4)S(1)
/// SC(0:1,2)P(...)M(8)}`), and shape indices `{0,1}`. Nesting is bounded (64 levels of tuples
/// and physical shapes). Not API: the instruction grammar builds on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/graph/graph_traits.hpp"
#include "xlamem/hlo/detail/hlo_lexer.hpp"
#include "xlamem/hlo/shape.hpp"

namespace xlamem::hlo::detail {

class shape_grammar : public hlo_lexer {
 public:
  using hlo_lexer::hlo_lexer;

  /// One whole shape, nothing after it.
  result<shape> parse_single_shape() {
    shape out;
    if (!parse_shape(out, 0) || !ws()) return *err_;
    if (p_ != s_.size()) {
      fail(p_, "expected end of shape, found " + found(p_));
      return *err_;
    }
    return out;
  }

 protected:
  static constexpr int max_shape_depth = 64;

  bool parse_shape(shape& out, int depth) {
    if (!ws()) return false;
    if (depth > max_shape_depth) {
      return fail(p_, "shape nests too deeply (more than " + std::to_string(max_shape_depth) +
                          " levels of tuples and physical shapes)");
    }
    const std::size_t b = p_;
    if (peek() == 'b' && p_ + 1 < s_.size() && s_[p_ + 1] == '(') {  // buffer shape b(f32[4]{0})
      p_ += 2;
      if (!parse_shape(out, depth + 1)) return false;
      if (out.is_tuple() || out.is_buffer) return fail(b, "a buffer shape b(...) holds an array shape");
      out.is_buffer = true;
      return expect(')', "to close the buffer shape b(...)");
    }
    if (peek() == '(') return tuple_shape(out, depth);
    return array_shape(out, b, depth);
  }

  bool tuple_shape(shape& out, int depth) {
    ++p_;
    out.type = element_type::tuple;
    if (!ws()) return false;
    if (peek() == ')') {
      ++p_;
      return true;
    }
    for (;;) {
      out.elements.emplace_back();
      if (!parse_shape(out.elements.back(), depth + 1) || !ws()) return false;
      const auto more = list_next(')', "tuple shape");
      if (more == list_step::more) continue;
      return more == list_step::closed;
    }
  }

  // `type[dims]` and an optional layout; `b` is where the shape starts.
  bool array_shape(shape& out, std::size_t b, int depth) {
    std::size_t q = p_;
    while (q < s_.size() && (is_alpha(s_[q]) || is_digit(s_[q]))) ++q;
    const std::string_view tn = s_.substr(p_, q - p_);
    if (tn.empty()) return fail(b, "expected a shape, found " + found(b));
    const auto t = element_type_from_name(tn);
    if (!t) return fail(b, "unknown element type " + quoted(tn));
    out.type = *t;
    p_ = q;
    if (!expect('[', "after the element type") || !dimensions(out)) return false;
    if ((out.type == element_type::token || out.type == element_type::opaque) && !out.dims.empty()) {
      return fail(b, std::string(tn) + " shapes have no dimensions");
    }
    // A layout follows when '{' is followed by a digit, ':' or '}' (a computation body never is).
    const std::size_t save = p_;
    if (!ws()) return false;
    if (peek() == '{') {
      std::size_t q2 = p_ + 1;
      while (q2 < s_.size() && is_space(s_[q2])) ++q2;
      if (q2 < s_.size() && (is_digit(s_[q2]) || s_[q2] == ':' || s_[q2] == '}')) {
        ++p_;
        return parse_layout(out, b, depth);
      }
    }
    p_ = save;
    return true;
  }

  // The dimensions after '[' up to ']': sizes, `?` (unbounded dynamic) and `<=N` (bounded).
  bool dimensions(shape& out) {
    if (!ws()) return false;
    if (peek() == ']') {
      ++p_;
    } else {
      for (;;) {
        if (!ws()) return false;
        bool dyn = false;
        std::int64_t d = 0;
        if (peek() == '?') {
          ++p_;
          dyn = true;
          d = -1;
        } else {
          if (p_ + 1 < s_.size() && s_[p_] == '<' && s_[p_ + 1] == '=') {
            p_ += 2;
            dyn = true;
          }
          const std::size_t db = p_;
          if (!integer(d, "as a dimension")) return false;
          if (d < 0) return fail(db, "negative dimension");
        }
        if (dyn && out.dynamic.size() < out.dims.size() + 1) out.dynamic.resize(out.dims.size() + 1, false);
        if (dyn) out.dynamic[out.dims.size()] = true;
        out.dims.push_back(d);
        if (!ws()) return false;
        const auto more = list_next(']', "dimensions");
        if (more == list_step::more) continue;
        if (more == list_step::error) return false;
        break;
      }
    }
    if (!out.dynamic.empty()) out.dynamic.resize(out.dims.size(), false);
    return true;
  }

  bool small_int_in_parens(std::int64_t& v, const char* what) {
    return expect('(', what) && integer(v, what) && expect(')', what);
  }

  // The layout after '{' up to '}': minor_to_major, then ':' and its parts.
  bool parse_layout(shape& out, std::size_t shape_pos, int depth) {
    layout& l = out.layout;
    out.has_layout = true;
    if (!ws() || !minor_to_major(out)) return false;
    if (peek() == ':') {
      ++p_;
      for (;;) {
        if (!ws()) return false;
        if (peek() == '}') break;
        if (!layout_part(l, depth)) return false;
      }
    }
    if (!expect('}', "to close the layout")) return false;
    if (!l.minor_to_major.empty() && l.minor_to_major.size() != out.dims.size()) {
      return fail(shape_pos, "layout lists " + std::to_string(l.minor_to_major.size()) +
                                 " dimensions for a rank-" + std::to_string(out.dims.size()) + " shape");
    }
    if (l.minor_to_major.empty() && !out.dims.empty()) {
      return fail(shape_pos, "layout lists no dimensions for a rank-" + std::to_string(out.dims.size()) + " shape");
    }
    return true;
  }

  bool minor_to_major(shape& out) {
    while (is_digit(peek())) {
      std::int64_t d;
      const std::size_t db = p_;
      if (!integer(d, "in minor_to_major")) return false;
      if (d < 0 || static_cast<std::size_t>(d) >= out.dims.size()) {
        return fail(db, "layout dimension " + std::to_string(d) + " is out of range for a rank-" +
                            std::to_string(out.dims.size()) + " shape");
      }
      out.layout.minor_to_major.push_back(d);
      if (!ws()) return false;
      if (peek() == ',') {
        ++p_;
        if (!ws()) return false;
        if (!is_digit(peek())) return fail(p_, "expected a dimension after ',' in layout, found " + found(p_));
      }
    }
    return true;
  }

  // One part after ':' in a layout, by its letter.
  bool layout_part(layout& l, int depth) {
    const char c = peek();
    const std::size_t at = p_;
    if (c == 'D') return dim_level_types(l);
    if (c == 'T') return tiles(l);
    if (c == 'L') return ++p_, small_int_in_parens(l.details().tail_padding_alignment, "in L(...)");
    if (c == '#' || c == '*') return layout_element_type(c == '#' ? l.details().index_type : l.details().pointer_type);
    if (c == 'E') return ++p_, small_int_in_parens(l.element_size_bits, "in E(...)");
    if (c == 'S' && p_ + 1 < s_.size() && s_[p_ + 1] == 'C') return split_config_part(l);
    if (c == 'S') return ++p_, small_int_in_parens(l.memory_space, "in S(...)");
    if (c == 'P') return physical_shape(l, depth);
    if (c == 'M') return ++p_, small_int_in_parens(l.details().dynamic_metadata_prefix_bytes, "in M(...)");
    return fail(at, "expected a layout part (D, T, L, #, *, E, S, SC, P, M) or '}', found " + found(at));
  }

  // Dim level types of sparse layouts: D(D,C+,S~,H).
  bool dim_level_types(layout& l) {
    ++p_;
    if (!expect('(', "after D in layout") || !ws()) return false;
    const std::size_t db = p_;
    for (;;) {
      if (!ws()) return false;
      const char t = peek();
      if (t != 'D' && t != 'C' && t != 'S' && t != 'H') {
        return fail(p_, "expected a dim level type (D, C, S or H) in layout, found " + found(p_));
      }
      ++p_;
      if (peek() == '+') ++p_;
      if (peek() == '~') ++p_;
      if (!ws()) return false;
      if (peek() == ',') {
        ++p_;
        continue;
      }
      if (peek() != ')') return fail(p_, "expected ',' or ')' in D(...), found " + found(p_));
      break;
    }
    l.details().dim_level_types = std::string(s_.substr(db, p_ - db));
    ++p_;
    return true;
  }

  // Tiles: T(8,128)(2,1); `*` is combine_dimension.
  bool tiles(layout& l) {
    ++p_;
    if (!ws()) return false;
    if (peek() != '(') return fail(p_, "expected '(' after T in layout, found " + found(p_));
    while (ws() && peek() == '(') {
      ++p_;
      std::vector<std::int64_t> tile;
      for (;;) {
        if (!ws()) return false;
        if (peek() == '*') {
          ++p_;
          tile.push_back(combine_dimension);
        } else {
          std::int64_t d;
          if (!integer(d, "in a tile")) return false;
          tile.push_back(d);
        }
        if (!ws()) return false;
        const auto more = list_next(')', "tile");
        if (more == list_step::more) continue;
        if (more == list_step::error) return false;
        break;
      }
      l.details().tiles.push_back(std::move(tile));
    }
    return !err_;
  }

  // The index or pointer type: #(s32), *(s64).
  bool layout_element_type(element_type& type) {
    ++p_;
    if (!expect('(', "in layout") || !ws()) return false;
    std::size_t q = p_;
    while (q < s_.size() && (is_alpha(s_[q]) || is_digit(s_[q]))) ++q;
    const auto t = element_type_from_name(s_.substr(p_, q - p_));
    if (!t) return fail(p_, "unknown element type in layout, found " + found(p_));
    type = *t;
    p_ = q;
    return expect(')', "in layout");
  }

  // A split config: SC(d:i,j,...).
  bool split_config_part(layout& l) {
    p_ += 2;
    split_config sc;
    if (!expect('(', "after SC") || !integer(sc.dimension, "as split dimension") || !expect(':', "in SC(d:i)")) return false;
    for (;;) {
      std::int64_t i;
      if (!integer(i, "as split index") || !ws()) return false;
      sc.indices.push_back(i);
      const auto more = list_next(')', "SC(...)");
      if (more == list_step::more) continue;
      if (more == list_step::error) return false;
      break;
    }
    l.details().split_configs.push_back(std::move(sc));
    return true;
  }

  // The physical shape P(...), kept as text. One depth budget across nested physical shapes:
  // each P(...) counts as a level.
  bool physical_shape(layout& l, int depth) {
    ++p_;
    if (!expect('(', "after P")) return false;
    const std::size_t pb = p_;
    shape phys;
    if (!parse_shape(phys, depth + 1)) return false;
    const std::size_t pe = p_;
    if (!expect(')', "after the physical shape")) return false;
    std::string_view txt = s_.substr(pb, pe - pb);
    while (!txt.empty() && is_space(txt.front())) txt.remove_prefix(1);
    l.details().physical_shape = std::string(txt);
    return true;
  }

  bool parse_shape_index(shape_index& out) {
    if (!expect('{', "to open a shape index") || !ws()) return false;
    if (peek() == '}') {
      ++p_;
      return true;
    }
    for (;;) {
      std::int64_t v;
      if (!integer(v, "in a shape index") || !ws()) return false;
      out.push_back(v);
      const auto more = list_next('}', "shape index");
      if (more == list_step::more) continue;
      return more == list_step::closed;
    }
  }

};

}  // namespace xlamem::hlo::detail
