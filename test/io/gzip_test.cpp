// SPDX-License-Identifier: Apache-2.0
// Tests for io/codec/gzip.hpp: checksums against published values, samples made by Python's gzip and
// zlib modules and by GNU gzip, streams made at run time by the test's own writer (stored
// blocks, fixed-Huffman matches reaching across the whole window), every optional gzip header
// field, several members, every truncation, bit flips, and each corruption with the offset it
// names; the shared IOPDDL instances decompress to their known sizes.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "io/deflate_writer.hpp"
#include "io/gzip_samples.hpp"
#include "support/common.hpp"
#include "xlamem/io/codec/gzip.hpp"

using namespace xlamem;

namespace {

template <std::size_t N>
std::string_view bytes_of(const unsigned char (&a)[N]) {
  return {reinterpret_cast<const char*>(a), N};
}

std::string python_text() {
  std::string s;
  for (int i = 0; i < 600; ++i) s += (i != 0 ? ", " : "") + std::to_string(i * i % 1000);
  return s;
}
std::string gnu_text() {
  std::string s;
  for (int i = 0; i < 400; ++i) s += (i != 0 ? "\n" : "") + std::to_string(i * 7 % 1234);
  return s + "\n";
}
const std::string zlib_text = "abcabcabcabc hello hello hello";

inflate_options with(compression wrapper, std::uint64_t max_output = UINT64_MAX) {
  inflate_options o;
  o.wrapper = wrapper;
  o.max_output_bytes = max_output;
  o.name = "t.gz";
  return o;
}

// The error message of inflating `bytes`, or "" when it succeeds.
std::string inflate_error(std::string_view bytes, compression wrapper = compression::gzip) {
  auto r = inflate_all(bytes, with(wrapper));
  return r ? std::string() : r.error().message();
}

}  // namespace

TEST_CASE("crc32 and adler32 match their published check values") {
  CHECK(crc32("123456789", 9) == 0xCBF43926u);
  CHECK(crc32("", 0) == 0u);
  const std::string text = test::pseudo_random_bytes(1000);
  CHECK(crc32(text.data() + 3, 997, crc32(text.data(), 3)) == crc32(text.data(), 1000));
  CHECK(adler32("Wikipedia", 9) == 0x11E60398u);
  CHECK(adler32("", 0) == 1u);
}

TEST_CASE("detect_compression tells gzip and zlib from text") {
  CHECK(detect_compression(bytes_of(test::python_gzip)) == compression::gzip);
  CHECK(detect_compression(bytes_of(test::python_zlib)) == compression::zlib);
  CHECK(detect_compression("{\"problem\": {}}") == compression::none);
  CHECK(detect_compression(" {") == compression::none);
  CHECK(detect_compression("x") == compression::none);
  CHECK(detect_compression("") == compression::none);
}

TEST_CASE("samples made by Python and GNU gzip decompress to their text") {
  SUBCASE("Python gzip.compress, dynamic Huffman") {
    auto r = inflate_all(bytes_of(test::python_gzip), with(compression::gzip));
    REQUIRE_MESSAGE(r, r.error().message());
    CHECK(*r == python_text());
  }
  SUBCASE("GNU gzip -9 with a file name") {
    auto r = inflate_all(bytes_of(test::gnu_gzip), with(compression::gzip));
    REQUIRE_MESSAGE(r, r.error().message());
    CHECK(*r == gnu_text());
  }
  SUBCASE("Python zlib.compress, fixed Huffman") {
    auto r = inflate_all(bytes_of(test::python_zlib), with(compression::zlib));
    REQUIRE_MESSAGE(r, r.error().message());
    CHECK(*r == zlib_text);
  }
  SUBCASE("the bare deflate stream inside the Python sample") {
    const auto g = bytes_of(test::python_gzip);
    auto r = inflate_all(g.substr(10, g.size() - 18), with(compression::deflate));
    REQUIRE_MESSAGE(r, r.error().message());
    CHECK(*r == python_text());
  }
}

