// SPDX-License-Identifier: Apache-2.0
/// @file
/// Reader for the primitives of a memory-term reduction (`xlamem reduce`): a CSV with columns
/// `id,first,last`, one closed interval of time steps per primitive. Any `first > last` is "no
/// interval", XLA's own marker `{INT64_MAX, 0}` included (what XLA writes for a primitive that
/// is never live).
/// An optional header line starts with `id`; blank lines and lines starting with `#` are
/// skipped. Ids must be `0..N-1`, each once, in any order.
///
/// Bounded on any input: ids are mapped densely (memory is linear in the number of rows, never
/// in the largest id); ids and the steps of a live interval lie within 2^60 so that `last + 1`
/// cannot overflow (an empty interval's numbers take part in no arithmetic: any 64-bit integer
/// goes); and the
/// file is read through `read_input_file` (regular files only, size-limited). Errors are
/// `errc::parse_error` naming `source:line:column`.
#pragma once

#include <charconv>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "xlamem/checked.hpp"
#include "xlamem/error.hpp"
#include "xlamem/input_file.hpp"
#include "xlamem/io/codec/csv.hpp"
#include "xlamem/memory_terms/memory_terms.hpp"

namespace xlamem {

/// Largest magnitude of an id, or of a time step of a live interval, in a memory-terms CSV (2^60).
inline constexpr std::int64_t max_memory_terms_value = std::int64_t{1} << 60;

/// Parses `id,first,last` rows. @returns the intervals indexed by id, or `errc::parse_error`.
[[nodiscard]] inline result<std::vector<term_interval>> read_memory_terms_csv(std::string_view text,
                                                                             std::string_view source = "<input>") {
  const std::string src(source);
  auto fail = [&](std::size_t line_no, std::size_t column, const std::string& what) {
    return result<std::vector<term_interval>>(
        errc::parse_error, src + ":" + std::to_string(line_no) + ":" + std::to_string(column) + ": " + what);
  };
  struct row {
    std::int64_t id;
    term_interval iv;
  };
  std::vector<row> rows;
  std::unordered_map<std::int64_t, std::size_t> line_of;  // id -> line: duplicates
  bool seen_row = false;
  csv_lines lines(text);
  std::string_view line;
  std::size_t line_no = 0;
  std::vector<csv_field> fields;
  while (lines.next(line, line_no)) {
    const std::string_view trimmed = csv_trim(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    if (!seen_row && trimmed.substr(0, 2) == "id") {  // header
      seen_row = true;
      continue;
    }
    seen_row = true;
    // Field by field, so that the first mistake on the line is the one named.
    const auto extra = split_csv_fields(line, 3, fields);
    std::int64_t values[3] = {0, 0, 0};
    for (std::size_t field = 0; field < 3; ++field) {
      static constexpr const char* names[] = {"id", "first", "last"};
      if (field + 1 >= fields.size() && field < 2) {
        return fail(line_no, line.size() + 1, "expected 3 columns id,first,last, found " + std::to_string(field + 1));
      }
      if (field == 2 && extra != 0) return fail(line_no, extra, "expected 3 columns id,first,last, found more");
      const auto& cell = fields[field];
      // Ids are bounded here; steps once the pair is known (an empty interval's are not).
      const auto n = read_csv_integer(cell.text, field == 0 ? max_memory_terms_value : INT64_MAX);
      if (!n.empty && n.whole && (n.too_long || n.beyond_limit)) {
        return fail(line_no, cell.column, std::string(names[field]) + " " + quote_token(cell.text) + " is out of range (limit 2^60)");
      }
      if (n.empty || !n.parsed || !n.whole) {
        return fail(line_no, cell.column, std::string(names[field]) + " " + quote_token(cell.text) + " is not a 64-bit integer");
      }
      values[field] = n.value;
    }
    const std::int64_t id = values[0];
    const term_interval iv{values[1], values[2]};
    if (id < 0) return fail(line_no, 1, "id " + std::to_string(id) + " is negative");
    if (iv.valid() && iv.last >= max_memory_terms_value) {
      return fail(line_no, fields[2].column, "last " + quote_token(fields[2].text) + " is out of range (limit 2^60)");
    }
    if (iv.valid() && iv.first < 0) {
      return fail(line_no, 1, "interval [" + std::to_string(iv.first) + ", " + std::to_string(iv.last) +
                                  "] starts before time 0");
    }
    if (const auto [it, fresh] = line_of.emplace(id, line_no); !fresh) {
      return fail(line_no, 1, "id " + std::to_string(id) + " repeats line " + std::to_string(it->second));
    }
    rows.push_back({id, iv});
  }
  // Ids 0..N-1, each once: with no duplicates, that is every id below N.
  const std::size_t n = rows.size();
  std::vector<term_interval> out(n);
  std::vector<bool> present(n, false);
  for (const auto& r : rows) {
    if (static_cast<std::uint64_t>(r.id) < n) {
      out[static_cast<std::size_t>(r.id)] = r.iv;
      present[static_cast<std::size_t>(r.id)] = true;
    }
  }
  for (std::size_t id = 0; id < n; ++id) {
    if (present[id]) continue;
    // With no duplicates, a missing id means some row's id is N or more: name that row.
    for (const auto& r : rows) {
      if (static_cast<std::uint64_t>(r.id) >= n) {
        return fail(line_of[r.id], 1, "id " + std::to_string(r.id) + " is not in 0.." + std::to_string(n - 1) +
                                          ": ids must be 0..N-1 with none missing; id " + std::to_string(id) +
                                          " is missing");
      }
    }
  }
  return out;
}

/// Reads a memory-terms CSV file (a regular file within `limits`). A file with no rows is an
/// error: there is nothing to reduce.
[[nodiscard]] inline result<std::vector<term_interval>> read_memory_terms_csv_file(const std::string& path,
                                                                                  input_limits limits = {}) {
  try {
    auto text = read_input_file(path, limits);
    if (!text) return text.error();
    auto rows = read_memory_terms_csv(*text, path);
    if (rows && rows->empty()) {
      return result<std::vector<term_interval>>(errc::parse_error, path + ":1:1: no primitives (expected rows id,first,last)");
    }
    return rows;
  } catch (const std::bad_alloc&) {
    return result<std::vector<term_interval>>(errc::out_of_memory, path + ": out of memory while reading the primitives");
  }
}

}  // namespace xlamem
