// SPDX-License-Identifier: Apache-2.0
/// @file
/// A table of named choices (packing solvers, XLA backends, memory-term policies): lookup by
/// name or alias, the list of names, the help line, and the error that lists the choices, the
/// same for every table. A row type says what it names (`Row::kind`: "solver") and has a
/// `name`; it may have `aliases` (older spellings, comma-separated) and `help` (one line).
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "xlamem/error.hpp"

namespace xlamem {

/// A row of a name table.
template <class Row>
concept named_row = requires(const Row& r) {
  { Row::kind } -> std::convertible_to<std::string_view>;
  { r.name } -> std::convertible_to<std::string_view>;
};

/// The rows of a table of `Row`s, the default first; a view (the rows live elsewhere, usually
/// in a constexpr array).
template <named_row Row>
class name_table {
 public:
  constexpr name_table(std::span<const Row> rows) noexcept : rows_(rows) {}  // NOLINT: a view, as span's
  template <std::size_t N>
  constexpr name_table(const std::array<Row, N>& rows) noexcept : rows_(rows) {}  // NOLINT

  [[nodiscard]] constexpr std::span<const Row> rows() const noexcept { return rows_; }
  [[nodiscard]] constexpr auto begin() const noexcept { return rows_.begin(); }
  [[nodiscard]] constexpr auto end() const noexcept { return rows_.end(); }
  [[nodiscard]] constexpr std::size_t size() const noexcept { return rows_.size(); }

  /// The row named `name` (its name or one of its aliases), or null.
  [[nodiscard]] constexpr const Row* find(std::string_view name) const noexcept {
    for (const auto& row : rows_) {
      if (row.name == name || has_alias(row, name)) return &row;
    }
    return nullptr;
  }

  /// The names, in order: "search, heuristic or xla".
  [[nodiscard]] std::string names() const {
    std::string s;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      s += i == 0 ? "" : i + 1 == rows_.size() ? " or " : ", ";
      s += rows_[i].name;
    }
    return s;
  }

  /// The row named `name`, or `errc::invalid_argument`: "unknown solver 'x' (expected search,
  /// heuristic or xla)".
  [[nodiscard]] result<Row> parse(std::string_view name) const {
    if (const Row* row = find(name)) return *row;
    return make_error(errc::invalid_argument,
                      "unknown " + std::string(Row::kind) + " '" + std::string(name) + "' (expected " + names() + ")");
  }

  /// Every row with its help and aliases: "search (exact/anytime search; also auto,best);
  /// heuristic (the best of the fast heuristics)".
  [[nodiscard]] std::string help() const {
    std::string s;
    for (const auto& row : rows_) {
      if (!s.empty()) s += "; ";
      s += std::string(row.name);
      std::string about;
      if constexpr (requires { row.help; }) about = std::string(row.help);
      if constexpr (requires { row.aliases; }) {
        if (!row.aliases.empty()) about += (about.empty() ? "also " : "; also ") + std::string(row.aliases);
      }
      if (!about.empty()) s += " (" + about + ")";
    }
    return s;
  }

 private:
  static constexpr bool has_alias(const Row& row, std::string_view name) noexcept {
    if constexpr (requires { row.aliases; }) {
      std::string_view rest = row.aliases;
      while (!rest.empty()) {
        const auto comma = rest.find(',');
        if (rest.substr(0, comma) == name) return true;
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      }
    }
    return false;
  }

  std::span<const Row> rows_;
};

}  // namespace xlamem
