// SPDX-License-Identifier: Apache-2.0
/// @file
/// A streaming JSON reader for large numeric files: `decoded_text` turns raw bytes (plain, gzip
/// or zlib, told apart by the first bytes) into text pieces, and `json_cursor` is a pull
/// tokenizer over those pieces: a window of the text refilled as it is consumed, so memory is a
/// few hundred KiB whatever the file's size. Integers read on a fast path (eight digits at a
/// time), strings with every escape checked, any value skipped with its syntax checked. Errors
/// name the source, a JSON path (`json_path`) and the byte offset in the (decompressed) text; the
/// first error wins and every reading call returns false after it. A format's reader (the IOPDDL
/// problem, `io/sharding/iopddl_json.hpp`) drives the cursor key by key.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/input_file.hpp"
#include "xlamem/io/codec/gzip.hpp"

namespace xlamem {

/// Deepest nesting of arrays and objects inside a skipped value.
inline constexpr std::size_t json_max_skip_depth = 256;

namespace detail {


/// Decompressed text in pieces: each call gives the next piece (valid until the next call),
/// empty at the end.
using text_source = std::function<result<std::string_view>()>;

/// Text from raw bytes: gzip or zlib when the first bytes say so, else the bytes themselves.
/// Raw and decompressed bytes are both bounded by `max_bytes`.
class decoded_text {
 public:
  decoded_text(byte_source raw, std::string name, std::uint64_t max_bytes)
      : raw_(std::move(raw)), name_(std::move(name)), max_bytes_(max_bytes), buf_(inflate_stream::input_size) {}

  /// Reads the first bytes and picks the decoder. Call once, before `source()`.
  result<void> start() {
    while (head_end_ < 2) {  // two bytes tell gzip and zlib apart from text
      auto got = read_raw(buf_.data() + head_end_, buf_.size() - head_end_);
      if (!got) return got.error();
      if (*got == 0) break;
      head_end_ += *got;
    }
    kind_ = detect_compression(std::string_view(reinterpret_cast<const char*>(buf_.data()), head_end_));
    if (kind_ != compression::none) {
      inflate_options options;
      options.wrapper = kind_;
      options.max_output_bytes = max_bytes_;
      options.name = name_;
      inflater_.emplace([this](unsigned char* data, std::size_t size) { return read_buffered(data, size); },
                        std::move(options));
    }
    return {};
  }
  [[nodiscard]] bool compressed() const noexcept { return kind_ != compression::none; }

  /// The text, piece by piece. The object must outlive the source.
  [[nodiscard]] text_source source() {
    return [this]() -> result<std::string_view> {
      if (inflater_) return inflater_->next();
      if (head_pos_ < head_end_) {
        const std::string_view head(reinterpret_cast<const char*>(buf_.data()) + head_pos_, head_end_ - head_pos_);
        head_pos_ = head_end_;
        return head;
      }
      auto got = read_raw(buf_.data(), buf_.size());
      if (!got) return got.error();
      return std::string_view(reinterpret_cast<const char*>(buf_.data()), *got);
    };
  }

 private:
  result<std::size_t> read_raw(unsigned char* data, std::size_t size) {
    auto got = raw_(data, size);
    if (!got) return got;
    raw_total_ += *got;
    if (raw_total_ > max_bytes_) {
      return make_error(errc::resource_exhausted,
                        name_ + ": input is larger than the limit of " + std::to_string(max_bytes_) + " bytes");
    }
    return got;
  }
  // The inflater's source: the bytes read to detect the format, then the rest.
  result<std::size_t> read_buffered(unsigned char* data, std::size_t size) {
    if (head_pos_ < head_end_) {
      const std::size_t n = std::min(size, head_end_ - head_pos_);
      std::memcpy(data, buf_.data() + head_pos_, n);
      head_pos_ += n;
      return n;
    }
    return read_raw(data, size);
  }

  byte_source raw_;
  std::string name_;
  std::uint64_t max_bytes_;
  std::vector<unsigned char> buf_;
  std::size_t head_pos_ = 0, head_end_ = 0;
  std::uint64_t raw_total_ = 0;
  compression kind_ = compression::none;
  std::optional<inflate_stream> inflater_;
};

/// A JSON path for messages: `prefix`, then up to two indices (`problem.edges.costs[17][4]`).
struct json_path {
  std::string_view prefix;
  std::size_t first = npos;
  std::size_t second = npos;
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

