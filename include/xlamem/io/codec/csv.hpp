// SPDX-License-Identifier: Apache-2.0
/// @file
/// The CSV lexer the readers of `io/` share (interval CSV, memory-terms CSV): lines (a UTF-8
/// byte-order mark, what spreadsheets write, is skipped; `\r\n` reads as `\n`), fields split at
/// commas with the 1-based column where each starts (for `file:line:column` messages), blanks
/// trimmed, and 64-bit integers with a magnitude limit. Quoting is not CSV's business here:
/// none of these formats has text fields with commas. Each reader keeps its own messages.
///
/// Bounded: a line never yields more fields than its caller allows; memory is linear in the
/// line.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>
#include <vector>

namespace xlamem {

/// `s` without leading blanks (space, tab) and trailing blanks and carriage returns.
[[nodiscard]] inline std::string_view csv_trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

/// The lines of a CSV text, numbered from 1.
class csv_lines {
 public:
  explicit csv_lines(std::string_view text) noexcept : text_(text) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);  // UTF-8 byte-order mark
  }
  /// The next line (without its `\n`) and its number; false after the last.
  bool next(std::string_view& line, std::size_t& number) noexcept {
    if (pos_ > text_.size()) return false;
    const auto nl = text_.find('\n', pos_);
    line = text_.substr(pos_, nl == std::string_view::npos ? std::string_view::npos : nl - pos_);
    pos_ = nl == std::string_view::npos ? text_.size() + 1 : nl + 1;
    number = ++line_;
    return true;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_ = 0;
};

/// One field: its text without surrounding blanks, and the 1-based column where it starts
/// (after its leading blanks).
struct csv_field {
  std::string_view text;
  std::size_t column = 1;
};

/// Splits `line` at commas into `out` (cleared first). A line with more than `max_fields`
/// fields stops at the comma that would start one more: @returns its 1-based column, or 0
/// when every field was read.
inline std::size_t split_csv_fields(std::string_view line, std::size_t max_fields, std::vector<csv_field>& out) {
  out.clear();
  std::size_t start = 0;
  while (true) {
    const auto comma = line.find(',', start);
    const auto raw = line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::size_t lead = 0;
    while (lead < raw.size() && (raw[lead] == ' ' || raw[lead] == '\t')) ++lead;
    out.push_back({csv_trim(raw), start + lead + 1});
    if (comma == std::string_view::npos) return 0;
    if (out.size() >= max_fields) return comma + 1;
    start = comma + 1;
  }
}

/// What reading a field as a decimal 64-bit integer found (each reader words its own message).
struct csv_integer {
  std::int64_t value = 0;
  bool empty = false;         ///< no text
  bool parsed = false;        ///< digits were read and fit 64 bits
  bool too_long = false;      ///< digits were read that do not fit 64 bits
  bool whole = false;         ///< the digits read took the whole field
  bool beyond_limit = false;  ///< parsed, and beyond ±limit
  [[nodiscard]] bool ok() const noexcept { return parsed && whole && !beyond_limit; }
};

/// Reads `text` as a decimal 64-bit integer within ±`limit`.
[[nodiscard]] inline csv_integer read_csv_integer(std::string_view text, std::int64_t limit) noexcept {
  csv_integer r;
  r.empty = text.empty();
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), r.value);
  r.parsed = ec == std::errc();
  r.too_long = ec == std::errc::result_out_of_range;
  r.whole = ptr == text.data() + text.size();
  r.beyond_limit = r.parsed && (r.value > limit || r.value < -limit);
  return r;
}

}  // namespace xlamem
