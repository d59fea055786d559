// SPDX-License-Identifier: Apache-2.0
// xlamem._xlamem: the library's front door for Python. Every call goes to a function
// the CLI calls too (io/report/memory_report_input.hpp, report/diff.hpp, packing/solvers.hpp and the
// writers of io/); nothing here plans, packs or formats. Planning and packing release the GIL:
// arguments are converted to C++ values first, the library runs without Python, on a worker
// thread, while the calling thread checks for Ctrl-C (`interruptible`). The package's Python
// layer checks every argument first (python/xlamem/_arguments.py); the checks here are the
// ones a wrong call of this module would otherwise turn into a wrong answer.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <exception>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "interruptible.hpp"
#include "xlamem/autoshard/autoshard.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/io/autoshard/autoshard_text.hpp"
#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/report/memory_report_input.hpp"
#include "xlamem/io/report/memory_report_page.hpp"
#include "xlamem/io/report/memory_report_text.hpp"
#include "xlamem/io/packing/packing_report.hpp"
#include "xlamem/io/codec/text_format.hpp"
#include "xlamem/packing/solvers.hpp"
#include "xlamem/report/diff.hpp"
#include "xlamem/version.hpp"

namespace nb = nanobind;
using namespace nb::literals;

void add_command_line(nb::module_& m);  // command_line.cpp: `python -m xlamem`, the tool's front door

namespace {

/// A library error on its way to Python: FileNotFoundError for a missing file, else
/// xlamem.XlamemError (a ValueError) with the library's message, which names the place.
struct library_error {
  xlamem::error e;
};

template <class T>
T value_or_throw(xlamem::result<T>&& r) {
  if (!r) throw library_error{r.error()};
  return std::move(*r);
}

/// A time limit as Python passes it, checked: seconds, 0 or more; infinity: none.
double checked_time_limit(double seconds) {
  if (std::isnan(seconds)) throw nb::value_error("time_limit is NaN; give seconds (0 or more, or math.inf for no limit)");
  if (seconds < 0) throw nb::value_error("time_limit is negative; give seconds (0 or more, or math.inf for no limit)");
  return seconds;
}

xlamem::report_request make_request(const std::string& backend, const std::string& solver, std::int64_t alignment,
                                    double time_limit, const std::string& module, bool replan) {
  if (alignment < 0) throw nb::value_error("alignment is negative; give 0 (the backend's) or a power of two");
  xlamem::report_request r;
  r.backend = backend;
  r.solver = solver;
  r.alignment = alignment;
  r.time_limit = checked_time_limit(time_limit);  // 0: heuristics only; infinity: no limit
  r.module_name = module;
  r.replan = replan;
  return r;
}

/// The report of HLO module text or XLA's buffer-assignment dump text.
xlamem::report::memory_report report_of_text(const std::string& text, const std::string& name,
                                             const std::string& backend, const std::string& solver,
                                             std::int64_t alignment, double time_limit) {
  auto request = make_request(backend, solver, alignment, time_limit, "", false);
  return xlamem::python::interruptible([&](const xlamem::cancellation_flag& cancel) {
    request.cancel = &cancel;
    return value_or_throw(xlamem::report_from_text(text, name, request));
  });
}

/// The report of a module file, XLA's dump file or an --xla_dump_to folder.
xlamem::report::memory_report report_of_path(const std::string& path, const std::string& backend,
                                             const std::string& solver, std::int64_t alignment, double time_limit,
                                             const std::string& module, bool replan) {
  auto request = make_request(backend, solver, alignment, time_limit, module, replan);
  return xlamem::python::interruptible([&](const xlamem::cancellation_flag& cancel) {
    request.cancel = &cancel;
    return value_or_throw(xlamem::read_memory_report(path, request));
  });
}

/// What a packing gives back to Python: `xlamem pack --json`'s document, its text report and
/// result line, and the offsets (empty when not placed).
using pack_answer = std::tuple<std::string, std::string, std::vector<std::int64_t>>;

/// `time_limit`: seconds; 0: a deadline already passed (each solver's quickest placement,
/// status "time_limit"); infinity: none (until solved or interrupted). Runs `interruptible`:
/// called with the GIL, which it releases while solving.
pack_answer pack_problem(const xlamem::packing_problem& p, const std::string& name, const std::string& solver,
                         std::int64_t capacity, double time_limit, std::uint64_t seed) {
  if (capacity < -1) throw nb::value_error("capacity is negative; give bytes (0 or more), or None");
  xlamem::solve_options o;
  o.capacity = capacity;
  o.time_limit = checked_time_limit(time_limit);  // 0: at once; infinity: none (deadline.hpp)
  o.seed = seed;
  auto named = value_or_throw(xlamem::parse_solver(solver));
  return xlamem::python::interruptible([&](const xlamem::cancellation_flag& cancel) -> pack_answer {
    auto options = o;
    options.deadline.cancel = &cancel;
    auto r = value_or_throw(xlamem::solve(p, named, options));
    const xlamem::packing_report report{name, &p, named.name, o, r};
    return {xlamem::json_document("pack", report), xlamem::packing_text(report) + xlamem::packing_result_line(r),
            r.placed() ? r.placement.offsets : std::vector<std::int64_t>{}};
  });
}

/// Packs buffers given as (lower, upper, size, alignment) rows with their ids.
pack_answer pack_rows(const std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>>& rows,
                      const std::vector<std::string>& ids, const std::string& solver, std::int64_t capacity,
                      double time_limit, std::uint64_t seed) {
  xlamem::packing_problem p;
  p.buffers.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& [lower, upper, size, alignment] = rows[i];
    xlamem::interval_buffer b;
    b.id = i < ids.size() ? ids[i] : std::to_string(i);
    b.lower = lower;
    b.upper = upper;
    b.size = size;
    b.alignment = alignment;
    p.buffers.push_back(std::move(b));
  }
  return pack_problem(p, "<python>", solver, capacity, time_limit, seed);
}

