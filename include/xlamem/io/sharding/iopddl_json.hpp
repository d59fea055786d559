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
/// Streaming: the pull tokenizer of `io/codec/json_reader.hpp` reads the (decompressed) text in
/// chunks and this reader appends the numbers straight to the problem's flat arrays, so memory is the size of those arrays plus a
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
#include "xlamem/io/codec/json_reader.hpp"
#include "xlamem/deadline.hpp"
#include "xlamem/sharding/problem.hpp"

namespace xlamem {

/// Largest IOPDDL text read, compressed or not (4 GiB; the contest's largest file is 1.3 GB).
inline constexpr std::uint64_t iopddl_max_bytes = std::uint64_t{4} << 30;
/// Longest problem name (64 KiB).
inline constexpr std::size_t iopddl_max_name_bytes = std::size_t{1} << 16;
/// Deepest nesting of arrays and objects inside a skipped (unknown) value.
inline constexpr std::size_t iopddl_max_depth = json_max_skip_depth;

/// The default limits of the IOPDDL readers (`iopddl_max_bytes`).
[[nodiscard]] constexpr input_limits iopddl_limits() noexcept { return input_limits{iopddl_max_bytes}; }

namespace detail {

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
[[nodiscard]] inline text_source text_until(text_source source, const std::string& name, xlamem::solve_deadline deadline) {
  if (!deadline) return source;
  return [source = std::move(source), name, deadline, read = std::uint64_t{0}]() mutable -> result<std::string_view> {
    if (xlamem::solve_clock::now() >= *deadline) {
      return make_error(errc::deadline_exceeded,
                        name + ": the time limit ran out while reading, after " + std::to_string(read) + " bytes of text");
    }
    auto piece = source();
    if (piece) read += piece->size();
    return piece;
  };
}

[[nodiscard]] inline result<sharding::problem> read_iopddl_bytes(byte_source raw, const std::string& name,
                                                                 input_limits limits, xlamem::solve_deadline deadline) {
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
                                                                  xlamem::solve_deadline deadline = std::nullopt) {
  return detail::read_iopddl_bytes(file_byte_source(f, name), name, limits, deadline);
}

/// Reads the IOPDDL problem file `path` (a regular file of at most `limits.max_bytes`, JSON or
/// gzip/zlib-compressed JSON of at most that many bytes decompressed). Past `deadline` it stops
/// with `errc::deadline_exceeded` (the text is checked piece by piece, a few hundred KiB each).
[[nodiscard]] inline result<sharding::problem> read_iopddl(const std::string& path, input_limits limits = iopddl_limits(),
                                                           xlamem::solve_deadline deadline = std::nullopt) {
  auto file = open_input_file(path, limits);
  if (!file) return file.error();
  return detail::read_iopddl_bytes(file_byte_source(file->get(), path), path, limits, deadline);
}

}  // namespace xlamem
