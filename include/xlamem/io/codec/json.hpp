// SPDX-License-Identifier: Apache-2.0
/// @file
/// JSON from field visitors: a type says which fields it shows by a `visit_fields(value, f)`
/// function beside it (found by argument-dependent lookup), which calls `f(name, field)` for
/// each; `to_json` writes any such value, so a field added to a type and its visitor reaches
/// every JSON writer with no key list kept elsewhere. The report (`report/memory_report.hpp`,
/// `report/diff.hpp`), the solve result (`packing/solvers.hpp`'s consumers in
/// `io/packing_text.hpp`) and XLA's statistics (`passes/memory_stats.hpp`) have visitors.
///
/// Values: `bool`; integers; floating point (shortest round-trip digits, as nlohmann-json
/// writes them; not finite: null); strings; null (`nullptr`, an empty `std::optional`, a null
/// pointer); a pointer or `std::optional` to a value: that value; `std::pair`: a two-element
/// array; any other range: an array; a type with `visit_fields`: an object. Strings are escaped
/// as JSON requires; bytes that are not UTF-8 become U+FFFD, so the output is always valid.
///
/// Layout: compact (`indent` < 0: `{"a":1,"b":[2,3]}`) or one value per line indented by
/// `indent` spaces per level (`{`, newline, `<indent>"a": 1`, ...), empty arrays and objects
/// as `[]` and `{}`.
#pragma once

#include <charconv>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "xlamem/io/codec/safe_text.hpp"

namespace xlamem {

namespace detail {

/// A visitor that accepts any field: only there to detect `visit_fields`.
struct json_field_probe {
  template <class V>
  void operator()(std::string_view, const V&) const {}
};

template <class T>
concept has_visit_fields = requires(const T& t) { visit_fields(t, json_field_probe{}); };

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct is_pair : std::false_type {};
template <class A, class B>
struct is_pair<std::pair<A, B>> : std::true_type {};

}  // namespace detail

/// Writes one JSON document.
class json_writer {
 public:
  explicit json_writer(int indent = -1) : indent_(indent) {}

