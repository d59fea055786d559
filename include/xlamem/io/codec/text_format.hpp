// SPDX-License-Identifier: Apache-2.0
/// @file
/// Small text formatting shared by the writers of `io/` (the memory report's summary, page and
/// picture, the packing report, the SVG axes): the one byte formatter (`human_bytes`, and
/// `bytes_text` with the exact figure), fixed-point numbers, and columns padded by characters.
/// Standard library only; nothing here prints.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace xlamem {

/// "1.50 MiB" / "512 B": byte counts for people (binary units, three significant digits).
[[nodiscard]] inline std::string human_bytes(std::int64_t bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  const bool negative = bytes < 0;
  double v = negative ? -static_cast<double>(bytes) : static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  std::string s = negative ? "-" : "";
  if (u == 0) return s + std::to_string(negative ? -bytes : bytes) + " B";
  // Three significant digits: hundredths, tenths or units.
  const int decimals = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  double scale = decimals == 2 ? 100.0 : decimals == 1 ? 10.0 : 1.0;
  const auto n = static_cast<std::int64_t>(v * scale + 0.5);
  const auto whole = n / static_cast<std::int64_t>(scale);
  const auto frac = n % static_cast<std::int64_t>(scale);
  s += std::to_string(whole);
  if (decimals > 0) {
    std::string f = std::to_string(frac);
    while (static_cast<int>(f.size()) < decimals) f.insert(f.begin(), '0');
    s += "." + f;
  }
  return s + " " + units[u];
}

/// A byte count for people with the exact figure: "2.06 MiB (2157968 B)", or "512 B".
[[nodiscard]] inline std::string bytes_text(std::int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  return human_bytes(bytes) + " (" + std::to_string(bytes) + " B)";
}

/// `v` with `decimals` digits after the point, as printf's "%.Nf" (with `plus`: "%+.Nf").
[[nodiscard]] inline std::string fixed(double v, int decimals, bool plus = false) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  std::string s(buf, r.ec == std::errc() ? r.ptr : buf);
  if (plus && !s.empty() && s.front() != '-') s.insert(s.begin(), '+');
  return s;
}

/// 100 x part / whole with `decimals` digits ("12.5"), 0 for an empty whole.
[[nodiscard]] inline std::string percent_of(std::int64_t part, std::int64_t whole, int decimals, bool plus = false) {
  return fixed(whole != 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0, decimals, plus);
}

/// Characters of UTF-8 text (continuation bytes do not count).
[[nodiscard]] inline std::size_t text_width(std::string_view s) noexcept {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

/// `s` padded with spaces on the right to `width` characters.
[[nodiscard]] inline std::string pad_right(std::string_view s, std::size_t width) {
  std::string out(s);
  const auto w = text_width(s);
  if (w < width) out.append(width - w, ' ');
  return out;
}

/// `s` padded with spaces on the left to `width` characters.
[[nodiscard]] inline std::string pad_left(std::string_view s, std::size_t width) {
  const auto w = text_width(s);
  return (w < width ? std::string(width - w, ' ') : std::string()) + std::string(s);
}

/// `s` cut to `n` bytes with "..." when longer (no room for "..." below 4 bytes: just cut).
[[nodiscard]] inline std::string clip(std::string_view s, std::size_t n) {
  if (s.size() <= n) return std::string(s);
  return n <= 3 ? std::string(s.substr(0, n)) : std::string(s.substr(0, n - 3)) + "...";
}

/// `s` without trailing spaces.
[[nodiscard]] inline std::string trim_right(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

/// Reads a byte count as people write one: a number (fractions allowed) and an optional unit,
/// blanks between them allowed: B; KiB, MiB, GiB, TiB (powers of 1024); KB, MB, GB, TB (powers
/// of 1000); units in any case. Nullopt for anything else, a negative count, or one that does
/// not fit in 63 bits; fractions of a byte are rounded down.
[[nodiscard]] inline std::optional<std::int64_t> parse_byte_size(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::size_t end = 0;
  while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.')) ++end;
  double number = 0;
  const auto [stop, ec] = std::from_chars(text.data(), text.data() + end, number);
  if (end == 0 || ec != std::errc() || stop != text.data() + end) return std::nullopt;
  std::string unit;
  for (char c : text.substr(end)) {
    if (c == ' ' && unit.empty()) continue;
    unit += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  static constexpr std::pair<std::string_view, double> units[] = {
      {"", 1},          {"b", 1},          {"kib", 0x1p10}, {"mib", 0x1p20}, {"gib", 0x1p30}, {"tib", 0x1p40},
      {"kb", 1e3},      {"mb", 1e6},       {"gb", 1e9},     {"tb", 1e12}};
  for (const auto& [name, scale] : units) {
    if (unit != name) continue;
    const double bytes = std::floor(number * scale);
    if (!(bytes >= 0 && bytes < 0x1p63)) return std::nullopt;
    return static_cast<std::int64_t>(bytes);
  }
  return std::nullopt;
}

}  // namespace xlamem