TEST_CASE("every optional gzip header field is read, and the header CRC is checked") {
  const auto g = bytes_of(test::python_gzip);
  const std::string_view deflated = g.substr(10, g.size() - 10);  // the stream and the trailer
  std::string header("\x1f\x8b\x08\x1e\x00\x00\x00\x00\x00\x03", 10);  // FEXTRA FNAME FCOMMENT FHCRC
  header += std::string("\x05\x00" "ab\0cd", 7);                      // 5 extra bytes, a zero among them
  header += std::string("name.txt\0", 9);
  header += std::string("a comment\0", 10);
  const std::uint32_t hcrc = crc32(header.data(), header.size());
  std::string good = header + static_cast<char>(hcrc & 0xff) + static_cast<char>((hcrc >> 8) & 0xff);
  good += deflated;
  auto r = inflate_all(good, with(compression::gzip));
  REQUIRE_MESSAGE(r, r.error().message());
  CHECK(*r == python_text());

  std::string bad = good;
  bad[header.size()] = static_cast<char>(bad[header.size()] ^ 1);
  CHECK(inflate_error(bad) == "t.gz: gzip: header CRC mismatch at byte " + std::to_string(header.size()) +
                                  " of the compressed input");
}

TEST_CASE("several gzip members read as one stream") {
  const std::string third = test::gzip_member(test::stored_deflate(zlib_text), zlib_text);
  const std::string joined = std::string(bytes_of(test::python_gzip)) + std::string(bytes_of(test::gnu_gzip)) + third;
  auto r = inflate_all(joined, with(compression::gzip));
  REQUIRE_MESSAGE(r, r.error().message());
  CHECK(*r == python_text() + gnu_text() + zlib_text);
  // An empty member in the middle is a member too.
  const std::string empty = test::gzip_member(test::stored_deflate(""), "");
  auto e = inflate_all(third + empty + third, with(compression::gzip));
  REQUIRE(e);
  CHECK(*e == zlib_text + zlib_text);
}

TEST_CASE("every truncation of a gzip stream is an error naming where the input ends") {
  const auto g = bytes_of(test::python_gzip);
  for (std::size_t n = 0; n < g.size(); ++n) {
    CAPTURE(n);
    auto r = inflate_all(g.substr(0, n), with(compression::gzip));
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == errc::parse_error);
    const std::string where = n < 10 ? "inside a header" : n < g.size() - 8 ? "inside a deflate block" : "inside a trailer";
    CHECK(r.error().message() ==
          "t.gz: gzip: truncated: the compressed input ends at byte " + std::to_string(n) + " " + where);
  }
  // A truncated second member is an error too, not a silent end after the first.
  const std::string two = std::string(g) + std::string(g.substr(0, 20));
  CHECK(inflate_error(two) == "t.gz: gzip: truncated: the compressed input ends at byte " +
                                  std::to_string(g.size() + 20) + " inside a deflate block");
}

TEST_CASE("a flipped bit is an error or leaves the output unchanged, never a different output") {
  const std::string g(bytes_of(test::python_gzip));
  const std::string text = python_text();
  int errors = 0;
  for (std::size_t i = 10; i < g.size(); ++i) {  // bytes 4..9 (time, flags, system) are not checked by gzip
    for (const int bit : {0, 3, 7}) {
      std::string bad = g;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      auto r = inflate_all(bad, with(compression::gzip));
      if (!r) {
        ++errors;
        CHECK(r.error().code() == errc::parse_error);
      } else {
        CHECK(*r == text);
      }
    }
  }
  CHECK(errors > 3 * (static_cast<int>(g.size()) - 10) * 9 / 10);
}

