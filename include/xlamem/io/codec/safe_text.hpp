// SPDX-License-Identifier: Apache-2.0
/// @file
/// Text from an input never reaches a terminal, a picture or a page raw. `terminal_text` shows
/// control bytes (escape sequences that would retitle a window or clear the screen), C1
/// controls and invalid UTF-8 as visible `\xNN`; `xml_text` escapes markup and replaces what
/// XML 1.0 forbids (control bytes, invalid UTF-8) with U+FFFD, so that an SVG stays
/// well-formed. JSON strings are escaped by `io/codec/json.hpp`, which uses `utf8_sequence` too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace xlamem {

/// The length of the UTF-8 sequence starting at `s[i]`, or 0 when it is not valid UTF-8
/// (overlong forms, surrogates and code points above U+10FFFF are not).
[[nodiscard]] inline std::size_t utf8_sequence(std::string_view s, std::size_t i) noexcept {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  }
  std::uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (b(i + k) & 0x3Fu);
  static constexpr std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

namespace detail {
inline void append_hex_byte(std::string& out, unsigned char c) {
  static constexpr char digits[] = "0123456789abcdef";
  out += "\\x";
  out += digits[c >> 4];
  out += digits[c & 0xF];
}
}  // namespace detail

/// `s` safe to print on a terminal: line breaks stay; every other control byte, DEL, a C1
/// control (U+0080..U+009F) and each byte of invalid UTF-8 becomes `\xNN`.
[[nodiscard]] inline std::string terminal_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_sequence(s, i);
    const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;
    if (n == 0 || c1 || (n == 1 && ((c < 0x20 && c != '\n') || c == 0x7F))) {
      const std::size_t k = n == 0 ? 1 : n;
      for (std::size_t j = 0; j < k; ++j) detail::append_hex_byte(out, static_cast<unsigned char>(s[i + j]));
      i += k;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

/// `s` as XML character data or an attribute value: `& < > " '` escaped; control bytes other
/// than tab, line feed and carriage return, and invalid UTF-8, replaced by U+FFFD.
[[nodiscard]] inline std::string xml_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0 || (n == 1 && c < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
      out += "\xEF\xBF\xBD";
      i += 1;
      continue;
    }
    if (n == 1) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += static_cast<char>(c);
      }
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace xlamem
