// SPDX-License-Identifier: Apache-2.0
/// @file
/// Reader and writer for MiniMalloc's buffer CSV: a header line naming the columns, then one
/// buffer per line. Required columns `id,lower,upper,size` (live on `[lower, upper)`);
/// optional `alignment` and `offset` (a placement, as MiniMalloc writes it). The older names
/// `buffer`/`buffer_id` (id), `begin`/`start` (lower) and `end` (closed: upper = end + 1) are
/// accepted; `hint` and `gaps` are read and ignored, which is conservative (a buffer treated
/// as live through its gaps only adds conflicts). Errors name `source:line:column`.
///
/// Limits: every number within ±2^60, ids unique, and the sizes plus alignments of all buffers
/// summing to at most 2^60 (`max_total_bytes`), so that no offset or peak a packer computes can
/// overflow. A UTF-8 byte-order mark (what spreadsheets write) before the header is skipped
/// (`io/codec/csv.hpp`, the lexer).
#pragma once

#include <charconv>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "xlamem/checked.hpp"
#include "xlamem/error.hpp"
#include "xlamem/output_file.hpp"
#include "xlamem/input_file.hpp"
#include "xlamem/io/codec/csv.hpp"
#include "xlamem/packing/problem.hpp"

namespace xlamem {

/// What an interval CSV holds: the problem, and a placement when it has an `offset` column.
struct interval_csv {
  packing_problem problem;
  std::optional<placement> offsets;
};

/// Parses interval CSV text. `source` names the input in messages ("file.csv:3:9: ...").
[[nodiscard]] inline result<interval_csv> read_interval_csv(std::string_view text,
                                                            std::string_view source = "<input>") {
  enum col { c_id, c_lower, c_upper, c_end, c_size, c_alignment, c_offset, c_ignored };
  std::vector<col> cols;
  interval_csv out;
  std::vector<std::int64_t> offsets;
  bool has_offset = false;
  std::size_t line_no = 0;
  bool header_done = false;
  std::unordered_map<std::string_view, std::size_t> id_line;  // id -> line where it was given
  std::uint64_t total = 0;  // sizes + alignments so far
  auto fail = [&](std::size_t column, const std::string& what) {
    return result<interval_csv>(errc::parse_error, std::string(source) + ":" + std::to_string(line_no) + ":" +
                                                       std::to_string(column) + ": " + what);
  };
  csv_lines lines(text);
  std::string_view line;
  std::vector<csv_field> fields;
  while (lines.next(line, line_no)) {
    if (csv_trim(line).empty()) continue;
    // Bounded: a line never holds more fields than the header (a header at most 16).
    if (const auto extra = split_csv_fields(line, header_done ? cols.size() : std::size_t{16}, fields); extra != 0) {
      return fail(extra, header_done ? "too many fields: the header names " + std::to_string(cols.size()) + " columns"
                                     : std::string("too many columns in the header (at most 16)"));
    }
    if (!header_done) {
      header_done = true;
      bool seen[c_ignored] = {};
      for (const auto& [name, column] : fields) {
        col c = c_ignored;
        if (name == "id" || name == "buffer" || name == "buffer_id") c = c_id;
        else if (name == "lower" || name == "begin" || name == "start") c = c_lower;
        else if (name == "upper") c = c_upper;
        else if (name == "end") c = c_end;
        else if (name == "size") c = c_size;
        else if (name == "alignment") c = c_alignment;
        else if (name == "offset") c = c_offset;
        else if (name == "hint" || name == "gaps") c = c_ignored;
        else return fail(column, "unknown column " + quote_token(name) + " (expected id,lower,upper,size[,alignment][,offset])");
        if (c != c_ignored) {
          if (seen[c] || (c == c_end && seen[c_upper]) || (c == c_upper && seen[c_end])) {
            return fail(column, "duplicate column " + quote_token(name));
          }
          seen[c] = true;
        }
        cols.push_back(c);
      }
      if (!seen[c_id] || !seen[c_lower] || (!seen[c_upper] && !seen[c_end]) || !seen[c_size]) {
        return fail(1, "header must name the columns id, lower, upper and size");
      }
      has_offset = seen[c_offset];
      continue;
    }
    if (fields.size() != cols.size()) {
      return fail(1, "expected " + std::to_string(cols.size()) + " fields, found " + std::to_string(fields.size()));
    }
    interval_buffer b;
    std::int64_t offset = 0;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const auto [text_k, column] = fields[k];
      if (cols[k] == c_ignored) continue;
      if (cols[k] == c_id) {
        if (text_k.empty()) return fail(column, "empty id");
        if (const auto [it, fresh] = id_line.emplace(text_k, line_no); !fresh) {
          return fail(column, "duplicate id " + quote_token(text_k) + " (first given on line " + std::to_string(it->second) + ")");
        }
        b.id = std::string(text_k);
        continue;
      }
      const auto n = read_csv_integer(text_k, max_packing_value);
      if (n.empty) return fail(column, "empty number");
      if (n.too_long || (n.whole && n.beyond_limit)) {
        return fail(column, "number " + quote_token(text_k) + " is out of range (limit 2^60)");
      }
      if (!n.parsed || !n.whole) return fail(column, quote_token(text_k) + " is not an integer");
      const std::int64_t v = n.value;
      switch (cols[k]) {
        case c_lower: b.lower = v; break;
        case c_upper: b.upper = v; break;
        case c_end: b.upper = v + 1; break;
        case c_size:
          if (v < 0) return fail(column, "negative size " + std::to_string(v));
          b.size = v;
          break;
        case c_alignment:
          if (v <= 0 || !is_power_of_two(static_cast<std::uint64_t>(v))) {
            return fail(column, "alignment " + std::to_string(v) + " is not a power of two");
          }
          b.alignment = v;
          break;
        case c_offset:
          if (v < 0) return fail(column, "negative offset " + std::to_string(v));
          offset = v;
          break;
        default: break;
      }
    }
    if (b.lower >= b.upper) {
      return fail(1, "buffer " + quote_token(b.id) + " has an empty or negative live interval [" + std::to_string(b.lower) + ", " +
                         std::to_string(b.upper) + ")");
    }
    if (!checked_accumulate(total, static_cast<std::uint64_t>(b.size), max_total_bytes) ||
        !checked_accumulate(total, static_cast<std::uint64_t>(b.alignment), max_total_bytes)) {
      return fail(1, "buffer " + quote_token(b.id) + ": the sizes and alignments of the buffers so far sum to more than "
                     "the limit of 2^60 bytes");
    }
    out.problem.buffers.push_back(std::move(b));
    offsets.push_back(offset);
  }
  if (!header_done) {
    return result<interval_csv>(errc::parse_error, std::string(source) + ":1:1: empty input (expected a header line)");
  }
  if (has_offset) out.offsets = placement{std::move(offsets)};
  return out;
}