TEST_CASE("corrupt streams name the fault and its offset") {
  const std::string g(bytes_of(test::python_gzip));
  const std::string off = " of the compressed input";
  SUBCASE("header") {
    std::string bad = g;
    bad[1] = 'x';
    CHECK(inflate_error(bad) == "t.gz: gzip: not a gzip member (the first bytes are not 1f 8b) at byte 0" + off);
    bad = g;
    bad[2] = 7;
    CHECK(inflate_error(bad) == "t.gz: gzip: compression method 7 is not deflate (8) at byte 2" + off);
    bad = g;
    bad[3] = static_cast<char>(0x20);
    CHECK(inflate_error(bad) == "t.gz: gzip: reserved header flags are set at byte 3" + off);
  }
  SUBCASE("trailer") {
    std::string bad = g;
    bad[g.size() - 8] = static_cast<char>(bad[g.size() - 8] ^ 1);
    CHECK(inflate_error(bad) == "t.gz: gzip: CRC-32 mismatch (the data is corrupt) at byte " + std::to_string(g.size() - 8) + off);
    bad = g;
    bad[g.size() - 4] = static_cast<char>(bad[g.size() - 4] ^ 1);
    CHECK(inflate_error(bad) == "t.gz: gzip: length mismatch: the trailer says 2890 bytes (mod 2^32), the data has 2891 at byte " +
                                    std::to_string(g.size() - 4) + off);
  }
  SUBCASE("trailing bytes") {
    CHECK(inflate_error(g + "junk") == "t.gz: gzip: trailing bytes after the end of the compressed stream at byte " +
                                           std::to_string(g.size()) + off);
    CHECK(inflate_error(g + std::string(1, '\0')) ==
          "t.gz: gzip: trailing bytes after the end of the compressed stream at byte " + std::to_string(g.size()) + off);
  }
  SUBCASE("blocks") {
    // BFINAL=1, BTYPE=11 (reserved).
    CHECK(inflate_error(std::string(1, '\x07'), compression::deflate) == "t.gz: deflate: reserved block type 3 at byte 1" + off);
    // A stored block whose length and complement disagree.
    CHECK(inflate_error(std::string("\x01\x05\x00\x00\x00hello", 10), compression::deflate) ==
          "t.gz: deflate: stored block length 5 does not match its complement at byte 1" + off);
    test::fixed_huffman_block far;
    far.literal('a');
    far.match(3, 2);
    CHECK(inflate_error(far.finish(), compression::deflate).starts_with(
        "t.gz: deflate: a match reaches 2 bytes back, before the start of the output at byte "));
    test::fixed_huffman_block bad_length;
    bad_length.symbol(286);
    CHECK(inflate_error(bad_length.finish(), compression::deflate).starts_with("t.gz: deflate: invalid literal/length code at byte "));
    test::fixed_huffman_block bad_distance;
    bad_distance.literal('a');
    bad_distance.symbol(257);
    bad_distance.raw_symbol(30, 5);
    CHECK(inflate_error(bad_distance.finish(), compression::deflate).starts_with("t.gz: deflate: invalid distance code at byte "));
  }
  SUBCASE("zlib") {
    const std::string z(bytes_of(test::python_zlib));
    std::string bad = z;
    bad[z.size() - 1] = static_cast<char>(bad[z.size() - 1] ^ 1);
    CHECK(inflate_error(bad, compression::zlib) == "t.gz: zlib: Adler-32 mismatch (the data is corrupt) at byte " +
                                                       std::to_string(z.size() - 4) + off);
    CHECK(inflate_error(std::string("\x78\x02", 2) + z.substr(2), compression::zlib) ==
          "t.gz: zlib: header check bits are wrong at byte 0" + off);
  }
}

TEST_CASE("matches copy from every distance, across the window, in chunks") {
  // 32 KiB of noise, then matches: overlapping short ones and ones reaching the whole window.
  const std::string noise = test::pseudo_random_bytes(32768, 7);
  std::string expect = noise;
  test::fixed_huffman_block b;
  for (const char c : noise) b.literal(static_cast<unsigned char>(c));
  const auto copy = [&](unsigned length, unsigned distance) {
    b.match(length, distance);
    for (unsigned k = 0; k < length; ++k) expect += expect[expect.size() - distance];
  };
  for (unsigned distance = 1; distance <= 300; ++distance) copy(3 + distance % 256, distance);
  for (int k = 0; k < 4000; ++k) copy(258, 32768);
  for (unsigned distance = 32768; distance > 1; distance = distance * 2 / 3) copy(100, distance);
  const std::string gz = test::gzip_member(b.finish(), expect);

  inflate_stream in(memory_byte_source(gz), with(compression::gzip));
  std::string out;
  int chunks = 0;
  for (;;) {
    auto c = in.next();
    REQUIRE_MESSAGE(c, c.error().message());
    if (c->empty()) break;
    CHECK(c->size() <= inflate_stream::chunk_size + 257);
    out.append(*c);
    ++chunks;
  }
  CHECK(out.size() == expect.size());
  CHECK(out == expect);
  CHECK(chunks >= static_cast<int>(expect.size() / inflate_stream::chunk_size));
  CHECK(in.decompressed_size() == expect.size());
  CHECK(in.compressed_offset() == gz.size());
}