  [[nodiscard]] json_path at(std::size_t i) const noexcept {
    return first == npos ? json_path{prefix, i, npos} : json_path{prefix, first, i};
  }
  [[nodiscard]] std::string str() const {
    std::string s(prefix);
    if (first != npos) s += "[" + std::to_string(first) + "]";
    if (second != npos) s += "[" + std::to_string(second) + "]";
    return s;
  }
};

/// A pull tokenizer over text pieces: a window of the text with its offset, refilled as it
/// is consumed. Errors are kept (the first one wins) and every reading call returns false after.
class json_cursor {
 public:
  json_cursor(text_source source, std::string name, bool compressed)
      : source_(std::move(source)), name_(std::move(name)), compressed_(compressed), buf_(window_) {}

  [[nodiscard]] std::uint64_t offset() const noexcept { return base_ + pos_; }
  [[nodiscard]] bool failed() const noexcept { return error_.has_value(); }
  [[nodiscard]] const error& failure() const noexcept { return *error_; }

  /// Records `what` at `path` and `offset` (unless an error is already recorded, or the text
  /// source failed, whose error then wins). @returns false.
  bool fail(const json_path& path, std::uint64_t at, const std::string& what, errc code = errc::parse_error) {
    if (error_) return false;
    std::string m = name_ + ": ";
    if (!path.prefix.empty()) m += path.str() + ": ";
    m += "at byte " + std::to_string(at) + (compressed_ ? " of the decompressed text" : "") + ": " + what;
    error_ = make_error(code, std::move(m));
    return false;
  }
  bool fail_here(const json_path& path, const std::string& what) { return fail(path, offset(), what); }