/// Reads an interval CSV file (a regular file within `limits`); the error names the file and
/// line, and running out of memory is `errc::out_of_memory` naming the file.
[[nodiscard]] inline result<interval_csv> read_interval_csv_file(const std::string& path, input_limits limits = {}) {
  try {
    auto text = read_input_file(path, limits);
    if (!text) return text.error();
    return read_interval_csv(*text, path);
  } catch (const std::bad_alloc&) {
    return result<interval_csv>(errc::out_of_memory, path + ": out of memory while reading the buffers");
  }
}

/// Writes `id,lower,upper,size[,alignment][,offset]`: alignment only when some buffer has one
/// above 1, offset only when a placement is given.
[[nodiscard]] inline std::string write_interval_csv(const packing_problem& p, const placement* s = nullptr) {
  bool aligned = false;
  for (const auto& b : p.buffers) aligned = aligned || b.alignment > 1;
  std::string out = "id,lower,upper,size";
  if (aligned) out += ",alignment";
  if (s) out += ",offset";
  out += '\n';
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    const auto& b = p.buffers[i];
    out += b.id.empty() ? std::to_string(i) : b.id;
    out += ',' + std::to_string(b.lower) + ',' + std::to_string(b.upper) + ',' + std::to_string(b.size);
    if (aligned) out += ',' + std::to_string(b.alignment);
    if (s) out += ',' + std::to_string(i < s->offsets.size() ? s->offsets[i] : 0);
    out += '\n';
  }
  return out;
}

/// Writes the CSV to a file.
[[nodiscard]] inline result<void> write_interval_csv_file(const std::string& path, const packing_problem& p,
                                                          const placement* s = nullptr) {
  return write_output_file(path, write_interval_csv(p, s));
}

}  // namespace xlamem
