// SPDX-License-Identifier: Apache-2.0
/// @file
/// The IOPDDL contest's solution line: one strategy index per node, `[s0, s1, ...]`, read
/// (whitespace anywhere, checked against a problem: one index per node, each in range) and
/// written (`[0, 2, 1]` and a newline).
///
/// Errors name the source and the byte offset: `errc::parse_error` for text that is not a
/// list of non-negative integers, `errc::invalid_argument` for a list that does not fit the
/// problem (naming the node).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <string_view>

#include "xlamem/error.hpp"
#include "xlamem/output_file.hpp"
#include "xlamem/input_file.hpp"
#include "xlamem/sharding/problem.hpp"

namespace xlamem {

namespace detail {
/// Parses `[s0, s1, ...]`; `check(node, strategy, offset)` may refuse each index, and
/// `check_count(count, offset)` the length.
template <class Check, class CheckCount>
result<sharding::assignment> parse_solution_line(std::string_view text, std::string_view source, Check&& check,
                                                 CheckCount&& check_count) {
  std::size_t pos = 0;
  const auto skip_space = [&] {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r')) ++pos;
  };
  const auto found = [&] {
    if (pos >= text.size()) return std::string("the end of the text");
    std::size_t n = 1;
    while (pos + n < text.size() && n <= max_quoted_chars && text[pos + n] > ' ' && text[pos + n] != ',' &&
           text[pos + n] != ']') {
      ++n;
    }
    return quote_token(text.substr(pos, n));
  };
  const auto fail = [&](std::size_t at, const std::string& what) {
    return make_error(errc::parse_error, std::string(source) + ": at byte " + std::to_string(at) + ": " + what);
  };
  sharding::assignment a;
  skip_space();
  if (pos >= text.size() || text[pos] != '[') return fail(pos, "expected '[', found " + found());
  ++pos;
  skip_space();
  bool first = true;
  for (;;) {
    if (pos < text.size() && text[pos] == ']' && first) break;
    const std::size_t at = pos;
    std::uint64_t v = 0;
    std::size_t digits = 0;
    for (; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos, ++digits) {
      const auto d = static_cast<std::uint64_t>(text[pos] - '0');
      if (v > (std::numeric_limits<std::size_t>::max() - d) / 10) {
        pos = at;
        return fail(at, found() + " is out of range");
      }
      v = v * 10 + d;
    }
    if (digits == 0 || (pos < text.size() && (text[pos] == '.' || text[pos] == 'e' || text[pos] == 'E'))) {
      pos = at;
      return fail(at, "expected a strategy index (a non-negative integer), found " + found());
    }
    if (auto ok = check(a.size(), static_cast<std::size_t>(v), at); !ok) return ok.error();
    a.push_back(static_cast<std::size_t>(v));
    first = false;
    skip_space();
    if (pos < text.size() && text[pos] == ',') {
      ++pos;
      skip_space();
      continue;
    }
    if (pos < text.size() && text[pos] == ']') break;
    return fail(pos, "expected ',' or ']', found " + found());
  }
  if (auto ok = check_count(a.size(), pos); !ok) return ok.error();
  ++pos;
  skip_space();
  if (pos != text.size()) return fail(pos, "trailing characters after the solution: " + found());
  return a;
}
}  // namespace detail

/// Parses a solution line without a problem (syntax only).
[[nodiscard]] inline result<sharding::assignment> parse_iopddl_solution(std::string_view text,
                                                                        std::string_view source = "<solution>") {
  try {
    return detail::parse_solution_line(
        text, source, [](std::size_t, std::size_t, std::size_t) { return result<void>(); },
        [](std::size_t, std::size_t) { return result<void>(); });
  } catch (const std::bad_alloc&) {
    return make_error(errc::out_of_memory, std::string(source) + ": out of memory while reading the solution");
  }
}

/// Parses a solution line for `p`: one strategy per node, each below the node's strategy count.
template <sharding::sharding_problem P>
[[nodiscard]] result<sharding::assignment> parse_iopddl_solution(std::string_view text, const P& p,
                                                                 std::string_view source = "<solution>") {
  using traits = sharding::problem_traits<P>;
  const std::size_t n = traits::node_count(p);
  const std::string src(source);
  const auto check = [&](std::size_t node, std::size_t s, std::size_t at) -> result<void> {
    if (node >= n) {
      return make_error(errc::invalid_argument, src + ": at byte " + std::to_string(at) +
                                                    ": more strategies than the problem's " + std::to_string(n) + " nodes");
    }
    if (const std::size_t count = traits::strategy_count(p, node); s >= count) {
      return make_error(errc::invalid_argument, src + ": at byte " + std::to_string(at) + ": node " + std::to_string(node) +
                                                    ": strategy " + std::to_string(s) + " is out of range (the node has " +
                                                    std::to_string(count) + " strategies)");
    }
    return {};
  };
  const auto check_count = [&](std::size_t count, std::size_t at) -> result<void> {
    if (count == n) return {};
    return make_error(errc::invalid_argument, src + ": at byte " + std::to_string(at) + ": " + std::to_string(count) +
                                                  " strategies, but the problem has " + std::to_string(n) + " nodes");
  };
  try {
    return detail::parse_solution_line(text, source, check, check_count);
  } catch (const std::bad_alloc&) {
    return make_error(errc::out_of_memory, src + ": out of memory while reading the solution");
  }
}

/// Reads the solution file `path` (a regular file within `limits`) for `p`.
template <sharding::sharding_problem P>
[[nodiscard]] result<sharding::assignment> read_iopddl_solution(const std::string& path, const P& p,
                                                                input_limits limits = {}) {
  auto text = read_input_file(path, limits);
  if (!text) return text.error();
  return parse_iopddl_solution(*text, p, path);
}

/// The solution line of `a`: `[s0, s1, ...]` and a newline.
[[nodiscard]] inline std::string format_iopddl_solution(std::span<const std::size_t> a) {
  std::string out = "[";
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(a[i]);
  }
  out += "]\n";
  return out;
}

/// Writes the solution line of `a` to `path` (replacing it). @returns `errc::unavailable`
/// naming the path when it cannot be written.
[[nodiscard]] inline result<void> write_iopddl_solution(const std::string& path, std::span<const std::size_t> a) {
  return write_output_file(path, format_iopddl_solution(a));
}

}  // namespace xlamem