  /// At least `n` bytes from the current position, unless the text ends first. @returns the
  /// count available.
  std::size_t ensure(std::size_t n) {
    if (end_ - pos_ < n) fill();
    return end_ - pos_;
  }
  /// The next byte, or -1 at the end of the text.
  int peek() {
    if (pos_ == end_ && ensure(1) == 0) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  void advance(std::size_t n = 1) noexcept { pos_ += n; }
  [[nodiscard]] const char* data() const noexcept { return buf_.data() + pos_; }
  [[nodiscard]] std::size_t available() const noexcept { return end_ - pos_; }

  void skip_whitespace() {
    for (;;) {
      while (pos_ != end_ && is_space(buf_[pos_])) ++pos_;
      if (pos_ != end_ || ensure(1) == 0) return;
    }
  }
  static constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

  /// Consumes `c` after optional whitespace, or fails naming what was found.
  bool expect(char c, const json_path& path, const char* what) {
    skip_whitespace();
    if (peek() == c) {
      ++pos_;
      return true;
    }
    return fail_here(path, std::string("expected ") + what + ", found " + describe_next());
  }

  /// The next token quoted for a message, or "the end of the text".
  std::string describe_next() {
    if (ensure(max_quoted_chars + 1) == 0) return source_failed() ? "a read error" : "the end of the text";
    std::size_t n = 0;
    const std::size_t avail = available();
    if (is_token_char(buf_[pos_])) {
      while (n < avail && n <= max_quoted_chars && is_token_char(buf_[pos_ + n])) ++n;
    } else {
      n = 1;
    }
    return quote_token(std::string_view(buf_.data() + pos_, n));
  }
  static constexpr bool is_token_char(char c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '+' ||
           c == '.' || c == '_';
  }

  /// A JSON integer within int64 (no fraction, no exponent).
  bool read_int(const json_path& path, std::int64_t& value) {
    skip_whitespace();
    if (ensure(max_int_chars_) == 0) return fail_here(path, "expected an integer, found " + describe_next());
    const char* p = buf_.data() + pos_;
    const char* const end = buf_.data() + end_;
    const bool negative = *p == '-';
    if (negative) ++p;
    if (p == end || *p < '0' || *p > '9') return fail_here(path, "expected an integer, found " + describe_next());
    const char* const digits = p;
    std::uint64_t magnitude = 0;
    // 18 digits cannot overflow; a 19th is checked; a 20th is out of range.
    for (; p != end && p - digits < 18 && *p >= '0' && *p <= '9'; ++p) magnitude = magnitude * 10 + static_cast<std::uint64_t>(*p - '0');
    bool overflow = false;
    if (p != end && *p >= '0' && *p <= '9') {
      const std::uint64_t bound = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
      const auto d = static_cast<std::uint64_t>(*p - '0');
      overflow = magnitude > (bound - d) / 10;
      magnitude = magnitude * 10 + d;
      ++p;
    }
    if (p - digits > 1 && *digits == '0') return fail_here(path, describe_next() + " is not a JSON number (a leading zero)");
    if (p != end && (*p == '.' || *p == 'e' || *p == 'E')) {
      return fail_here(path, describe_next() + " is not an integer (fractions and exponents are not allowed)");
    }
    if (overflow || (p != end && *p >= '0' && *p <= '9')) return fail_here(path, describe_next() + " is out of the range of int64");
    value = negative ? static_cast<std::int64_t>(std::uint64_t{0} - magnitude) : static_cast<std::int64_t>(magnitude);
    pos_ = static_cast<std::size_t>(p - buf_.data());
    return true;
  }

  /// The common case of `read_int`, without refills: after optional whitespace, a non-negative
  /// integer of at most 19 digits (which cannot overflow uint64) within int64, no leading zero,
  /// ended inside the window by a byte that is not part of a number. @returns false, consuming
  /// nothing, for anything else; the caller then reads it with `read_int`, which names the fault.
  bool scan_plain_int(std::int64_t& value) noexcept {
    const char* p = buf_.data() + pos_;
    const char* const end = buf_.data() + end_;
    while (p != end && is_space(*p)) ++p;
    const char* const digits = p;
    std::uint64_t magnitude = 0;
    p = scan_digits(p, end, magnitude);
    const auto count = p - digits;
    if (count == 0 || count > 19 || p == end || *p == '.' || *p == 'e' || *p == 'E' || (*digits == '0' && count > 1) ||
        magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return false;
    }
    value = static_cast<std::int64_t>(magnitude);
    pos_ = static_cast<std::size_t>(p - buf_.data());
    return true;
  }
  static constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

  /// The decimal digits from `p`, eight bytes at a time while the window has eight more: their
  /// value goes to `magnitude` (modulo 2^64 past 19 digits). @returns the first byte after them.
  static const char* scan_digits(const char* p, const char* end, std::uint64_t& magnitude) noexcept {
    if constexpr (std::endian::native == std::endian::little) {
      static constexpr std::uint64_t pow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
      const char* const start = p;
      while (end - p >= 8 && p - start <= 19) {
        std::uint64_t word = 0;
        std::memcpy(&word, p, 8);
        const unsigned run = digit_run(word);
        magnitude = magnitude * pow10[run] + digits_value(word, run);
        p += run;
        if (run < 8) return p;
      }
    }
    for (; p != end && is_digit(*p); ++p) magnitude = magnitude * 10 + static_cast<std::uint64_t>(*p - '0');
    return p;
  }
  // How many of the eight bytes of `word` (little-endian: the first in the low byte) are
  // digits before the first that is not: a byte is a digit when its high nibble is 3 and adding
  // 6 to it keeps the high nibble 3. A carry out of a byte comes only from one that is no digit.
  static unsigned digit_run(std::uint64_t word) noexcept {
    constexpr std::uint64_t high = 0xF0F0F0F0F0F0F0F0, threes = 0x3030303030303030, sixes = 0x0606060606060606;
    const std::uint64_t bad = ((word & high) ^ threes) | (((word + sixes) & high) ^ threes);
    return bad == 0 ? 8 : static_cast<unsigned>(std::countr_zero(bad)) / 8;
  }
  // The value of the first `run` (at most 8) digits of `word`: they move to the high bytes over
  // zeros, then pairs, quads and the octet combine by multiplication.
  static std::uint64_t digits_value(std::uint64_t word, unsigned run) noexcept {
    if (run == 0) return 0;
    std::uint64_t d = (word - 0x3030303030303030) << (8 * (8 - run));  // borrows only reach dropped bytes
    d = d * 10 + (d >> 8);
    d = (((d & 0x000000FF000000FF) * (100 + (std::uint64_t{1000000} << 32))) +
         (((d >> 16) & 0x000000FF000000FF) * (1 + (std::uint64_t{10000} << 32)))) >>
        32;
    return d;
  }

  /// The next byte after whitespace (-1 at the end), with no call when it is in the window.
  int peek_after_space() {
    while (pos_ != end_ && is_space(buf_[pos_])) ++pos_;
    if (pos_ != end_) return static_cast<unsigned char>(buf_[pos_]);
    skip_whitespace();
    return peek();
  }

  /// A JSON string; its bytes go to `out` (escapes decoded to UTF-8) while it has fewer than
  /// `max_bytes`. @returns false on a syntax error; `truncated` says whether bytes were dropped.
  bool read_string(const json_path& path, std::string& out, std::size_t max_bytes, bool& truncated) {
    out.clear();
    truncated = false;
    if (!expect('"', path, "a string")) return false;
    const auto put = [&](std::string_view bytes) {
      if (out.size() + bytes.size() <= max_bytes) out.append(bytes);
      else truncated = true;
    };
    for (;;) {
      if (pos_ == end_ && ensure(1) == 0) return fail_here(path, "the text ends inside a string");
      const char c = buf_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return fail_here(path, "a control character inside a string");
      if (c != '\\') {
        std::size_t n = 1;
        while (pos_ + n != end_ && buf_[pos_ + n] != '"' && buf_[pos_ + n] != '\\' &&
               static_cast<unsigned char>(buf_[pos_ + n]) >= 0x20) {
          ++n;
        }
        put(std::string_view(buf_.data() + pos_, n));
        pos_ += n;
        continue;
      }
      char utf8[4];
      std::size_t n = 0;
      if (!read_escape(path, utf8, n)) return false;
      put(std::string_view(utf8, n));
    }
  }

  /// Skips one JSON value of any kind, checking its syntax, nesting at most `json_max_skip_depth`.
  bool skip_value(const json_path& path) {
    std::string open;  // the closing bracket of each open array or object
    std::string key;
    bool truncated = false;
    for (;;) {
      skip_whitespace();
      const int c = peek();
      if (c == '{' || c == '[') {
        if (open.size() == json_max_skip_depth) {
          return fail_here(path, "values nest more than " + std::to_string(json_max_skip_depth) + " levels deep");
        }
        ++pos_;
        open += c == '{' ? '}' : ']';
        skip_whitespace();
        if (peek() == open.back()) {
          ++pos_;
          open.pop_back();
        } else {
          if (c == '{' && (!read_string(path, key, 0, truncated) || !expect(':', path, "':'"))) return false;
          continue;
        }
      } else if (c == '"') {
        if (!read_string(path, key, 0, truncated)) return false;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        if (!skip_number(path)) return false;
      } else if (!skip_literal(path)) {
        return false;
      }
      // After a value: close the containers it ends, or go on to the next element.
      for (;;) {
        if (open.empty()) return true;
        skip_whitespace();
        const int next = peek();
        if (next == open.back()) {
          ++pos_;
          open.pop_back();
          continue;
        }
        if (next != ',') {
          return fail_here(path, std::string("expected ',' or '") + open.back() + "', found " + describe_next());
        }
        ++pos_;
        if (open.back() == '}' && (!read_string(path, key, 0, truncated) || !expect(':', path, "':'"))) return false;
        break;
      }
    }
  }

  /// True once the text has ended (after whitespace).
  bool at_end() {
    skip_whitespace();
    return peek() == -1 && !source_failed();
  }
  /// Records the text source's own error (a gzip error, a read error), if it failed.
  bool source_failed() {
    if (source_error_ && !error_) error_ = source_error_;
    return source_error_.has_value();
  }

 private:
  static constexpr std::size_t window_ = std::size_t{1} << 18;
  static constexpr std::size_t max_int_chars_ = 32;  // more than any int64 with its sign

  // Moves the unread bytes to the front and appends more text.
  void fill() {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    base_ += pos_;
    end_ -= pos_;
    pos_ = 0;
    while (end_ < buf_.size()) {
      if (pending_.empty()) {
        if (ended_) return;
        auto piece = source_();
        if (!piece) {
          source_error_ = piece.error();
          ended_ = true;
          source_failed();
          return;
        }
        if (piece->empty()) {
          ended_ = true;
          return;
        }
        pending_ = *piece;
      }
      const std::size_t n = std::min(pending_.size(), buf_.size() - end_);
      std::memcpy(buf_.data() + end_, pending_.data(), n);
      pending_.remove_prefix(n);
      end_ += n;
    }
  }

  bool read_escape(const json_path& path, char* utf8, std::size_t& n) {
    if (ensure(2) < 2) return fail_here(path, "the text ends inside a string");
    const char e = buf_[pos_ + 1];
    const char* simple = "\"\\/bfnrt";
    const char* decoded = "\"\\/\b\f\n\r\t";
    if (const char* hit = e != '\0' ? std::strchr(simple, e) : nullptr; hit != nullptr) {
      utf8[0] = decoded[hit - simple];
      n = 1;
      pos_ += 2;
      return true;
    }
    if (e != 'u') return fail_here(path, "an invalid escape in a string");
    std::uint32_t cp = 0;
    if (!read_hex4(path, cp)) return false;
    if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate: its low half must follow
      std::uint32_t low = 0;
      if (ensure(2) < 2 || buf_[pos_] != '\\' || buf_[pos_ + 1] != 'u' || !read_hex4(path, low) || low < 0xDC00 ||
          low > 0xDFFF) {
        return fail_here(path, "an unpaired surrogate in a string");
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return fail_here(path, "an unpaired surrogate in a string");
    }
    encode_utf8(cp, utf8, n);
    return true;
  }
  // `\uXXXX` at the current position.
  bool read_hex4(const json_path& path, std::uint32_t& cp) {
    if (ensure(6) < 6) return fail_here(path, "the text ends inside a string");
    cp = 0;
    for (std::size_t k = 2; k < 6; ++k) {
      const char h = buf_[pos_ + k];
      const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      if (d < 0) return fail_here(path, "an invalid \\u escape in a string");
      cp = cp * 16 + static_cast<std::uint32_t>(d);
    }
    pos_ += 6;
    return true;
  }
  static void encode_utf8(std::uint32_t cp, char* out, std::size_t& n) noexcept {
    if (cp < 0x80) {
      out[0] = static_cast<char>(cp);
      n = 1;
    } else if (cp < 0x800) {
      out[0] = static_cast<char>(0xC0 | (cp >> 6));
      out[1] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 2;
    } else if (cp < 0x10000) {
      out[0] = static_cast<char>(0xE0 | (cp >> 12));
      out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out[2] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 3;
    } else {
      out[0] = static_cast<char>(0xF0 | (cp >> 18));
      out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out[3] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 4;
    }
  }

  // Any JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  bool skip_number(const json_path& path) {
    const std::uint64_t at = offset();
    const auto digits = [&] {
      std::size_t count = 0;
      for (int c = peek(); c >= '0' && c <= '9'; c = peek(), ++count) ++pos_;
      return count;
    };
    if (peek() == '-') ++pos_;
    const bool leading_zero = peek() == '0';
    const std::size_t whole = digits();
    bool ok = whole != 0 && !(leading_zero && whole > 1);
    if (ok && peek() == '.') {
      ++pos_;
      ok = digits() != 0;
    }
    if (ok && (peek() == 'e' || peek() == 'E')) {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      ok = digits() != 0;
    }
    return ok ? true : fail(path, at, "an invalid number");
  }
  bool skip_literal(const json_path& path) {
    for (const std::string_view word : {"true", "false", "null"}) {
      if (ensure(word.size()) >= word.size() && std::string_view(buf_.data() + pos_, word.size()) == word) {
        pos_ += word.size();
        return true;
      }
    }
    return fail_here(path, "expected a value, found " + describe_next());
  }

  text_source source_;
  std::string name_;
  bool compressed_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0;
  std::uint64_t base_ = 0;  // offset of buf_[0] in the text
  std::string_view pending_;
  bool ended_ = false;
  std::optional<error> source_error_;
  std::optional<error> error_;
};

}  // namespace detail
}  // namespace xlamem
