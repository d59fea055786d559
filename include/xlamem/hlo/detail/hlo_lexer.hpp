// SPDX-License-Identifier: Apache-2.0
/// @file
/// The HLO text reader's lexer (`hlo/reader.hpp` is the reader): a cursor over the text with
/// whitespace and comments (`/* */`, `//`), names, keywords, integers, string literals and
/// attribute values balanced over brackets, and the diagnostics every grammar of the reader
/// uses: `file:line:column: what was expected, found 'what'` (line and column are computed
/// only when an error is reported). Not API: the grammars build on it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "xlamem/error.hpp"
#include "xlamem/input_file.hpp"

namespace xlamem::hlo::detail {

inline bool is_space(char c) noexcept { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_name_char(char c) noexcept { return is_alpha(c) || is_digit(c) || c == '_' || c == '.' || c == '-'; }

/// The cursor and its diagnostics. The first failure is kept (`err_`); every function returns
/// false from then on, so a grammar stops at the first mistake.
class hlo_lexer {
 public:
  hlo_lexer(std::string_view text, std::string_view file) : s_(text), file_(file) {}

 protected:
  static constexpr int max_nesting = 256;

  std::string_view s_;
  std::string_view file_;
  std::size_t p_ = 0;
  std::optional<error> err_;

  // ---- diagnostics ----
  static std::string quoted(std::string_view token) { return quote_token(token); }
  std::string location(std::size_t at) const {
    at = std::min(at, s_.size());
    std::size_t line = 1, line_start = 0;
    const char* b = s_.data();
    for (const char* q = b; (q = static_cast<const char*>(std::memchr(q, '\n', static_cast<std::size_t>(b + at - q)))) != nullptr; ++q) {
      ++line;
      line_start = static_cast<std::size_t>(q - b) + 1;
    }
    std::string out(file_);
    out += ':';
    out += std::to_string(line);
    out += ':';
    out += std::to_string(at - line_start + 1);
    return out;
  }
  std::string found(std::size_t at) const {
    if (at >= s_.size()) return "end of input";
    std::size_t e = at;
    if (is_name_char(s_[e]) || s_[e] == '%') {
      ++e;
      while (e < s_.size() && e - at <= max_quoted_chars && is_name_char(s_[e])) ++e;
    } else {
      ++e;
    }
    return quote_token(s_.substr(at, e - at));
  }
  bool fail(std::size_t at, const std::string& msg) {
    if (!err_) err_ = make_error(errc::parse_error, location(at) + ": " + msg);
    return false;
  }


  bool ws() {
    const std::size_t n = s_.size();
    for (;;) {
      while (p_ < n && is_space(s_[p_])) ++p_;
      if (p_ + 1 < n && s_[p_] == '/') {
        if (s_[p_ + 1] == '*') {
          const auto e = s_.find("*/", p_ + 2);
          if (e == std::string_view::npos) return fail(p_, "unterminated '/*' comment");
          p_ = e + 2;
          continue;
        }
        if (s_[p_ + 1] == '/') {
          const auto e = s_.find('\n', p_);
          p_ = e == std::string_view::npos ? n : e + 1;
          continue;
        }
      }
      return true;
    }
  }
  bool at_end() const noexcept { return p_ >= s_.size(); }
  char peek() const noexcept { return p_ < s_.size() ? s_[p_] : '\0'; }

  enum class list_step { more, closed, error };
  /// After an item of a comma-separated list: ',' (consumed) means another item follows,
  /// `close` (consumed) ends the list, anything else fails naming the list (`what`).
  list_step list_next(char close, std::string_view what) {
    if (peek() == ',') {
      ++p_;
      return list_step::more;
    }
    if (peek() == close) {
      ++p_;
      return list_step::closed;
    }
    fail(p_, "expected ',' or '" + std::string(1, close) + "' in " + std::string(what) + ", found " + found(p_));
    return list_step::error;
  }

  bool expect(char c, const char* context) {
    return expect(c, [context] { return std::string(context); });
  }
  /// `expect` with a context that is made only when `c` is missing (quoting a name for every
  /// instruction read would cost more than reading it).
  template <class Context>
    requires std::is_invocable_r_v<std::string, Context>
  bool expect(char c, Context&& context) {
    if (!ws()) return false;
    if (peek() != c) return fail(p_, std::string("expected '") + c + "' " + context() + ", found " + found(p_));
    ++p_;
    return true;
  }
  /// Reads `[%]name`; empty when there is none (nothing consumed).
  std::string_view name() {
    std::size_t q = p_;
    if (q < s_.size() && s_[q] == '%') ++q;
    const std::size_t b = q;
    while (q < s_.size() && is_name_char(s_[q])) ++q;
    if (q == b) return {};
    p_ = q;
    return s_.substr(b, q - b);
  }
  /// Whether the keyword `kw` stands at the cursor (not followed by a name character).
  bool keyword(std::string_view kw) {
    if (p_ >= s_.size() || s_[p_] != kw[0] || s_.substr(p_, kw.size()) != kw) return false;
    const std::size_t e = p_ + kw.size();
    if (e < s_.size() && is_name_char(s_[e])) return false;
    p_ = e;
    return true;
  }
  bool integer(std::int64_t& v, const char* what) {
    if (!ws()) return false;
    const std::size_t b = p_;
    bool neg = false;
    if (peek() == '-') neg = true, ++p_;
    if (!is_digit(peek())) {
      p_ = b;
      return fail(b, std::string("expected an integer ") + what + ", found " + found(b));
    }
    std::uint64_t u = 0;
    while (is_digit(peek())) {
      const unsigned d = static_cast<unsigned>(s_[p_] - '0');
      if (u > (static_cast<std::uint64_t>(INT64_MAX) - d) / 10) return fail(b, std::string("integer out of range ") + what);
      u = u * 10 + d;
      ++p_;
    }
    v = neg ? -static_cast<std::int64_t>(u) : static_cast<std::int64_t>(u);
    return true;
  }
  /// Skips a string literal starting at the cursor (which is on the opening quote).
  bool skip_string() {
    const std::size_t b = p_;
    ++p_;
    const std::size_t n = s_.size();
    while (p_ < n) {
      const char c = s_[p_];
      if (c == '\\') {
        p_ += 2;
        continue;
      }
      ++p_;
      if (c == '"') return true;
    }
    p_ = n;
    return fail(b, "unterminated string literal");
  }
  /// Scans an attribute value: a string, or text balanced over (), [], {} (strings respected)
  /// up to a ',' or whitespace at depth 0, or an unmatched closing bracket.
  bool scan_value(std::string_view& out, std::string_view key) {
    const std::size_t b = p_;
    if (peek() == '"') {
      if (!skip_string()) return false;
      out = s_.substr(b, p_ - b);
      return true;
    }
    char stack[max_nesting];
    int depth = 0;
    const std::size_t n = s_.size();
    while (p_ < n) {
      const char c = s_[p_];
      if (c == '"') {
        if (!skip_string()) return false;
        continue;
      }
      if (c == '(' || c == '[' || c == '{') {
        if (depth == max_nesting) return fail(p_, "brackets nest too deeply in attribute " + quoted(key));
        stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) break;
        if (stack[depth - 1] != c) {
          return fail(p_, "unbalanced brackets in attribute " + quoted(key) + ": expected '" +
                              stack[depth - 1] + "', found '" + c + "'");
        }
        --depth;
      } else if (depth == 0 && (c == ',' || is_space(c))) {
        // Mesh replica groups print a space inside the value: `mesh['i'=4] {'i'}` (XLA with
        // SPMD meshes). A '{' after blanks never starts anything else, so it continues the value.
        if (c == ' ' && p_ > b && s_[p_ - 1] == ']') {
          std::size_t q = p_;
          while (q < n && (s_[q] == ' ' || s_[q] == '\t')) ++q;
          if (q < n && s_[q] == '{') {
            p_ = q;
            continue;
          }
        }
        break;
      }
      ++p_;
    }
    if (depth != 0) {
      return fail(b, "unbalanced brackets in attribute " + quoted(key) + ": missing '" + stack[depth - 1] +
                         "' before end of input");
    }
    if (p_ == b) return fail(b, "expected a value for attribute " + quoted(key) + ", found " + found(b));
    out = s_.substr(b, p_ - b);
    return true;
  }

};

}  // namespace xlamem::hlo::detail
