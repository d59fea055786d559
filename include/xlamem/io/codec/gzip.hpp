// SPDX-License-Identifier: Apache-2.0
/// @file
/// A streaming DEFLATE decoder (RFC 1951) with the gzip (RFC 1952) and zlib (RFC 1950)
/// wrappers, standard library only, so readers take compressed input without zlib.
///
/// `inflate_stream` pulls compressed bytes from a `byte_source` (a `std::FILE*`, bytes in memory,
/// or any callable) in chunks of 64 KiB and hands out the decompressed bytes in chunks of up to
/// 256 KiB: memory is a fixed ~400 KiB whatever the size of the input. Stored, fixed and dynamic
/// Huffman blocks; gzip headers with every optional field (extra, name, comment, header CRC);
/// the CRC-32 and ISIZE of every member (or zlib's Adler-32) checked; gzip files of several
/// members read as one stream. Huffman codes decode through tables (10 bits first, then a
/// second table for longer codes), not bit by bit.
///
/// Every failure is an `error` naming the input and the byte offset in the compressed input:
/// a truncated stream (`errc::parse_error`, "ends at byte N"), corrupt data (a bad header,
/// an invalid code, a distance before the start of the output, a checksum mismatch), trailing
/// bytes after the last member, or more output than `max_output_bytes`
/// (`errc::resource_exhausted`, so a small file that expands without bound is refused early).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"

namespace xlamem {

/// Where compressed bytes come from: writes up to `size` bytes at `data` and @returns how many
/// (0 only at the end of the input), or an error.
using byte_source = std::function<result<std::size_t>(unsigned char* data, std::size_t size)>;

/// A source over bytes in memory; they must outlive the source.
[[nodiscard]] inline byte_source memory_byte_source(std::string_view bytes) {
  return [bytes, pos = std::size_t{0}](unsigned char* data, std::size_t size) mutable -> result<std::size_t> {
    const std::size_t n = std::min(size, bytes.size() - pos);
    if (n != 0) std::memcpy(data, bytes.data() + pos, n);
    pos += n;
    return n;
  };
}

/// A source reading `f` (not owned, not closed); a read error is `errc::unavailable` naming `name`.
[[nodiscard]] inline byte_source file_byte_source(std::FILE* f, std::string name) {
  return [f, name = std::move(name)](unsigned char* data, std::size_t size) -> result<std::size_t> {
    const std::size_t got = std::fread(data, 1, size, f);
    if (got == 0 && std::ferror(f) != 0) return make_error(errc::unavailable, name + ": read error");
    return got;
  };
}

/// How compressed bytes are wrapped.
enum class compression {
  none,     ///< not compressed
  gzip,     ///< RFC 1952: one or more gzip members
  zlib,     ///< RFC 1950: a zlib header, a deflate stream, an Adler-32
  deflate,  ///< RFC 1951: a bare deflate stream
};

/// The wrapper that the first bytes of an input announce: gzip (1f 8b), zlib (a valid RFC 1950
/// header: method 8, window at most 32 KiB, check bits) or none. A bare deflate stream has no
/// signature and reads as `none`.
[[nodiscard]] constexpr compression detect_compression(std::string_view first_bytes) noexcept {
  if (first_bytes.size() < 2) return compression::none;
  const auto b0 = static_cast<unsigned char>(first_bytes[0]);
  const auto b1 = static_cast<unsigned char>(first_bytes[1]);
  if (b0 == 0x1f && b1 == 0x8b) return compression::gzip;
  if ((b0 & 0x0f) == 8 && (b0 >> 4) <= 7 && ((b0 << 8) | b1) % 31 == 0 && (b1 & 0x20) == 0) return compression::zlib;
  return compression::none;
}

namespace detail {
struct crc32_table_set {
  std::uint32_t t[8][256];
};
// Slicing by 8: t[k][b] is the CRC of byte b followed by k zero bytes.
constexpr crc32_table_set make_crc32_tables() noexcept {
  crc32_table_set s{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    s.t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (std::uint32_t b = 0; b < 256; ++b) s.t[k][b] = (s.t[k - 1][b] >> 8) ^ s.t[0][s.t[k - 1][b] & 0xff];
  }
  return s;
}
inline constexpr crc32_table_set crc32_tables = make_crc32_tables();
}  // namespace detail

/// The CRC-32 of gzip and PNG (polynomial 0xEDB88320) of `data`, continuing from `crc`
/// (0 to start).
[[nodiscard]] inline std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc = 0) noexcept {
  const auto& t = detail::crc32_tables.t;
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = ~crc;
  for (; size >= 8; size -= 8, p += 8) {
    const std::uint32_t lo = c ^ (std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
                                  std::uint32_t{p[3]} << 24);
    c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
        t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
  }
  for (; size != 0; --size, ++p) c = t[0][(c ^ *p) & 0xff] ^ (c >> 8);
  return ~c;
}

