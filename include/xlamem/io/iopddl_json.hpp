// SPDX-License-Identifier: Apache-2.0
/// @file
/// Reader for the IOPDDL problem file (Google's auto-sharding contest, ASPLOS/EuroSys 2025):
///
///     {"problem": {"name": "...",
///                  "nodes": {"intervals": [[lo, hi], ...], "costs": [[c, ...], ...], "usages": [[u, ...], ...]},
///                  "edges": {"nodes": [[u, v], ...], "costs": [[c, ...], ...]},
///                  "usage_limit": L}}
///
/// plain or gzip/zlib-compressed (told apart by the first bytes), into `sharding::problem`.
///
/// Streaming: a small pull tokenizer reads the (decompressed) text in chunks and appends the
/// numbers straight to the problem's flat arrays, so memory is the size of those arrays plus a
/// few hundred KiB, never the text or a JSON tree; rows of plain integers take a fast path
/// (eight digits at a time), anything unusual the checked one. Keys may come in any order (the
/// contest's files put the edges first), unknown keys are skipped (their values are still
/// checked to be JSON), and whitespace may be anywhere. Because the edges can come before the
/// nodes, sizes are checked once everything is read.
///
/// Bad input is an `error` whose message names the source, the JSON path and the byte offset in
/// the text (in the decompressed text for compressed input): `errc::parse_error` for text that is
/// not the format (a syntax error, a number that is not an integer or lies outside int64, a
/// missing or repeated key, trailing characters, a truncated or corrupt gzip stream), and
/// `errc::invalid_argument` for values the problem cannot have (a negative cost or usage,
/// an interval with `lo < 0` or `lo > hi`, a node without strategies, usages and costs of different lengths, an edge matrix
/// of the wrong size, an edge node out of range). Limits: `iopddl_max_bytes` of text (checked
/// on the file, the compressed input and the decompressed text), `iopddl_max_name_bytes` of
/// name, `iopddl_max_depth` levels of nesting in skipped values.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/checked.hpp"
#include "xlamem/error.hpp"
#include "xlamem/input_file.hpp"
#include "xlamem/io/gzip.hpp"
#include "xlamem/sharding/deadline.hpp"
#include "xlamem/sharding/problem.hpp"

namespace xlamem {

/// Largest IOPDDL text read, compressed or not (4 GiB; the contest's largest file is 1.3 GB).
inline constexpr std::uint64_t iopddl_max_bytes = std::uint64_t{4} << 30;
/// Longest problem name (64 KiB).
inline constexpr std::size_t iopddl_max_name_bytes = std::size_t{1} << 16;
/// Deepest nesting of arrays and objects inside a skipped (unknown) value.
inline constexpr std::size_t iopddl_max_depth = 256;

/// The default limits of the IOPDDL readers (`iopddl_max_bytes`).
[[nodiscard]] constexpr input_limits iopddl_limits() noexcept { return input_limits{iopddl_max_bytes}; }

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

/// Numbers appended in blocks, moved into one exact-size vector at the end. A vector that
/// doubles holds its old and new buffers at once (three times the values at the last growth,
/// twice resident); blocks of 32 MiB are mapped and unmapped whole by the allocator and their
/// untouched pages cost nothing, so the peak is the values plus one block. The first block is
/// small, for small problems.
class chunked_values {
 public:
  static constexpr std::size_t first_block = std::size_t{1} << 12;
  static constexpr std::size_t block_size = std::size_t{1} << 22;