TEST_CASE("stored blocks and a source that gives one byte at a time") {
  const std::string data = test::pseudo_random_bytes(300000, 3);
  const std::string gz = test::gzip_member(test::stored_deflate(data, 40000), data);
  std::size_t pos = 0;
  byte_source trickle = [&](unsigned char* out, std::size_t) -> result<std::size_t> {
    if (pos == gz.size()) return std::size_t{0};
    *out = static_cast<unsigned char>(gz[pos++]);
    return std::size_t{1};
  };
  inflate_stream in(trickle, with(compression::gzip));
  std::string out;
  for (;;) {
    auto c = in.next();
    REQUIRE_MESSAGE(c, c.error().message());
    if (c->empty()) break;
    out.append(*c);
  }
  CHECK(out == data);
  // The Python sample through the same trickle: the Huffman decoder's slow refill path.
  const std::string_view py = bytes_of(test::python_gzip);
  std::size_t at = 0;
  inflate_stream slow([&](unsigned char* o, std::size_t) -> result<std::size_t> {
    if (at == py.size()) return std::size_t{0};
    *o = static_cast<unsigned char>(py[at++]);
    return std::size_t{1};
  }, with(compression::gzip));
  std::string text;
  for (auto c = slow.next(); c && !c->empty(); c = slow.next()) text.append(*c);
  CHECK(text == python_text());
}

TEST_CASE("a source's error and the output limit are reported") {
  byte_source failing = [](unsigned char*, std::size_t) -> result<std::size_t> {
    return make_error(errc::unavailable, "disk.gz: read error");
  };
  inflate_stream in(failing, with(compression::gzip));
  auto r = in.next();
  REQUIRE_FALSE(r);
  CHECK(r.error().message() == "disk.gz: read error");

  const std::string data(1 << 20, 'z');
  test::fixed_huffman_block b;
  b.literal('z');
  for (int k = 0; k < (1 << 20) / 258; ++k) b.match(258, 1);
  const std::string bomb = test::gzip_member(b.finish(), data);
  auto limited = inflate_all(bomb, with(compression::gzip, 1000));
  REQUIRE_FALSE(limited);
  CHECK(limited.error().code() == errc::resource_exhausted);
  CHECK(limited.error().message() == "t.gz: gzip: decompresses to more than the limit of 1000 bytes");
}

TEST_CASE("a gzip file reads through file_byte_source") {
  const auto path = std::filesystem::temp_directory_path() / "xlamem_gzip_test.gz";
  {
    std::FILE* f = std::fopen(path.string().c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(test::gnu_gzip, 1, sizeof test::gnu_gzip, f);
    std::fclose(f);
  }
  std::FILE* f = std::fopen(path.string().c_str(), "rb");
  REQUIRE(f != nullptr);
  inflate_stream in(file_byte_source(f, path.string()), with(compression::gzip));
  std::string out;
  for (auto c = in.next(); c && !c->empty(); c = in.next()) out.append(*c);
  std::fclose(f);
  std::filesystem::remove(path);
  CHECK(out == gnu_text());
}

TEST_CASE("the shared IOPDDL instances decompress to their sizes (checked by zcat | wc -c)") {
  XLAMEM_REQUIRE_SHARED_DATA(dir);
  // Only the small ones here; test/io/iopddl_test.cpp reads all eleven through the reader.
  const std::pair<const char*, std::uint64_t> sizes[] = {
      {"asplos-2025-iopddl-B.json.gz", 3106980},
      {"asplos-2025-iopddl-G.json.gz", 2446901},
      {"asplos-2025-iopddl-V.json.gz", 18172356},
  };
  for (const auto& [name, size] : sizes) {
    CAPTURE(name);
    const auto path = dir / "iopddl" / name;
    std::FILE* f = std::fopen(path.string().c_str(), "rb");
    REQUIRE(f != nullptr);
    inflate_stream in(file_byte_source(f, path.string()), with(compression::gzip));
    std::uint64_t total = 0;
    std::string error;
    for (;;) {
      auto c = in.next();
      if (!c) {
        error = c.error().message();
        break;
      }
      if (c->empty()) break;
      total += c->size();
    }
    std::fclose(f);
    CHECK(error == "");
    CHECK(total == size);
  }
}