/// The Adler-32 of zlib of `data`, continuing from `adler` (1 to start).
[[nodiscard]] inline std::uint32_t adler32(const void* data, std::size_t size, std::uint32_t adler = 1) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t a = adler & 0xffff, b = adler >> 16;
  while (size != 0) {
    const std::size_t n = std::min<std::size_t>(size, 5552);  // the most bytes before b can overflow
    for (std::size_t k = 0; k < n; ++k) {
      a += p[k];
      b += a;
    }
    a %= 65521;
    b %= 65521;
    p += n;
    size -= n;
  }
  return (b << 16) | a;
}

/// What an `inflate_stream` reads and how much it may produce.
struct inflate_options {
  compression wrapper = compression::gzip;  ///< gzip, zlib or deflate (`none` is taken as deflate)
  /// More decompressed bytes than this is `errc::resource_exhausted`.
  std::uint64_t max_output_bytes = std::numeric_limits<std::uint64_t>::max();
  std::string name = "<input>";  ///< starts every message
};

namespace detail {
// A decoding table entry: the value (a literal, a base length or distance, or where a second
// table starts) in the high 16 bits, the kind, the count of extra bits (or a second table's
// index bits) and the count of code bits the entry consumes.
enum : std::uint32_t { huff_literal = 0, huff_base = 1, huff_end = 2, huff_link = 3, huff_invalid = 4 };
constexpr std::uint32_t huff_entry(std::uint32_t kind, std::uint32_t extra, std::uint32_t value) noexcept {
  return value << 16 | kind << 12 | extra << 8;
}
constexpr unsigned huff_bits(std::uint32_t e) noexcept { return e & 0xff; }
constexpr unsigned huff_extra(std::uint32_t e) noexcept { return (e >> 8) & 0xf; }
constexpr std::uint32_t huff_kind(std::uint32_t e) noexcept { return (e >> 12) & 0xf; }
constexpr std::uint32_t huff_value(std::uint32_t e) noexcept { return e >> 16; }

inline constexpr std::uint16_t length_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                                  31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
inline constexpr std::uint8_t length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                  2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
inline constexpr std::uint16_t distance_base[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
                                                    33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
                                                    1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
inline constexpr std::uint8_t distance_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                                    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

inline std::uint32_t literal_length_symbol(unsigned sym) noexcept {
  if (sym < 256) return huff_entry(huff_literal, 0, sym);
  if (sym == 256) return huff_entry(huff_end, 0, 0);
  if (sym < 286) return huff_entry(huff_base, length_extra[sym - 257], length_base[sym - 257]);
  return huff_entry(huff_invalid, 0, 0);
}
inline std::uint32_t distance_symbol(unsigned sym) noexcept {
  return sym < 30 ? huff_entry(huff_base, distance_extra[sym], distance_base[sym]) : huff_entry(huff_invalid, 0, 0);
}
inline std::uint32_t plain_symbol(unsigned sym) noexcept { return huff_entry(huff_literal, 0, sym); }

/// A table of one Huffman code: `1 << primary` entries indexed by the next bits of input, then
/// second tables for codes longer than `primary` bits.
struct huffman_table {
  std::vector<std::uint32_t> entries;
  unsigned primary = 0;
};

enum class huffman_status { ok, oversubscribed, incomplete };

/// Builds the canonical code of `lengths` (each at most 15). An incomplete code is accepted only
/// when `allow_single` and it has at most one code of one bit (RFC 1951: one distance code is
/// sent with one bit; a block with no distances sends none).
inline huffman_status build_huffman(const std::uint8_t* lengths, unsigned count, unsigned primary, bool allow_single,
                                    huffman_table& table, std::uint32_t (*symbol)(unsigned)) {
  unsigned per_length[16] = {};
  for (unsigned s = 0; s < count; ++s) ++per_length[lengths[s]];
  int left = 1;
  unsigned longest = 0;
  for (unsigned len = 1; len <= 15; ++len) {
    left = left * 2 - static_cast<int>(per_length[len]);
    if (left < 0) return huffman_status::oversubscribed;
    if (per_length[len] != 0) longest = len;
  }
  if (left > 0 && !(allow_single && longest <= 1)) return huffman_status::incomplete;
  unsigned next_code[16] = {};  // the first code of each length (RFC 1951, 3.2.2)
  for (unsigned len = 2, code = 0; len <= 15; ++len) {
    code = (code + per_length[len - 1]) << 1;
    next_code[len] = code;
  }
  table.primary = primary;
  table.entries.assign(std::size_t{1} << primary, huff_entry(huff_invalid, 0, 0));
  const unsigned sub_bits = longest > primary ? longest - primary : 0;
  for (unsigned s = 0; s < count; ++s) {
    const unsigned len = lengths[s];
    if (len == 0) continue;
    unsigned code = next_code[len]++, reversed = 0;
    for (unsigned k = 0; k < len; ++k, code >>= 1) reversed = (reversed << 1) | (code & 1);
    const std::uint32_t e = symbol(s);
    if (len <= primary) {
      for (std::size_t i = reversed; i < (std::size_t{1} << primary); i += std::size_t{1} << len) table.entries[i] = e | len;
      continue;
    }
    const std::size_t slot = reversed & ((1u << primary) - 1);
    std::uint32_t link = table.entries[slot];
    if (huff_kind(link) != huff_link) {
      link = huff_entry(huff_link, sub_bits, static_cast<std::uint32_t>(table.entries.size())) | primary;
      table.entries[slot] = link;
      table.entries.resize(table.entries.size() + (std::size_t{1} << sub_bits), huff_entry(huff_invalid, 0, 0));
    }
    const unsigned rest_len = len - primary;
    for (std::size_t i = reversed >> primary; i < (std::size_t{1} << sub_bits); i += std::size_t{1} << rest_len) {
      table.entries[huff_value(link) + i] = e | rest_len;
    }
  }
  return huffman_status::ok;
}
}  // namespace detail

/// Decompresses a gzip, zlib or bare deflate stream pulled from a `byte_source`, chunk by chunk.
/// Not copyable (it owns its buffers); movable.
class inflate_stream {
 public:
  static constexpr std::size_t window_size = 32768;    ///< the farthest a match reaches back
  /// Decompressed bytes handed out per call: at most this plus one match (257 bytes).
  static constexpr std::size_t chunk_size = 1 << 18;
  static constexpr std::size_t input_size = 1 << 16;   ///< compressed bytes pulled per read