  void push_back(std::int64_t v) {
    if (fill_ == capacity_) {
      if (!blocks_.empty()) blocks_.back().size = fill_;
      capacity_ = blocks_.empty() ? first_block : block_size;
      blocks_.push_back({std::make_unique_for_overwrite<std::int64_t[]>(capacity_), 0});
      fill_ = 0;
    }
    blocks_.back().data[fill_++] = v;
    ++size_;
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// Moves every value into `out` (replacing its contents), freeing each block once copied.
  void move_into(std::vector<std::int64_t>& out) {
    if (!blocks_.empty()) blocks_.back().size = fill_;
    out.clear();
    out.shrink_to_fit();
    out.reserve(size_);
    for (auto& b : blocks_) {
      out.insert(out.end(), b.data.get(), b.data.get() + b.size);
      b.data.reset();
    }
    *this = chunked_values{};
  }

 private:
  struct block {
    std::unique_ptr<std::int64_t[]> data;
    std::size_t size;
  };
  std::vector<block> blocks_;
  std::size_t fill_ = 0, capacity_ = 0, size_ = 0;
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

  /// Skips one JSON value of any kind, checking its syntax, nesting at most `iopddl_max_depth`.
  bool skip_value(const json_path& path) {
    std::string open;  // the closing bracket of each open array or object
    std::string key;
    bool truncated = false;
    for (;;) {
      skip_whitespace();
      const int c = peek();
      if (c == '{' || c == '[') {
        if (open.size() == iopddl_max_depth) {
          return fail_here(path, "values nest more than " + std::to_string(iopddl_max_depth) + " levels deep");
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

/// Fills a `sharding::problem` from the IOPDDL text of a cursor, then checks it whole.
class iopddl_reader {
 public:
  explicit iopddl_reader(json_cursor& in) : in_(in) {}

  result<sharding::problem> read() {
    if (!read_document()) return in_.failure();
    costs_.move_into(p_.costs);
    usages_.move_into(p_.usages);
    edge_costs_values_.move_into(p_.edge_costs);
    if (!check()) return in_.failure();
    return std::move(p_);
  }

 private:
  // Where each row of a node or edge array starts in the text, for the checks after reading.
  struct rows {
    std::vector<std::uint64_t> starts;
    std::uint64_t array_start = 0;
    bool seen = false;
  };

  bool read_document() {
    in_.skip_whitespace();
    bool problem_seen = false;
    const bool ok = read_object({}, [&](std::string_view key, std::uint64_t at) {
      if (key != "problem") return skip_unknown("", key);
      if (problem_seen) return in_.fail({"problem"}, at, "the key 'problem' appears twice");
      problem_seen = true;
      return read_problem();
    });
    if (!ok) return false;
    if (!in_.at_end()) {
      if (in_.failed() || in_.source_failed()) return false;
      return in_.fail({}, in_.offset(), "trailing characters after the JSON value: " + in_.describe_next());
    }
    if (in_.failed()) return false;
    if (!problem_seen) return in_.fail({}, in_.offset(), "the key 'problem' is missing");
    return true;
  }

  bool read_problem() {
    bool name_seen = false, limit_seen = false, nodes_seen = false, edges_seen = false;
    in_.skip_whitespace();
    const std::uint64_t start = in_.offset();
    const bool ok = read_object({"problem"}, [&](std::string_view key, std::uint64_t at) {
      if (key == "name") return once(name_seen, "problem.name", at) && read_name();
      if (key == "usage_limit") return once(limit_seen, "problem.usage_limit", at) && read_limit();
      if (key == "nodes") return once(nodes_seen, "problem.nodes", at) && read_nodes();
      if (key == "edges") return once(edges_seen, "problem.edges", at) && read_edges();
      return skip_unknown("problem", key);
    });
    return ok && required(limit_seen, "problem.usage_limit", start) && required(nodes_seen, "problem.nodes", start) &&
           required(edges_seen, "problem.edges", start);
  }
  bool read_nodes() {
    in_.skip_whitespace();
    nodes_at_ = in_.offset();
    return read_object({"problem.nodes"}, [&](std::string_view key, std::uint64_t at) {
      if (key == "intervals") return once(intervals_seen_, "problem.nodes.intervals", at) && read_intervals();
      if (key == "costs") return read_rows(node_costs_, {"problem.nodes.costs"}, at, costs_, p_.strategy_offsets, "cost");
      if (key == "usages") return read_rows(node_usages_, {"problem.nodes.usages"}, at, usages_, usage_offsets_, "usage");
      return skip_unknown("problem.nodes", key);
    });
  }
  bool read_edges() {
    in_.skip_whitespace();
    edges_at_ = in_.offset();
    return read_object({"problem.edges"}, [&](std::string_view key, std::uint64_t at) {
      if (key == "nodes") return read_edge_nodes(at);
      if (key == "costs") return read_rows(edge_costs_, {"problem.edges.costs"}, at, edge_costs_values_, p_.edge_offsets, "cost");
      return skip_unknown("problem.edges", key);
    });
  }
  // A key the format does not have: its value is checked to be JSON and dropped.
  bool skip_unknown(std::string_view parent, std::string_view key) {
    std::string path(parent);
    if (!path.empty()) path += '.';
    const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) { return json_cursor::is_token_char(c); });
    path += plain ? std::string(key) : quote_token(key);
    return in_.skip_value({path});
  }

  bool once(bool& seen, std::string_view path, std::uint64_t at) {
    if (seen) return in_.fail({path}, at, "the key appears twice");
    seen = true;
    return true;
  }
  bool required(bool seen, std::string_view path, std::uint64_t object_at) {
    return seen || in_.fail({path}, object_at, "the key is missing");
  }

  // An object: `member(key, offset of the key)` reads each value.
  template <class Member>
  bool read_object(const json_path& path, Member&& member) {
    if (!in_.expect('{', path, "an object '{'")) return false;
    in_.skip_whitespace();
    if (in_.peek() == '}') {
      in_.advance();
      return true;
    }
    std::string key;
    for (;;) {
      in_.skip_whitespace();
      const std::uint64_t at = in_.offset();
      bool truncated = false;
      if (!in_.read_string(path, key, 64, truncated) || !in_.expect(':', path, "':' after a key")) return false;
      if (!member(truncated ? std::string_view{} : std::string_view(key), at)) return false;
      in_.skip_whitespace();
      const int c = in_.peek();
      if (c != ',' && c != '}') return in_.fail_here(path, "expected ',' or '}', found " + in_.describe_next());
      in_.advance();
      if (c == '}') return true;
    }
  }

  // `[` elements `]`: `element(index)` reads each one.
  template <class Element>
  bool read_array(const json_path& path, Element&& element) {
    if (!in_.expect('[', path, "an array '['")) return false;
    in_.skip_whitespace();
    if (in_.peek() == ']') {
      in_.advance();
      return true;
    }
    for (std::size_t i = 0;; ++i) {
      if (!element(i)) return false;
      in_.skip_whitespace();
      const int c = in_.peek();
      if (c == ',') {
        in_.advance();
        continue;
      }
      if (c == ']') {
        in_.advance();
        return true;
      }
      return in_.fail_here(path, "expected ',' or ']', found " + in_.describe_next());
    }
  }

  bool read_name() {
    bool truncated = false;
    const std::uint64_t at = (in_.skip_whitespace(), in_.offset());
    if (!in_.read_string({"problem.name"}, p_.name, iopddl_max_name_bytes, truncated)) return false;
    if (truncated) {
      return in_.fail({"problem.name"}, at, "the name is longer than " + std::to_string(iopddl_max_name_bytes) + " bytes",
                      errc::resource_exhausted);
    }
    return true;
  }
  bool read_limit() {
    std::int64_t v = 0;
    const json_path path{"problem.usage_limit"};
    if (!in_.read_int(path, v)) return false;
    if (v < 0) return in_.fail(path, in_.offset(), "the usage limit " + std::to_string(v) + " is negative", errc::invalid_argument);
    p_.limit = v;
    return true;
  }
  bool non_negative(const json_path& path, std::int64_t v, std::uint64_t at, const char* what) {
    if (v >= 0) return true;
    return in_.fail(path, at, std::string(what) + " " + std::to_string(v) + " is negative", errc::invalid_argument);
  }

  bool read_intervals() {
    const json_path path{"problem.nodes.intervals"};
    return read_array(path, [&](std::size_t i) {
      in_.skip_whitespace();
      const std::uint64_t at = in_.offset();
      std::int64_t bound[2] = {0, 0};
      std::size_t k = 0;
      const bool ok = read_int_row(path.at(i), nullptr, 2, "an interval is [lo, hi]: more than 2 values",
                                   [&](std::size_t j, std::int64_t v) {
                                     bound[j] = v;
                                     k = j + 1;
                                   });
      if (!ok) return false;
      if (k != 2) return in_.fail(path.at(i), at, "an interval is [lo, hi]: " + std::to_string(k) + " values");
      if (bound[0] < 0) {  // time steps count from 0
        return in_.fail(path.at(i), at, "lo " + std::to_string(bound[0]) + " is negative (time steps start at 0)",
                        errc::invalid_argument);
      }
      if (bound[0] > bound[1]) {
        return in_.fail(path.at(i), at, "lo " + std::to_string(bound[0]) + " is above hi " + std::to_string(bound[1]),
                        errc::invalid_argument);
      }
      p_.intervals.push_back({bound[0], bound[1]});
      return true;
    });
  }

  // One row `[v, ...]` of at most `max_values` integers (`too_many` at the next one), each
  // passed to `put(j, v)`; `what` names a value that must not be negative (null: any sign).
  // Plain numbers take the cursor's fast path, anything else its checked one.
  template <class Put>
  bool read_int_row(const json_path& path, const char* what, std::size_t max_values, const char* too_many, Put&& put) {
    if (!in_.expect('[', path, "an array '['")) return false;
    if (in_.peek_after_space() == ']') {
      in_.advance();
      return true;
    }
    for (std::size_t j = 0;; ++j) {
      if (j >= max_values) return in_.fail_here(path, too_many);
      std::int64_t v = 0;
      if (!in_.scan_plain_int(v)) {
        in_.skip_whitespace();
        const std::uint64_t at = in_.offset();
        if (!in_.read_int(path.at(j), v) || (what != nullptr && !non_negative(path.at(j), v, at, what))) return false;
      }
      put(j, v);
      const int c = in_.peek_after_space();
      if (c == ',' || c == ']') {
        in_.advance();
        if (c == ']') return true;
        continue;
      }
      return in_.fail_here(path, "expected ',' or ']', found " + in_.describe_next());
    }
  }

  // An array of integer rows (node costs or usages, edge matrices) appended to `values`, the
  // end of each row to `ends` (which starts with 0).
  bool read_rows(rows& r, const json_path& path, std::uint64_t key_at, chunked_values& values,
                 std::vector<std::size_t>& ends, const char* what) {
    if (!once(r.seen, path.prefix, key_at)) return false;
    in_.skip_whitespace();
    r.array_start = in_.offset();
    return read_array(path, [&](std::size_t i) {
      in_.skip_whitespace();
      r.starts.push_back(in_.offset());
      const bool ok = read_int_row(path.at(i), what, std::numeric_limits<std::size_t>::max(), "",
                                   [&](std::size_t, std::int64_t v) { values.push_back(v); });
      if (ok) ends.push_back(values.size());
      return ok;
    });
  }

  bool read_edge_nodes(std::uint64_t key_at) {
    const json_path path{"problem.edges.nodes"};
    if (!once(edge_nodes_.seen, path.prefix, key_at)) return false;
    in_.skip_whitespace();
    edge_nodes_.array_start = in_.offset();
    return read_array(path, [&](std::size_t e) {
      in_.skip_whitespace();
      const std::uint64_t at = in_.offset();
      edge_nodes_.starts.push_back(at);
      std::int64_t ends[2] = {0, 0};
      std::size_t k = 0;
      const bool ok = read_int_row(path.at(e), "node index", 2, "an edge is [u, v]: more than 2 nodes",
                                   [&](std::size_t j, std::int64_t v) {
                                     ends[j] = v;
                                     k = j + 1;
                                   });
      if (!ok) return false;
      if (k != 2) return in_.fail(path.at(e), at, "an edge is [u, v]: " + std::to_string(k) + " nodes");
      p_.edges.emplace_back(static_cast<std::size_t>(ends[0]), static_cast<std::size_t>(ends[1]));
      return true;
    });
  }

  // The checks that need every array: counts agree, every node has a strategy, its usages match
  // its costs, edge ends are nodes, and every matrix is |S_u| x |S_v|.
  bool check() {
    if (!required(intervals_seen_, "problem.nodes.intervals", nodes_at_) ||
        !required(node_costs_.seen, "problem.nodes.costs", nodes_at_) ||
        !required(node_usages_.seen, "problem.nodes.usages", nodes_at_) ||
        !required(edge_nodes_.seen, "problem.edges.nodes", edges_at_) ||
        !required(edge_costs_.seen, "problem.edges.costs", edges_at_)) {
      return false;
    }
    const std::size_t n = p_.intervals.size();
    const auto count_error = [&](std::string_view path, std::uint64_t at, std::size_t have, std::string_view other,
                                 std::size_t want, const char* unit) {
      return in_.fail({path}, at,
                      std::to_string(have) + " rows, but " + std::string(other) + " has " + std::to_string(want) + " " + unit,
                      errc::invalid_argument);
    };
    if (node_costs_.starts.size() != n) {
      return count_error("problem.nodes.costs", node_costs_.array_start, node_costs_.starts.size(), "problem.nodes.intervals", n, "nodes");
    }
    if (node_usages_.starts.size() != n) {
      return count_error("problem.nodes.usages", node_usages_.array_start, node_usages_.starts.size(), "problem.nodes.intervals", n,
                         "nodes");
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t s = p_.strategy_count(i);
      if (s == 0) return in_.fail(json_path{"problem.nodes.costs"}.at(i), node_costs_.starts[i], "node " + std::to_string(i) + " has no strategy", errc::invalid_argument);
      const std::size_t u = usage_offsets_[i + 1] - usage_offsets_[i];
      if (u != s) {
        return in_.fail(json_path{"problem.nodes.usages"}.at(i), node_usages_.starts[i],
                        std::to_string(u) + " usage values, but problem.nodes.costs[" + std::to_string(i) + "] has " +
                            std::to_string(s) + " cost values",
                        errc::invalid_argument);
      }
    }
    const std::size_t m = p_.edges.size();
    if (edge_costs_.starts.size() != m) {
      return count_error("problem.edges.costs", edge_costs_.array_start, edge_costs_.starts.size(), "problem.edges.nodes", m, "edges");
    }
    return check_edges(n, m);
  }
  bool check_edges(std::size_t n, std::size_t m) {
    for (std::size_t e = 0; e < m; ++e) {
      const auto [u, v] = p_.edges[e];
      for (std::size_t j = 0; j < 2; ++j) {
        const std::size_t node = j == 0 ? u : v;
        if (node >= n) {
          return in_.fail(json_path{"problem.edges.nodes"}.at(e).at(j), edge_nodes_.starts[e],
                          "node " + std::to_string(node) + " is out of range (the problem has " + std::to_string(n) + " nodes)",
                          errc::invalid_argument);
        }
      }
      const std::size_t su = p_.strategy_count(u), sv = p_.strategy_count(v);
      const std::size_t have = p_.edge_offsets[e + 1] - p_.edge_offsets[e];
      const auto want = checked_mul(su, sv);
      if (!want || *want != have) {
        return in_.fail(json_path{"problem.edges.costs"}.at(e), edge_costs_.starts[e],
                        std::to_string(have) + " cost values, but the matrix of nodes " + std::to_string(u) + " and " + std::to_string(v) +
                            " is " + std::to_string(su) + " x " + std::to_string(sv),
                        errc::invalid_argument);
      }
    }
    return true;
  }

  json_cursor& in_;
  sharding::problem p_;
  chunked_values costs_, usages_, edge_costs_values_;
  std::vector<std::size_t> usage_offsets_{0};
  bool intervals_seen_ = false;
  std::uint64_t nodes_at_ = 0, edges_at_ = 0;  // where the nodes and edges objects start
  rows node_costs_, node_usages_, edge_nodes_, edge_costs_;
};

/// `source`, failing with `errc::deadline_exceeded` once `deadline` has passed (checked before
/// each piece, a few hundred KiB of text).
[[nodiscard]] inline text_source text_until(text_source source, const std::string& name, sharding::solver_deadline deadline) {
  if (!deadline) return source;
  return [source = std::move(source), name, deadline, read = std::uint64_t{0}]() mutable -> result<std::string_view> {
    if (sharding::solver_clock::now() >= *deadline) {
      return make_error(errc::deadline_exceeded,
                        name + ": the time limit ran out while reading, after " + std::to_string(read) + " bytes of text");
    }
    auto piece = source();
    if (piece) read += piece->size();
    return piece;
  };
}

[[nodiscard]] inline result<sharding::problem> read_iopddl_bytes(byte_source raw, const std::string& name,
                                                                 input_limits limits, sharding::solver_deadline deadline) {
  try {
    decoded_text text(std::move(raw), name, limits.max_bytes);
    if (auto started = text.start(); !started) return started.error();
    json_cursor cursor(text_until(text.source(), name, deadline), name, text.compressed());
    return iopddl_reader(cursor).read();
  } catch (const std::bad_alloc&) {
    return make_error(errc::out_of_memory, name + ": out of memory while reading the IOPDDL problem");
  }
}

}  // namespace detail

/// Reads an IOPDDL problem from bytes in memory (JSON text, or gzip/zlib of it); messages start
/// with `source`. Bounded by `limits.max_bytes` like a file.
[[nodiscard]] inline result<sharding::problem> parse_iopddl(std::string_view bytes, std::string_view source = "<input>",
                                                            input_limits limits = iopddl_limits()) {
  return detail::read_iopddl_bytes(memory_byte_source(bytes), std::string(source), limits, std::nullopt);
}

/// Reads an IOPDDL problem from a stream (standard input for `-`), not closed; messages start
/// with `name`. Past `deadline` it stops with `errc::deadline_exceeded`.
[[nodiscard]] inline result<sharding::problem> read_iopddl_stream(std::FILE* f, const std::string& name,
                                                                  input_limits limits = iopddl_limits(),
                                                                  sharding::solver_deadline deadline = std::nullopt) {
  return detail::read_iopddl_bytes(file_byte_source(f, name), name, limits, deadline);
}

/// Reads the IOPDDL problem file `path` (a regular file of at most `limits.max_bytes`, JSON or
/// gzip/zlib-compressed JSON of at most that many bytes decompressed). Past `deadline` it stops
/// with `errc::deadline_exceeded` (the text is checked piece by piece, a few hundred KiB each).
[[nodiscard]] inline result<sharding::problem> read_iopddl(const std::string& path, input_limits limits = iopddl_limits(),
                                                           sharding::solver_deadline deadline = std::nullopt) {
  auto file = open_input_file(path, limits);
  if (!file) return file.error();
  return detail::read_iopddl_bytes(file_byte_source(file->get(), path), path, limits, deadline);
}

}  // namespace xlamem