  /// Writes `v` (see the file comment for what it may be).
  template <class T>
  void value(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      out_ += v ? "true" : "false";
    } else if constexpr (std::is_same_v<T, std::nullptr_t>) {
      out_ += "null";
    } else if constexpr (std::is_integral_v<T>) {
      out_ += std::to_string(v);
    } else if constexpr (std::is_floating_point_v<T>) {
      number(static_cast<double>(v));
    } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
      string(std::string_view(v));
    } else if constexpr (std::is_pointer_v<T>) {
      if (v == nullptr) out_ += "null";
      else value(*v);
    } else if constexpr (detail::is_optional<T>::value) {
      if (!v) out_ += "null";
      else value(*v);
    } else if constexpr (detail::is_pair<T>::value) {
      begin('[');
      element(v.first);
      element(v.second);
      end(']');
    } else if constexpr (detail::has_visit_fields<T>) {
      begin('{');
      visit_fields(v, [this](std::string_view key, const auto& x) { field(key, x); });
      end('}');
    } else {
      static_assert(std::ranges::input_range<T>, "json_writer: a value must be a number, string, range or have visit_fields");
      begin('[');
      for (const auto& x : v) element(x);
      end(']');
    }
  }

  /// Writes `"key": v` inside an object opened by `begin_object`.
  template <class T>
  void field(std::string_view name, const T& v) {
    key(name);
    value(v);
  }

  /// Writes `"key": ` inside an object; the value follows (`value`, `begin_object`, ...).
  void key(std::string_view name) {
    separate();
    string(name);
    out_ += indent_ >= 0 ? ": " : ":";
  }
  /// Starts the next element of an array; the value follows.
  void next() { separate(); }

  /// Writes `v` as the next element of an array.
  template <class T>
  void element(const T& v) {
    separate();
    value(v);
  }

  /// Opens an object or array as a value (after `key` or `next`, or at the top).
  void begin_object() { begin('{'); }
  void end_object() { end('}'); }
  void begin_array() { begin('['); }
  void end_array() { end(']'); }

  /// The text written so far.
  [[nodiscard]] const std::string& text() const noexcept { return out_; }
  [[nodiscard]] std::string take() noexcept { return std::move(out_); }

 private:
  void begin(char c) {
    out_ += c;
    ++depth_;
    first_ = true;
  }
  void end(char c) {
    --depth_;
    if (!first_) newline();
    out_ += c;
    first_ = false;
  }
  void separate() {
    if (!first_) out_ += ',';
    newline();
    first_ = false;
  }
  void newline() {
    if (indent_ < 0) return;
    out_ += '\n';
    out_.append(static_cast<std::size_t>(depth_ * indent_), ' ');
  }

  void string(std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out_ += '"';
    for (std::size_t i = 0; i < s.size();) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x80) {
        const auto n = utf8_sequence(s, i);
        if (n == 0) {
          out_ += "\\ufffd";
          ++i;
        } else {
          out_.append(s.substr(i, n));
          i += n;
        }
        continue;
      }
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\b': out_ += "\\b"; break;
        case '\f': out_ += "\\f"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        default:
          if (c < 0x20) {
            out_ += "\\u00";
            out_ += hex[c >> 4];
            out_ += hex[c & 0xF];
          } else {
            out_ += static_cast<char>(c);
          }
      }
      ++i;
    }
    out_ += '"';
  }

  // Shortest round-trip digits, laid out as nlohmann-json does: 1.0, 0.25, 0.0001, 1e-05, 1.5e+20.
  void number(double v) {
    if (!std::isfinite(v)) {
      out_ += "null";
      return;
    }
    if (v == 0) {
      out_ += std::signbit(v) ? "-0.0" : "0.0";
      return;
    }
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    const std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));  // [-]d[.ddd]e[+-]xx
    const auto e_at = sci.find('e');
    std::string_view mantissa = sci.substr(0, e_at);
    if (!mantissa.empty() && mantissa.front() == '-') {
      out_ += '-';
      mantissa.remove_prefix(1);
    }
    std::string digits;
    for (const char c : mantissa) {
      if (c != '.') digits += c;
    }
    const int exponent = std::atoi(std::string(sci.substr(e_at + 1)).c_str());
    const int k = static_cast<int>(digits.size());
    const int n = exponent + 1;  // the decimal point after n digits
    if (k <= n && n <= 15) {
      out_ += digits + std::string(static_cast<std::size_t>(n - k), '0') + ".0";
    } else if (0 < n && n <= 15) {
      out_ += digits.substr(0, static_cast<std::size_t>(n)) + "." + digits.substr(static_cast<std::size_t>(n));
    } else if (-4 < n && n <= 0) {
      out_ += "0." + std::string(static_cast<std::size_t>(-n), '0') + digits;
    } else {
      out_ += digits.substr(0, 1);
      if (k > 1) out_ += "." + digits.substr(1);
      const int e = n - 1;
      out_ += e < 0 ? "e-" : "e+";
      const int m = e < 0 ? -e : e;
      if (m < 10) out_ += '0';
      out_ += std::to_string(m);
    }
  }

  std::string out_;
  int indent_;
  int depth_ = 0;
  bool first_ = true;
};

/// `v` as JSON text (`indent` as for `json_writer`).
template <class T>
[[nodiscard]] std::string to_json(const T& v, int indent = -1) {
  json_writer w(indent);
  w.value(v);
  return w.take();
}

/// A command's JSON document: `{"command": command, <the fields of v>}`, indented by one space
/// (what `xlamem CMD --json` prints).
template <class T>
[[nodiscard]] std::string json_document(std::string_view command, const T& v, int indent = 1) {
  json_writer w(indent);
  w.begin_object();
  w.field("command", command);
  visit_fields(v, [&w](std::string_view key, const auto& x) { w.field(key, x); });
  w.end_object();
  return w.take();
}

}  // namespace xlamem
