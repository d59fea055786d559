// SPDX-License-Identifier: Apache-2.0
// A tiny DEFLATE writer for tests, written from RFC 1951/1952/1950 and independent of the
// decoder's tables: stored blocks, one fixed-Huffman block of literals and matches chosen by
// the test, and the gzip / zlib wrappers. Tests make their compressed inputs with it at run
// time instead of keeping binary files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "xlamem/io/codec/gzip.hpp"

namespace xlamem::test {

/// Bits packed least significant first, as DEFLATE reads them.
class bit_writer {
 public:
  void bits(std::uint32_t value, unsigned count) {
    for (unsigned k = 0; k < count; ++k) bit((value >> k) & 1);
  }
  /// A Huffman code: its most significant bit goes first.
  void code(std::uint32_t value, unsigned length) {
    for (unsigned k = length; k-- > 0;) bit((value >> k) & 1);
  }
  void align() {
    while (used_ != 0) bit(0);
  }
  void byte(unsigned char b) {
    align();
    out_ += static_cast<char>(b);
  }
  [[nodiscard]] std::string finish() {
    align();
    return out_;
  }

 private:
  void bit(std::uint32_t b) {
    if (used_ == 0) out_ += '\0';
    out_.back() = static_cast<char>(static_cast<unsigned char>(out_.back()) | (b << used_));
    used_ = (used_ + 1) % 8;
  }
  std::string out_;
  unsigned used_ = 0;
};

/// Stored blocks of at most `block` bytes (an empty input is one empty final block).
inline std::string stored_deflate(std::string_view data, std::size_t block = 65535) {
  std::string out;
  std::size_t pos = 0;
  do {
    const std::size_t n = data.size() - pos < block ? data.size() - pos : block;
    const bool last = pos + n == data.size();
    out += static_cast<char>(last ? 1 : 0);  // BFINAL, BTYPE 00, then the byte boundary
    out += static_cast<char>(n & 0xff);
    out += static_cast<char>(n >> 8);
    out += static_cast<char>(~n & 0xff);
    out += static_cast<char>((~n >> 8) & 0xff);
    out.append(data.substr(pos, n));
    pos += n;
  } while (pos < data.size());
  return out;
}

/// One final fixed-Huffman block, built symbol by symbol.
class fixed_huffman_block {
 public:
  fixed_huffman_block() { w_.bits(0b011, 3); }  // BFINAL = 1, BTYPE = 01
  void literal(unsigned char c) { symbol(c); }
  /// A match of 3..258 bytes, 1..32768 back.
  void match(unsigned length, unsigned distance) {
    static constexpr unsigned length_base[] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                               31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static constexpr unsigned distance_base[] = {1,   2,   3,   4,   5,    7,    9,    13,   17,   25,
                                                 33,  49,  65,  97,  129,  193,  257,  385,  513,  769,
                                                 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    unsigned l = 28;
    while (length_base[l] > length) --l;
    symbol(257 + l);
    w_.bits(length - length_base[l], extra_bits(l, true));
    unsigned d = 29;
    while (distance_base[d] > distance) --d;
    raw_symbol(d, 5);
    w_.bits(distance - distance_base[d], extra_bits(d, false));
  }
  /// Any literal/length symbol 0..287 (286 and 287 are invalid in a stream).
  void symbol(unsigned s) {
    if (s < 144) w_.code(0x30 + s, 8);
    else if (s < 256) w_.code(0x190 + s - 144, 9);
    else if (s < 280) w_.code(s - 256, 7);
    else w_.code(0xc0 + s - 280, 8);
  }
  /// A distance symbol 0..31 (30 and 31 are invalid).
  void raw_symbol(unsigned s, unsigned bits) { w_.code(s, bits); }
  [[nodiscard]] std::string finish() {
    symbol(256);
    return w_.finish();
  }

 private:
  static unsigned extra_bits(unsigned index, bool length) {
    if (length) return index < 8 || index == 28 ? 0 : (index - 4) / 4;
    return index < 4 ? 0 : (index - 2) / 2;
  }
  bit_writer w_;
};

/// A gzip member around a raw deflate stream of `data`.
inline std::string gzip_member(std::string_view deflated, std::string_view data) {
  std::string out("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);
  out.append(deflated);
  const std::uint32_t crc = crc32(data.data(), data.size());
  const auto size = static_cast<std::uint32_t>(data.size());
  for (const std::uint32_t v : {crc, size}) {
    for (int k = 0; k < 4; ++k) out += static_cast<char>((v >> (8 * k)) & 0xff);
  }
  return out;
}

/// A zlib stream around a raw deflate stream of `data`.
inline std::string zlib_stream(std::string_view deflated, std::string_view data) {
  std::string out("\x78\x01", 2);  // 32 KiB window, fastest, check bits
  out.append(deflated);
  const std::uint32_t a = adler32(data.data(), data.size());
  for (int k = 3; k >= 0; --k) out += static_cast<char>((a >> (8 * k)) & 0xff);
  return out;
}

/// Bytes from a small linear congruential generator (deterministic test data).
inline std::string pseudo_random_bytes(std::size_t n, std::uint32_t seed = 1) {
  std::string s(n, '\0');
  for (auto& c : s) {
    seed = seed * 1103515245u + 12345u;
    c = static_cast<char>(seed >> 23);
  }
  return s;
}

}  // namespace xlamem::test
