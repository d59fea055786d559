// SPDX-License-Identifier: Apache-2.0
/// @file
/// The front door of the memory report: the report of what a person has at hand, with the
/// backend and solver named as plain strings (`xlamem plan`, `xlamem diff`, the Python
/// package). The input is one of
/// - an optimised HLO module (text): planned here as the request says;
/// - XLA's own `*-buffer-assignment.txt`: XLA's plan as it is, no replanning (its
///   `-buffer-assignment-values.txt` and `-live-range.txt` beside it are read too, and the
///   module beside it, same stem, gives the sources);
/// - an `--xla_dump_to` folder: the module named by `module_name` (its file name contains it),
///   else the largest; XLA's plan when its buffer assignment is there and `replan` is off.
///
/// Errors name `FILE:LINE:COL` where the input has a place. Nothing prints.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/input_file.hpp"
#include "xlamem/io/xla/buffer_assignment_dump.hpp"
#include "xlamem/io/xla/buffer_assignment_text.hpp"
#include "xlamem/io/report/dump_report.hpp"
#include "xlamem/report/memory_report.hpp"
#include "xlamem/report/plan_report.hpp"

namespace xlamem {

/// What to read and, for a module, how to plan it.
struct report_request : report::plan_request {
  std::string module_name;  ///< in a dump folder: the module whose file name contains this
  bool replan = false;      ///< in a dump folder: plan the module even where XLA's buffer assignment is there
};

namespace detail {

inline constexpr std::string_view dump_suffix = "-buffer-assignment.txt";
inline constexpr std::string_view module_suffix = "after_optimizations.txt";

[[nodiscard]] inline bool ends_with(std::string_view s, std::string_view tail) noexcept {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

/// Sources by instruction name from the module at `path`, or none when it does not read.
[[nodiscard]] inline report::source_table sources_of_file(const std::string& path) {
  if (auto text = read_input_file(path); text) {
    if (auto m = hlo::parse_module(*text, path); m) return report::sources_of(*m);
  }
  return {};
}

}  // namespace detail

/// The report of module `m` (its `backend` set to the request's), planned as `r` says; `name`
/// names it in messages.
[[nodiscard]] inline result<report::memory_report> plan_report(hlo::module& m, std::string_view name,
                                                               const report::plan_request& r) {
  auto plan = report::plan_module(m, name, r);
  if (!plan) return plan.error();
  // XLA's table first: the report takes the plan and lets it go before it is built.
  std::string table = r.xla_table ? buffer_assignment_text(m, plan->plan) : std::string();
  auto out = report::report_of(m, std::move(*plan), name, r.value_lists);
  out.xla_table = std::move(table);
  return out;
}
/// The report of HLO module text `text`, planned as `r` says; `name` names it in messages.
[[nodiscard]] inline result<report::memory_report> plan_report(std::string_view text, std::string_view name,
                                                               const report::plan_request& r) {
  if (auto setup = report::planning_options(r); !setup) return setup.error();
  auto m = hlo::parse_module(text, name);
  if (!m) return m.error();
  return plan_report(*m, name, r);
}

namespace detail {
/// `plan_report` of text read from a file, which it lets go once the module is read (the text
/// is a tenth of what planning a large module takes, and nothing after reading needs it).
[[nodiscard]] inline result<report::memory_report> plan_report_of_file_text(std::string text, std::string_view name,
                                                                            const report::plan_request& r) {
  if (auto setup = report::planning_options(r); !setup) return setup.error();
  auto m = hlo::parse_module(text, name);
  if (!m) return m.error();
  std::string().swap(text);
  return plan_report(*m, name, r);
}
}  // namespace detail

/// The report of XLA's buffer-assignment dump text `text` (XLA's plan); `name` names it.
/// `sources` (may be null) gives sources where the dump has none.
[[nodiscard]] inline result<report::memory_report> xla_report(std::string_view text, std::string_view name,
                                                              const report::source_table* sources = nullptr) {
  auto d = parse_buffer_assignment_dump(text, name);
  if (!d) return d.error();
  auto out = report::report_of(*d, name, sources);
  out.xla_table = std::string(text);
  return out;
}

/// The report of text that is either XLA's dump (it starts with "BufferAssignment:") or an HLO
/// module (planned as `r` says); `name` names it in messages (standard input: "<stdin>").
[[nodiscard]] inline result<report::memory_report> report_from_text(std::string_view text, std::string_view name,
                                                                    const report_request& r) {
  if (text.substr(0, 17) == "BufferAssignment:") return xla_report(text, name);
  return plan_report(text, name, r);
}

namespace detail {

/// XLA's dump file `path` with the files beside it; the module beside it gives the sources.
[[nodiscard]] inline result<report::memory_report> read_xla_report(const std::string& path, std::string text,
                                                                   const std::string& module_path) {
  report::source_table sources;
  std::error_code ec;
  if (!module_path.empty() && std::filesystem::is_regular_file(module_path, ec)) sources = sources_of_file(module_path);
  auto d = read_buffer_assignment_dump(path);
  if (!d) return d.error();
  auto out = report::report_of(*d, path, &sources);
  out.xla_table = std::move(text);
  return out;
}

/// The module and dump files of one module in a dump folder, by stem.
struct dump_entry {
  std::string stem;
  std::filesystem::path module, assignment;
  std::uintmax_t size = 0;
};

/// The modules of dump folder `folder` whose stem contains `name` (every module for ""). Only
/// regular files count (a stale link, a FIFO or a folder named like a module is passed over);
/// linear in the folder's size; the no-match message names at most 20 modules.
[[nodiscard]] inline result<std::vector<dump_entry>> dump_entries(const std::string& folder, const std::string& name) {
  std::vector<dump_entry> entries;
  std::map<std::string, std::size_t, std::less<>> by_stem;
  auto entry = [&](const std::string& stem) -> dump_entry& {
    const auto [it, fresh] = by_stem.emplace(stem, entries.size());
    if (fresh) entries.push_back({stem, {}, {}, 0});
    return entries[it->second];
  };
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(folder, ec)) {
    const auto file = f.path().filename().string();
    const bool assignment = ends_with(file, dump_suffix), module = !assignment && ends_with(file, module_suffix);
    if (!assignment && !module) continue;
    std::error_code kind;
    if (!f.is_regular_file(kind)) continue;
    if (assignment) {
      entry(file.substr(0, file.size() - dump_suffix.size())).assignment = f.path();
    } else {
      auto& e = entry(file.substr(0, file.size() - 4));
      e.module = f.path();
      std::error_code size;
      const auto bytes = f.file_size(size);
      e.size = size ? 0 : bytes;  // never the (uintmax_t)-1 of a failed lookup: it would win "the largest"
    }
  }
  if (ec) return make_error(errc::not_found, folder + ": cannot list the folder: " + ec.message());
  std::vector<dump_entry> fit;
  for (const auto& e : entries) {
    if (name.empty() || e.stem.find(name) != std::string::npos) fit.push_back(e);
  }
  if (!fit.empty()) return fit;
  if (entries.empty()) {
    return make_error(errc::not_found, folder + ": no '*" + std::string(module_suffix) + "' or '*" +
                                           std::string(dump_suffix) + "' files (is it an --xla_dump_to folder?)");
  }
  std::string names;
  constexpr std::size_t shown = 20;
  for (std::size_t k = 0; k < entries.size() && k < shown; ++k) names += (k == 0 ? "" : ", ") + entries[k].stem;
  if (entries.size() > shown) names += ", and " + std::to_string(entries.size() - shown) + " more";
  return make_error(errc::not_found, folder + ": no module named like '" + name + "' (modules: " + names + ")");
}

/// The report of one module of an `--xla_dump_to` folder (see the file comment).
[[nodiscard]] inline result<report::memory_report> read_dump_folder(const std::string& folder, const report_request& r) {
  auto fit = dump_entries(folder, r.module_name);
  if (!fit) return fit.error();
  // The largest module: by module text, else by dump text.
  std::error_code ec;
  for (auto& e : *fit) {
    if (e.size == 0 && !e.assignment.empty()) {
      const auto bytes = std::filesystem::file_size(e.assignment, ec);
      e.size = ec ? 0 : bytes;
    }
  }
  const auto& best = *std::max_element(fit->begin(), fit->end(), [](const dump_entry& a, const dump_entry& b) {
    return std::tie(a.size, b.stem) < std::tie(b.size, a.stem);
  });
  if (!best.assignment.empty() && !(r.replan && !best.module.empty())) {
    auto text = read_input_file(best.assignment.string());
    if (!text) return text.error();
    return read_xla_report(best.assignment.string(), std::move(*text), best.module.string());
  }
  auto text = read_input_file(best.module.string());
  if (!text) return text.error();
  return plan_report_of_file_text(std::move(*text), best.module.string(), r);
}

}  // namespace detail

/// The report of the file or dump folder at `path` (see the file comment).
[[nodiscard]] inline result<report::memory_report> read_memory_report(const std::string& path, const report_request& r) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return detail::read_dump_folder(path, r);
  auto text = read_input_file(path);
  if (!text) return text.error();
  const bool is_dump = detail::ends_with(path, detail::dump_suffix) || std::string_view(*text).substr(0, 17) == "BufferAssignment:";
  if (!is_dump) return detail::plan_report_of_file_text(std::move(*text), path, r);
  const std::string module = detail::ends_with(path, detail::dump_suffix)
                                 ? path.substr(0, path.size() - detail::dump_suffix.size()) + ".txt"
                                 : std::string();
  return detail::read_xla_report(path, std::move(*text), module);
}

}  // namespace xlamem