  explicit inflate_stream(byte_source source, inflate_options options = {})
      : source_(std::move(source)),
        options_(std::move(options)),
        in_(input_size + keep_before_),
        out_(window_size + chunk_size + max_match_ + copy_slack_) {
    if (options_.wrapper == compression::none) options_.wrapper = compression::deflate;
    std::uint8_t fixed[288 + 32];
    for (unsigned s = 0; s < 288; ++s) fixed[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
    for (unsigned s = 0; s < 32; ++s) fixed[288 + s] = 5;
    detail::build_huffman(fixed, 288, lit_primary_, false, fixed_lit_, detail::literal_length_symbol);
    detail::build_huffman(fixed + 288, 32, dist_primary_, false, fixed_dist_, detail::distance_symbol);
  }
  inflate_stream(const inflate_stream&) = delete;
  inflate_stream& operator=(const inflate_stream&) = delete;
  inflate_stream(inflate_stream&&) noexcept = default;
  inflate_stream& operator=(inflate_stream&&) noexcept = default;

  /// The next decompressed bytes, valid until the next call; empty once the stream has ended
  /// and every checksum matched. After an error, every call returns that error.
  [[nodiscard]] result<std::string_view> next() {
    if (error_) return *error_;
    if (state_ == state::done) return std::string_view{};
    if (out_pos_ >= window_size + chunk_size) slide_window();
    const std::size_t start = out_pos_;
    stop_ = std::min(out_limit(), start + chunk_size);
    while (state_ != state::done && out_pos_ < stop_) {
      if (!step()) return *error_;
    }
    update_checksum();
    produced_ += out_pos_ - start;
    if (produced_ > options_.max_output_bytes) {
      set_error(errc::resource_exhausted,
                "decompresses to more than the limit of " + std::to_string(options_.max_output_bytes) + " bytes");
      return *error_;
    }
    return std::string_view(reinterpret_cast<const char*>(out_.data()) + start, out_pos_ - start);
  }

  /// Compressed bytes consumed so far.
  [[nodiscard]] std::uint64_t compressed_offset() const noexcept {
    const std::size_t buffered = bit_count_ / 8 > pad_bytes_ ? bit_count_ / 8 - pad_bytes_ : 0;
    return in_base_ + in_pos_ - buffered;
  }
  /// Decompressed bytes handed out so far.
  [[nodiscard]] std::uint64_t decompressed_size() const noexcept { return produced_; }

 private:
  enum class state { member_header, block_header, stored, huffman, member_trailer, done };
  enum class decoded { block_end, output_full, failed };
  static constexpr std::size_t max_match_ = 258;
  static constexpr std::size_t copy_slack_ = 8;    // matches are copied 8 bytes at a time
  static constexpr std::size_t keep_before_ = 8;   // consumed bytes kept so the bit buffer can give bytes back
  static constexpr unsigned lit_primary_ = 10;
  static constexpr unsigned dist_primary_ = 8;

  [[nodiscard]] std::size_t out_limit() const noexcept { return out_.size() - max_match_ - copy_slack_; }

  void set_error(errc code, const std::string& what) {
    error_ = make_error(code, options_.name + ": " + wrapper_name() + ": " + what);
  }
  bool fail(const std::string& what) {
    set_error(errc::parse_error, what + " at byte " + std::to_string(compressed_offset()) + " of the compressed input");
    return false;
  }
  bool fail_truncated() {
    if (source_error_) {
      error_ = *source_error_;
      return false;
    }
    set_error(errc::parse_error, "truncated: the compressed input ends at byte " + std::to_string(in_base_ + in_end_) +
                                     (state_ == state::member_header   ? " inside a header"
                                      : state_ == state::member_trailer ? " inside a trailer"
                                                                        : " inside a deflate block"));
    return false;
  }
  [[nodiscard]] std::string wrapper_name() const {
    return options_.wrapper == compression::gzip ? "gzip" : options_.wrapper == compression::zlib ? "zlib" : "deflate";
  }

  // Keeps the last window of output at the front of the buffer and continues after it.
  void slide_window() {
    std::memmove(out_.data(), out_.data() + out_pos_ - window_size, window_size);
    out_pos_ = window_size;
    checked_pos_ = out_pos_;
  }
  void update_checksum() {
    const unsigned char* p = out_.data() + checked_pos_;
    const std::size_t n = out_pos_ - checked_pos_;
    if (options_.wrapper == compression::gzip) crc_ = crc32(p, n, crc_);
    else if (options_.wrapper == compression::zlib) crc_ = adler32(p, n, crc_);
    checked_pos_ = out_pos_;
  }

  // Pulls more input, keeping the last `keep_before_` consumed bytes. False at the end (or on a
  // read error, kept for the message).
  bool pull() {
    if (source_done_) return false;
    const std::size_t from = in_pos_ > keep_before_ ? in_pos_ - keep_before_ : 0;
    std::memmove(in_.data(), in_.data() + from, in_end_ - from);
    in_base_ += from;
    in_pos_ -= from;
    in_end_ -= from;
    auto got = source_(in_.data() + in_end_, in_.size() - in_end_);
    if (!got || *got == 0) {
      if (!got) source_error_ = got.error();
      source_done_ = true;
      return false;
    }
    in_end_ += *got;
    return true;
  }
  // Fills the bit buffer to at least 57 bits; past the end of the input with zero bytes that are
  // counted, so that consuming one of them reads as truncation.
  void refill(std::uint64_t& bits, unsigned& count, unsigned& pad) {
    if (in_end_ - in_pos_ >= 8) {
      std::uint64_t word;
      std::memcpy(&word, in_.data() + in_pos_, 8);
      if constexpr (std::endian::native == std::endian::big) word = byteswap64(word);
      bits |= word << count;
      in_pos_ += (63 - count) >> 3;
      count |= 56;
      return;
    }
    while (count <= 56) {
      if (in_pos_ == in_end_ && !pull()) {
        count += 8;
        ++pad;
        continue;
      }
      bits |= std::uint64_t{in_[in_pos_++]} << count;
      count += 8;
    }
  }
  static std::uint64_t byteswap64(std::uint64_t v) noexcept {
    std::uint64_t r = 0;
    for (int k = 0; k < 8; ++k, v >>= 8) r = (r << 8) | (v & 0xff);
    return r;
  }
  [[nodiscard]] bool consumed_padding() const noexcept { return pad_bytes_ != 0 && bit_count_ < 8 * pad_bytes_; }

  // The next `n` bits (n <= 32), or false on truncation.
  bool get_bits(unsigned n, std::uint32_t& value) {
    if (bit_count_ < n) refill(bits_, bit_count_, pad_bytes_);
    value = static_cast<std::uint32_t>(bits_ & ((std::uint64_t{1} << n) - 1));
    bits_ >>= n;
    bit_count_ -= n;
    return consumed_padding() ? fail_truncated() : true;
  }
  // One symbol of `table`, bit by table lookup, for the code-length code and block headers.
  bool get_symbol(const detail::huffman_table& table, std::uint32_t& entry) {
    if (bit_count_ < 15) refill(bits_, bit_count_, pad_bytes_);
    std::uint32_t e = table.entries[bits_ & ((1u << table.primary) - 1)];
    if (detail::huff_kind(e) == detail::huff_link) {
      bits_ >>= table.primary;
      bit_count_ -= table.primary;
      e = table.entries[detail::huff_value(e) + (bits_ & ((1u << detail::huff_extra(e)) - 1))];
    }
    bits_ >>= detail::huff_bits(e);
    bit_count_ -= detail::huff_bits(e);
    if (consumed_padding()) return fail_truncated();
    if (detail::huff_kind(e) == detail::huff_invalid) return fail("invalid Huffman code");
    entry = e;
    return true;
  }
  // Gives the whole unconsumed bytes of the bit buffer back to the input (after dropping the
  // bits up to a byte boundary), so that headers, trailers and stored blocks read bytes.
  bool align_to_byte() {
    bits_ >>= bit_count_ % 8;
    bit_count_ -= bit_count_ % 8;
    if (consumed_padding()) return fail_truncated();
    in_pos_ -= bit_count_ / 8 - pad_bytes_;
    bits_ = 0;
    bit_count_ = 0;
    pad_bytes_ = 0;
    return true;
  }
  // One byte at a byte boundary, or nullopt at the end of the input.
  std::optional<unsigned char> get_byte() {
    if (in_pos_ == in_end_ && !pull()) return std::nullopt;
    return in_[in_pos_++];
  }
  bool get_bytes(unsigned char* dst, std::size_t n, std::uint32_t* header_crc = nullptr) {
    for (std::size_t k = 0; k < n; ++k) {
      const auto b = get_byte();
      if (!b) return fail_truncated();
      if (dst != nullptr) dst[k] = *b;
      if (header_crc != nullptr) *header_crc = crc32(&*b, 1, *header_crc);
    }
    return true;
  }

  // Runs the current state once; false on an error.
  bool step() {
    switch (state_) {
      case state::member_header: return read_member_header();
      case state::block_header: return read_block_header();
      case state::stored: return copy_stored();
      case state::huffman: {
        const decoded d = decode_symbols();
        if (d == decoded::failed) return false;
        if (d == decoded::block_end) state_ = final_block_ ? state::member_trailer : state::block_header;
        return true;
      }
      case state::member_trailer: return read_member_trailer();
      case state::done: return true;
    }
    return true;
  }

  bool read_member_header() {
    member_out_ = 0;
    checked_pos_ = out_pos_;
    crc_ = options_.wrapper == compression::zlib ? 1 : 0;
    if (options_.wrapper == compression::gzip && !read_gzip_header()) return false;
    if (options_.wrapper == compression::zlib && !read_zlib_header()) return false;
    state_ = state::block_header;
    return true;
  }
  bool read_gzip_header() {
    const std::uint64_t at = compressed_offset();
    std::uint32_t hcrc = 0;
    unsigned char h[10] = {};
    if (!get_bytes(h, 10, &hcrc)) return false;
    if (h[0] != 0x1f || h[1] != 0x8b) return fail_at(at, "not a gzip member (the first bytes are not 1f 8b)");
    if (h[2] != 8) return fail_at(at + 2, "compression method " + std::to_string(h[2]) + " is not deflate (8)");
    const unsigned flags = h[3];
    if ((flags & 0xe0) != 0) return fail_at(at + 3, "reserved header flags are set");
    if ((flags & 4) != 0) {  // FEXTRA: a length, then that many bytes
      unsigned char len[2] = {};
      if (!get_bytes(len, 2, &hcrc) || !get_bytes(nullptr, std::size_t{len[0]} | std::size_t{len[1]} << 8, &hcrc)) return false;
    }
    for (const unsigned zero_terminated : {8u, 16u}) {  // FNAME, FCOMMENT
      if ((flags & zero_terminated) == 0) continue;
      for (unsigned char c = 1; c != 0;) {
        if (!get_bytes(&c, 1, &hcrc)) return false;
      }
    }
    if ((flags & 2) != 0) {  // FHCRC: the low 16 bits of the CRC-32 of the header so far
      const std::uint64_t crc_at = compressed_offset();
      unsigned char c[2] = {};
      if (!get_bytes(c, 2)) return false;
      if ((std::uint32_t{c[0]} | std::uint32_t{c[1]} << 8) != (hcrc & 0xffff)) return fail_at(crc_at, "header CRC mismatch");
    }
    return true;
  }
  bool read_zlib_header() {
    const std::uint64_t at = compressed_offset();
    unsigned char h[2] = {};
    if (!get_bytes(h, 2)) return false;
    if ((h[0] & 0x0f) != 8) return fail_at(at, "compression method " + std::to_string(h[0] & 0x0f) + " is not deflate (8)");
    if ((h[0] >> 4) > 7) return fail_at(at, "window size 2^" + std::to_string((h[0] >> 4) + 8) + " is over 32 KiB");
    if (((h[0] << 8) | h[1]) % 31 != 0) return fail_at(at, "header check bits are wrong");
    if ((h[1] & 0x20) != 0) return fail_at(at + 1, "a preset dictionary is required, and none is known");
    return true;
  }
  bool fail_at(std::uint64_t offset, const std::string& what) {
    set_error(errc::parse_error, what + " at byte " + std::to_string(offset) + " of the compressed input");
    return false;
  }

  bool read_block_header() {
    std::uint32_t header = 0;
    if (!get_bits(3, header)) return false;
    final_block_ = (header & 1) != 0;
    switch (header >> 1) {
      case 0: return read_stored_header();
      case 1:
        lit_ = &fixed_lit_;
        dist_ = &fixed_dist_;
        state_ = state::huffman;
        return true;
      case 2: return read_dynamic_header();
      default: return fail("reserved block type 3");
    }
  }
  bool read_stored_header() {
    if (!align_to_byte()) return false;
    const std::uint64_t at = compressed_offset();
    unsigned char h[4] = {};
    if (!get_bytes(h, 4)) return false;
    const unsigned len = h[0] | unsigned{h[1]} << 8, nlen = h[2] | unsigned{h[3]} << 8;
    if ((len ^ 0xffff) != nlen) return fail_at(at, "stored block length " + std::to_string(len) + " does not match its complement");
    stored_left_ = len;
    state_ = state::stored;
    return true;
  }
  bool copy_stored() {
    while (stored_left_ != 0 && out_pos_ < stop_) {
      if (in_pos_ == in_end_ && !pull()) return fail_truncated();
      const std::size_t n = std::min({stored_left_, stop_ - out_pos_, in_end_ - in_pos_});
      std::memcpy(out_.data() + out_pos_, in_.data() + in_pos_, n);
      in_pos_ += n;
      out_pos_ += n;
      member_out_ += n;
      stored_left_ -= n;
    }
    if (stored_left_ == 0) state_ = final_block_ ? state::member_trailer : state::block_header;
    return true;
  }

  // A dynamic block's header: the code-length code, then the literal/length and distance codes.
  bool read_dynamic_header() {
    std::uint32_t hlit = 0, hdist = 0, hclen = 0;
    if (!get_bits(5, hlit) || !get_bits(5, hdist) || !get_bits(4, hclen)) return false;
    hlit += 257;
    hdist += 1;
    hclen += 4;
    if (hlit > 286) return fail(std::to_string(hlit) + " literal/length codes (at most 286)");
    if (hdist > 30) return fail(std::to_string(hdist) + " distance codes (at most 30)");
    static constexpr std::uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    std::uint8_t lengths[286 + 30] = {};
    for (unsigned k = 0; k < hclen; ++k) {
      std::uint32_t v = 0;
      if (!get_bits(3, v)) return false;
      lengths[order[k]] = static_cast<std::uint8_t>(v);
    }
    if (detail::build_huffman(lengths, 19, 7, false, code_lengths_, detail::plain_symbol) != detail::huffman_status::ok) {
      return fail("invalid code-length code");
    }
    if (!read_code_lengths(lengths, hlit + hdist)) return false;
    if (lengths[256] == 0) return fail("the block has no end-of-block code");
    if (detail::build_huffman(lengths, hlit, lit_primary_, true, dynamic_lit_, detail::literal_length_symbol) !=
        detail::huffman_status::ok) {
      return fail("invalid literal/length code");
    }
    if (detail::build_huffman(lengths + hlit, hdist, dist_primary_, true, dynamic_dist_, detail::distance_symbol) !=
        detail::huffman_status::ok) {
      return fail("invalid distance code");
    }
    lit_ = &dynamic_lit_;
    dist_ = &dynamic_dist_;
    state_ = state::huffman;
    return true;
  }
  bool read_code_lengths(std::uint8_t* lengths, unsigned total) {
    std::fill(lengths, lengths + 19, std::uint8_t{0});
    for (unsigned k = 0; k < total;) {
      std::uint32_t e = 0;
      if (!get_symbol(code_lengths_, e)) return false;
      const unsigned sym = detail::huff_value(e);
      if (sym < 16) {
        lengths[k++] = static_cast<std::uint8_t>(sym);
        continue;
      }
      std::uint32_t extra = 0;
      unsigned repeat = 0;
      std::uint8_t value = 0;
      if (sym == 16) {
        if (k == 0) return fail("a repeat code with no length before it");
        value = lengths[k - 1];
        if (!get_bits(2, extra)) return false;
        repeat = 3 + extra;
      } else if (sym == 17) {
        if (!get_bits(3, extra)) return false;
        repeat = 3 + extra;
      } else {
        if (!get_bits(7, extra)) return false;
        repeat = 11 + extra;
      }
      if (k + repeat > total) return fail("code lengths run past the codes of the block");
      std::fill(lengths + k, lengths + k + repeat, value);
      k += repeat;
    }
    return true;
  }

  // The hot loop: literals and matches of a Huffman block until its end or a full output.
  decoded decode_symbols() {
    const std::uint32_t* lit = lit_->entries.data();
    const std::uint32_t* dist = dist_->entries.data();
    const std::uint64_t lit_mask = (1u << lit_primary_) - 1, dist_mask = (1u << dist_primary_) - 1;
    unsigned char* const out = out_.data();
    const std::size_t limit = stop_, start = out_pos_;
    std::size_t op = out_pos_;
    std::uint64_t bits = bits_;
    unsigned count = bit_count_, pad = pad_bytes_;
    const auto save = [&] {
      bits_ = bits;
      bit_count_ = count;
      pad_bytes_ = pad;
      member_out_ += op - out_pos_;
      out_pos_ = op;
    };
    const auto take = [&](unsigned n) {
      bits >>= n;
      count -= n;
    };
    while (op < limit) {
      if (count < 48) refill(bits, count, pad);
      std::uint32_t e = lit[bits & lit_mask];
      if (detail::huff_kind(e) == detail::huff_link) {
        take(lit_primary_);
        e = lit[detail::huff_value(e) + (bits & ((1u << detail::huff_extra(e)) - 1))];
      }
      take(detail::huff_bits(e));
      if (detail::huff_kind(e) == detail::huff_literal) {
        out[op++] = static_cast<unsigned char>(detail::huff_value(e));
        if (pad != 0 && count < 8 * pad) break;
        continue;
      }
      if (detail::huff_kind(e) != detail::huff_base) {
        save();
        if (consumed_padding()) return failed(fail_truncated());
        if (detail::huff_kind(e) == detail::huff_end) return decoded::block_end;
        return failed(fail("invalid literal/length code"));
      }
      const std::size_t length = detail::huff_value(e) + (bits & ((1u << detail::huff_extra(e)) - 1));
      take(detail::huff_extra(e));
      std::uint32_t d = dist[bits & dist_mask];
      if (detail::huff_kind(d) == detail::huff_link) {
        take(dist_primary_);
        d = dist[detail::huff_value(d) + (bits & ((1u << detail::huff_extra(d)) - 1))];
      }
      take(detail::huff_bits(d));
      const std::size_t distance = detail::huff_value(d) + (bits & ((1u << detail::huff_extra(d)) - 1));
      take(detail::huff_extra(d));
      if (pad != 0 && count < 8 * pad) break;
      if (detail::huff_kind(d) != detail::huff_base) {
        save();
        return failed(fail("invalid distance code"));
      }
      if (distance > member_out_ + (op - start)) {
        save();
        return failed(fail("a match reaches " + std::to_string(distance) + " bytes back, before the start of the output"));
      }
      copy_match(out + op, distance, length);
      op += length;
    }
    save();
    if (consumed_padding()) return failed(fail_truncated());
    return decoded::output_full;
  }
  static decoded failed(bool) noexcept { return decoded::failed; }
  static void copy_match(unsigned char* dst, std::size_t distance, std::size_t length) noexcept {
    const unsigned char* src = dst - distance;
    if (distance >= 8) {  // 8 bytes at a time, overshooting by up to 7 (the buffer has slack)
      for (std::size_t k = 0; k < length; k += 8) std::memcpy(dst + k, src + k, 8);
    } else if (distance == 1) {
      std::memset(dst, *src, length);
    } else {
      for (std::size_t k = 0; k < length; ++k) dst[k] = src[k];
    }
  }

  bool read_member_trailer() {
    if (!align_to_byte()) return false;
    update_checksum();
    const std::uint64_t at = compressed_offset();
    if (options_.wrapper == compression::gzip) {
      unsigned char t[8] = {};
      if (!get_bytes(t, 8)) return false;
      const std::uint32_t crc = t[0] | std::uint32_t{t[1]} << 8 | std::uint32_t{t[2]} << 16 | std::uint32_t{t[3]} << 24;
      const std::uint32_t size = t[4] | std::uint32_t{t[5]} << 8 | std::uint32_t{t[6]} << 16 | std::uint32_t{t[7]} << 24;
      if (crc != crc_) return fail_at(at, "CRC-32 mismatch (the data is corrupt)");
      if (size != static_cast<std::uint32_t>(member_out_)) {
        return fail_at(at + 4, "length mismatch: the trailer says " + std::to_string(size) + " bytes (mod 2^32), the data has " +
                                   std::to_string(member_out_));
      }
    } else if (options_.wrapper == compression::zlib) {
      unsigned char t[4] = {};
      if (!get_bytes(t, 4)) return false;
      const std::uint32_t adler = std::uint32_t{t[0]} << 24 | std::uint32_t{t[1]} << 16 | std::uint32_t{t[2]} << 8 | t[3];
      if (adler != crc_) return fail_at(at, "Adler-32 mismatch (the data is corrupt)");
    }
    const std::uint64_t end = compressed_offset();
    const auto next_byte = get_byte();
    if (!next_byte) {
      if (source_error_) {
        error_ = *source_error_;
        return false;
      }
      state_ = state::done;
      return true;
    }
    --in_pos_;
    if (options_.wrapper != compression::gzip || *next_byte != 0x1f) {
      return fail_at(end, "trailing bytes after the end of the compressed stream");
    }
    state_ = state::member_header;  // another gzip member follows
    return true;
  }

  byte_source source_;
  inflate_options options_;
  std::vector<unsigned char> in_;
  std::size_t in_pos_ = 0, in_end_ = 0;
  std::uint64_t in_base_ = 0;  // offset in the compressed input of in_[0]
  bool source_done_ = false;
  std::optional<error> source_error_;
  std::uint64_t bits_ = 0;
  unsigned bit_count_ = 0;
  unsigned pad_bytes_ = 0;  // zero bytes put in the bit buffer past the end of the input
  std::vector<unsigned char> out_;
  std::size_t out_pos_ = 0;
  std::size_t stop_ = 0;  // this call's output ends at the first symbol that reaches it
  std::size_t checked_pos_ = 0;  // output before this is in crc_
  std::uint64_t member_out_ = 0;  // bytes of the current member
  std::uint64_t produced_ = 0;
  std::uint32_t crc_ = 0;
  state state_ = state::member_header;
  bool final_block_ = false;
  std::size_t stored_left_ = 0;
  detail::huffman_table fixed_lit_, fixed_dist_, dynamic_lit_, dynamic_dist_, code_lengths_;
  const detail::huffman_table* lit_ = nullptr;
  const detail::huffman_table* dist_ = nullptr;
  std::optional<error> error_;
};

/// Decompresses `bytes` whole (gzip, zlib or bare deflate as `options.wrapper` says); for small
/// inputs and tests. Streaming readers use `inflate_stream`.
[[nodiscard]] inline result<std::string> inflate_all(std::string_view bytes, inflate_options options = {}) {
  inflate_stream in(memory_byte_source(bytes), std::move(options));
  std::string out;
  for (;;) {
    auto chunk = in.next();
    if (!chunk) return chunk.error();
    if (chunk->empty()) return out;
    out.append(*chunk);
  }
}

}  // namespace xlamem