/// `xlamem autoshard --json` of HLO module text (every array instruction's layout listed) and
/// its summary. `memory_limit`: bytes per device, or -1 for none. The time limit counts from
/// the call's start, parsing and building the problem included (as the command's does); Ctrl-C
/// ends the search with its best answer.
std::tuple<std::string, std::string> auto_shard_text(const std::string& text, const std::string& name,
                                                     const std::string& mesh_text, const std::string& machine_name,
                                                     std::int64_t memory_limit, double time_limit, unsigned threads,
                                                     std::uint64_t seed) {
  if (memory_limit < -1) throw nb::value_error("memory_limit is negative; give bytes (0 or more), or None");
  const double seconds = checked_time_limit(time_limit);
  auto mesh = value_or_throw(xlamem::sharding::parse_mesh(mesh_text));
  auto preset = xlamem::sharding::machine_for(machine_name, mesh);
  // An unknown machine is a bad argument (XlamemError), not a missing file.
  if (!preset) throw library_error{xlamem::error(xlamem::errc::invalid_argument, preset.error().message())};
  const auto machine = std::move(*preset);
  const auto start = xlamem::solve_clock::now();
  return xlamem::python::interruptible([&](const xlamem::cancellation_flag& cancel) {
    auto m = value_or_throw(xlamem::hlo::parse_module(text, name));
    xlamem::autoshard::module_options o;
    o.shard.memory_limit = memory_limit < 0 ? std::numeric_limits<std::int64_t>::max() : memory_limit;
    o.shard.solve.time_limit = seconds;  // 0: at once; infinity: none
    o.shard.solve.deadline = xlamem::deadline_after(start, seconds);
    o.shard.solve.deadline.cancel = &cancel;  // Ctrl-C ends the search with its best answer
    o.shard.solve.started = start;
    o.shard.solve.threads = std::max(1u, threads);
    o.shard.solve.seed = seed;
    o.every_instruction = true;
    auto answer = value_or_throw(xlamem::autoshard::auto_shard_module(m, mesh, machine, o, false));
    const xlamem::autoshard_report report{name, mesh.to_string(), machine_name, o.shard.memory_limit, seconds, &answer,
                                          std::nullopt};
    return std::tuple<std::string, std::string>{xlamem::json_document("autoshard", report),
                                                xlamem::autoshard_text(report)};
  });
}

}  // namespace

