// SPDX-License-Identifier: Apache-2.0
/// @file
/// Where in the user's program an instruction comes from (XLA's `OpMetadata`): `op_source`,
/// read from an HLO `metadata={...}` attribute or from an instruction's text. The writers show
/// it as one line with `source_text` (`io/report/views.hpp`).
/// Reading never fails: text that is not metadata gives an empty source.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace xlamem::report {

/// Where in the user's program an instruction comes from: XLA's `OpMetadata`.
struct op_source {
  std::string op_name;      ///< e.g. "jit(train_step)/jit(main)/dot_general"
  std::string source_file;  ///< e.g. "/home/me/model.py"
  std::int64_t source_line = 0;
  std::int64_t stack_frame_id = -1;  ///< newer JAX: the place is in the module's StackFrames table
  [[nodiscard]] bool empty() const noexcept { return op_name.empty() && source_file.empty(); }
  /// "model.py:42" (the file's last component), or "" without a file.
  [[nodiscard]] std::string location() const {
    if (source_file.empty()) return {};
    const auto slash = source_file.find_last_of('/');
    std::string s = slash == std::string::npos ? source_file : source_file.substr(slash + 1);
    if (source_line > 0) s += ":" + std::to_string(source_line);
    return s;
  }
  friend bool operator==(const op_source&, const op_source&) = default;
};

/// Sources by instruction name (for example from a module's `metadata`).
using source_table = std::map<std::string, op_source, std::less<>>;

/// The fields the report's JSON shows (`io/codec/json.hpp`).
template <class F>
void visit_fields(const op_source& s, F&& f) {
  f("op_name", s.op_name);
  f("source_file", s.source_file);
  f("source_line", s.source_line);
}

namespace detail {
/// Calls `f(key, raw, quoted)` for each `key=value` of a `{key=value key="quoted" ...}` text
/// (HLO metadata, the entries of the stack-frame tables) in order, until `f` returns true;
/// `raw` is the value as written, inside its quotes when `quoted` (see `unquoted`).
template <class F>
void for_each_attribute_text(std::string_view text, F&& f) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '{' || text[i] == '}' || text[i] == ',')) ++i;
    const std::size_t key_start = i;
    while (i < text.size() && text[i] != '=' && text[i] != ' ' && text[i] != '}') ++i;
    const std::string_view key = text.substr(key_start, i - key_start);
    if (i >= text.size() || text[i] != '=') continue;
    ++i;
    const bool quoted = i < text.size() && text[i] == '"';
    const std::size_t begin = quoted ? i + 1 : i;
    if (quoted) {
      for (i = begin; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
      }
    } else {
      for (int depth = 0; i < text.size() && (depth > 0 || (text[i] != ' ' && text[i] != '}')); ++i) {
        if (text[i] == '{') ++depth;
        if (text[i] == '}') --depth;
      }
    }
    const std::string_view raw = text.substr(begin, i - begin);
    if (quoted && i < text.size()) ++i;  // the closing quote
    if (f(key, raw, quoted)) return;
  }
}

/// A value of `for_each_attribute_text` as it reads: a quoted one without its escapes.
[[nodiscard]] inline std::string unquoted(std::string_view raw, bool quoted) {
  if (!quoted) return std::string(raw);
  std::string value;
  value.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\\' && i + 1 < raw.size()) ++i;
    value += raw[i];
  }
  return value;
}
}  // namespace detail

/// The value of `key` in a `{key=value key="quoted" ...}` text (HLO metadata, the entries of
/// the stack-frame tables), unquoted; empty when absent.
[[nodiscard]] inline std::string attribute_value(std::string_view text, std::string_view key) {
  std::string value;
  detail::for_each_attribute_text(text, [&](std::string_view k, std::string_view raw, bool quoted) {
    if (k != key) return false;  // other values are skipped, not copied
    value = detail::unquoted(raw, quoted);
    return true;
  });
  return value;
}

/// A nonnegative decimal integer, or -1.
[[nodiscard]] inline std::int64_t decimal_or_minus_one(std::string_view s) noexcept {
  if (s.empty() || s.size() > 17) return -1;
  std::int64_t n = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

/// Reads the value of an HLO `metadata=` attribute (`{op_name="a" source_file="f.py"
/// source_line=3 ...}`); unknown keys are skipped, so any XLA version's metadata reads. Text
/// that is not metadata gives an empty source: a report never fails on it.
[[nodiscard]] inline op_source parse_op_metadata(std::string_view text) {
  op_source out;
  // One pass; the first of a repeated key counts, as `attribute_value` reads it.
  bool name = false, file = false, line = false, frame = false;
  detail::for_each_attribute_text(text, [&](std::string_view key, std::string_view raw, bool quoted) {
    if (key == "op_name" && !name) {
      name = true;
      out.op_name = detail::unquoted(raw, quoted);
    } else if (key == "source_file" && !file) {
      file = true;
      out.source_file = detail::unquoted(raw, quoted);
    } else if (key == "source_line" && !line) {
      line = true;
      out.source_line = std::max<std::int64_t>(0, decimal_or_minus_one(detail::unquoted(raw, quoted)));
    } else if (key == "stack_frame_id" && !frame) {
      frame = true;
      out.stack_frame_id = decimal_or_minus_one(detail::unquoted(raw, quoted));
    }
    return name && file && line && frame;
  });
  return out;
}

/// The `metadata={...}` of one instruction's text, or an empty source.
[[nodiscard]] inline op_source source_in_instruction_text(std::string_view text) {
  const auto at = text.find("metadata={");
  if (at == std::string_view::npos) return {};
  std::size_t i = at + 9, depth = 0;
  bool quoted = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\') ++i;
      else if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      break;
    }
  }
  return parse_op_metadata(text.substr(at + 9, i - (at + 9) + 1));
}

}  // namespace xlamem::report