NB_MODULE(_xlamem, m) {
  m.doc() = "xlamem's C++ front door (use the xlamem package, not this module)";
  m.attr("__version__") = std::string(xlamem::version_string);

  // xlamem.XlamemError (a ValueError); the module holds the type, the translator gets it as
  // its payload. FileNotFoundError for a path that is not there.
  nb::object error_type = nb::steal(PyErr_NewException("xlamem._xlamem.XlamemError", PyExc_ValueError, nullptr));
  m.attr("XlamemError") = error_type;
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* payload) {
        try {
          std::rethrow_exception(p);
        } catch (const library_error& e) {
          PyObject* type = e.e.code() == xlamem::errc::not_found ? PyExc_FileNotFoundError : static_cast<PyObject*>(payload);
          PyErr_SetString(type, e.e.message().c_str());
        }
      },
      error_type.ptr());

  using xlamem::report::memory_report;
  nb::class_<memory_report>(m, "NativeReport")
      .def_ro("file", &memory_report::file)
      .def_ro("module", &memory_report::module)
      .def_ro("description", &memory_report::description)
      .def_ro("from_xla", &memory_report::from_xla)
      .def_ro("scheduled", &memory_report::scheduled)
      .def_ro("instructions", &memory_report::instructions)
      .def_ro("planning_seconds", &memory_report::planning_seconds)
      .def_ro("xla_table", &memory_report::xla_table)
      .def_prop_ro("host_peak", [](const memory_report& r) { return r.host_peak(); })
      .def_prop_ro("bytes_to_host", [](const memory_report& r) { return r.transferred_bytes(true); })
      .def_prop_ro("bytes_to_device", [](const memory_report& r) { return r.transferred_bytes(false); })
      .def("summary", [](const memory_report& r, std::size_t top) { return xlamem::summary_text(r, top); }, "top"_a = 10)
      .def("json", [](const memory_report& r) { return xlamem::json_document("plan", r); })
      .def("page", [](const memory_report& r, std::size_t top) { return xlamem::report_page(r, top); }, "top"_a = 20)
      .def("svg", [](const memory_report& r) { return xlamem::report_svg(r); });

  using xlamem::report::memory_report_diff;
  nb::class_<memory_report_diff>(m, "NativeDiff")
      .def("text", [](const memory_report_diff& d, std::size_t top) { return xlamem::diff_text(d, top); }, "top"_a = 12)
      .def("json", [](const memory_report_diff& d) { return xlamem::json_document("diff", d); });

  // These four release the GIL themselves while the library works (`interruptible`).
  m.def("report_of_text", &report_of_text, "text"_a, "name"_a, "backend"_a, "solver"_a, "alignment"_a,
        "time_limit"_a);
  m.def("report_of_path", &report_of_path, "path"_a, "backend"_a, "solver"_a, "alignment"_a, "time_limit"_a,
        "module"_a, "replan"_a);
  m.def(
      "diff", [](const memory_report& a, const memory_report& b) { return xlamem::report::diff(a, b); }, "a"_a, "b"_a,
      nb::call_guard<nb::gil_scoped_release>());
  m.def("auto_shard_text", &auto_shard_text, "text"_a, "name"_a, "mesh"_a, "machine"_a, "memory_limit"_a,
        "time_limit"_a, "threads"_a, "seed"_a);
  m.def("pack_rows", &pack_rows, "rows"_a, "ids"_a, "solver"_a, "capacity"_a, "time_limit"_a, "seed"_a);
  m.def("solver_names", [] { return xlamem::solver_names(); });
  m.def("human_bytes", [](std::int64_t bytes) { return xlamem::human_bytes(bytes); });
  m.def("solvers_help", [] { return xlamem::solvers_help(); });
  add_command_line(m);
}
