// SPDX-License-Identifier: Apache-2.0
/// @file
/// The memory report of a plan xlamem makes of an HLO module: `plan_request` names the
/// backend preset (`hlo/backend.hpp`) and the solver (`packing/solvers.hpp`) as plain strings,
/// `planning_options` turns it into buffer-assignment options, `plan_module` applies the
/// backend's rules to a module and plans it, and `report_of` makes the report of the plan
/// (through `build_report`). Reading files and XLA's own plans is `io/report/memory_report_input.hpp`.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "xlamem/deadline.hpp"
#include "xlamem/error.hpp"
#include "xlamem/hlo/backend.hpp"
#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/packing/solvers.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/report/memory_report.hpp"
#include "xlamem/report/memory_transfers.hpp"
#include "xlamem/report/plan_timeline.hpp"

namespace xlamem::report {

/// How to plan a module, by name.
struct plan_request {
  std::string backend = "cpu";      ///< a preset of `hlo::backend_presets`: "cpu" (XLA:CPU) or "gpu" (XLA:GPU)
  std::string solver = "search";    ///< a row of `packing_solvers`, by name or alias
  std::int64_t alignment = 0;       ///< of temporaries, bytes; 0: the backend's
  double time_limit = 1.0;  ///< the search's budget per heap (0: heuristics only; infinity: none; negative or NaN refused)
  /// Once set by another thread, the heaps' solvers stop early with the placement in hand
  /// (`named_temp_packer::cancel`): the plan is still valid. Null: never.
  const cancellation_flag* cancel = nullptr;
  /// Also write the plan as XLA's dump table (`memory_report::xla_table`, about 80 bytes per
  /// value); off leaves it empty.
  bool xla_table = true;
  /// Also list every allocation's values and every value's live range
  /// (`memory_report::allocations`, `live_ranges`: the JSON and the page show them, the summary
  /// and the picture do not; two named entries per value); off leaves both empty.
  bool value_lists = true;
};

/// The backend preset, solver and options a request names. @returns `errc::invalid_argument`
/// for an unknown backend or solver, or a negative or NaN time limit.
struct planning_setup {
  hlo::backend_preset backend;
  buffer_assignment_options options;
};
[[nodiscard]] inline result<planning_setup> planning_options(const plan_request& r) {
  if (const char* bad = time_limit_error(r.time_limit)) return make_error(errc::invalid_argument, bad);
  auto backend = hlo::parse_backend(r.backend);
  if (!backend) return backend.error();
  auto solver = parse_solver(r.solver);
  if (!solver) return solver.error();
  planning_setup s{*backend, {}};
  s.options.solver = *solver;
  s.options.alignment = r.alignment != 0 ? r.alignment : backend->alignment;
  s.options.time_limit = r.time_limit;
  s.options.cancel = r.cancel;
  s.options.can_use_allocation.assign(backend->can_use_allocation.begin(), backend->can_use_allocation.end());
  return s;
}

/// A plan and how long it took. The plan refers to the module it was made of (which must
/// outlive it).
struct timed_plan {
  buffer_assignment<hlo::module> plan;
  double seconds = 0;
  std::string description;  ///< "xlamem plan (solver search, alignment 64, XLA:GPU rules)"
};

/// Plans `m` as `r` asks: sets `m.backend` to the preset's rules, assigns its buffers and
/// validates the plan. `name` names the module in messages. @returns the request's, the
/// planner's or (`errc::internal`) the validation's error.
[[nodiscard]] inline result<timed_plan> plan_module(hlo::module& m, std::string_view name, const plan_request& r) {
  auto setup = planning_options(r);
  if (!setup) return setup.error();
  m.backend = setup->backend.rules;
  const auto t0 = std::chrono::steady_clock::now();
  auto a = buffer_assignment<hlo::module>::run(m, setup->options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!a) return a.error().with_context(std::string(name));
  if (auto ok = a->validate(m); !ok) {
    return error(errc::internal, std::string(name) + ": internal error, invalid plan: " + ok.error().message());
  }
  std::string description = "xlamem plan (solver " + std::string(setup->options.solver.name) + ", alignment " +
                            std::to_string(setup->options.alignment) +
                            (setup->backend.rules == hlo::xla_backend::gpu ? ", XLA:GPU rules)" : ")");
  return timed_plan{std::move(*a), seconds, std::move(description)};
}

/// Sources by instruction name from a module's metadata.
[[nodiscard]] inline source_table sources_of(const hlo::module& m) {
  source_table s;
  const stack_frame_index frames(m);
  for (const auto& i : m.instructions) {
    auto src = source_of(frames, i);
    if (!src.empty()) s.emplace(i.name, std::move(src));
  }
  return s;
}

namespace detail {
/// Every allocation of a plan with XLA's predicates and its values.
[[nodiscard]] inline std::vector<report_allocation> allocations_of(const hlo::module& m, const plan_facts& f) {
  std::vector<report_allocation> out;
  out.reserve(f.allocations.size());
  for (const auto& al : f.allocations) {
    report_allocation x;
    x.index = static_cast<std::int64_t>(al.index);
    x.size = al.size();
    x.color = al.color();
    x.kind = kind_of(al.flags());
    x.is_entry_parameter = al.flags().is_entry_parameter;
    x.parameter_number = al.parameter_number;
    x.parameter_index = al.parameter_index;
    x.is_parameter_aliased_with_output = al.flags().is_parameter_aliased_with_output;
    x.maybe_live_out = al.flags().maybe_live_out;
    x.is_constant = al.flags().is_constant;
    x.is_thread_local = al.flags().is_thread_local;
    x.is_preallocated_temp = al.flags().is_preallocated_temp();
    x.emulated_copy_of = al.copy_of;
    x.values.reserve(al.values.size());
    for (const auto& v : al.values) x.values.push_back({v.value, f.value_name(m, v.value, false), v.offset, v.size});
    out.push_back(std::move(x));
  }
  return out;
}

/// The report of a plan from what it takes of the plan: `r` with its header, statistics and
/// heaps filled, and the plan's facts (let go before the peak search); the allocations' values
/// and the live ranges only with `value_lists` (see `plan_request`).
[[nodiscard]] inline memory_report report_of_facts(const hlo::module& m, memory_report r, plan_facts f,
                                                   bool value_lists = true) {
  r.timeline = timeline_of(m, f);
  if (value_lists) {
    r.allocations = allocations_of(m, f);
    r.live_ranges.reserve(f.values.size());
    for (std::uint32_t v = 0; v < f.values.size(); ++v) {
      const auto& x = f.values[v];
      if (!x.has_range) continue;
      r.live_ranges.push_back({v, f.value_name(m, v, false), x.range.start, x.range.end, static_cast<std::int64_t>(x.bytes)});
    }
  }
  f = plan_facts{};
  r.transfers = memory_transfers_of(m, r.timeline.schedule);
  return build_report(std::move(r));
}

/// A report's header, statistics and heaps from plan `p` of module `m`, read from `file`.
[[nodiscard]] inline memory_report report_head(const hlo::module& m, const timed_plan& p, std::string_view file) {
  const auto& a = p.plan;
  memory_report r;
  r.file = std::string(file);
  r.description = p.description;
  r.module = m.name;
  r.instructions = m.instructions.size();
  r.scheduled = m.is_scheduled;
  r.planning_seconds = p.seconds;
  r.stats = a.stats();
  for (const auto& h : a.heaps()) {
    r.heaps.push_back({static_cast<std::int64_t>(h.allocation), h.color, h.size, h.lower_bound, h.problem.buffers.size(),
                       h.solver});
  }
  return r;
}
}  // namespace detail

/// The report of plan `p` of module `m`, read from `file`.
[[nodiscard]] inline memory_report report_of(const hlo::module& m, const timed_plan& p, std::string_view file) {
  return detail::report_of_facts(m, detail::report_head(m, p, file), facts_of(p.plan));
}

/// The same, letting the plan go (`p.plan` is moved from) before the report is built, so that
/// the two are never held at once (for a large module each is hundreds of bytes per
/// instruction); without the value lists when `value_lists` is off (see `plan_request`).
[[nodiscard]] inline memory_report report_of(const hlo::module& m, timed_plan&& p, std::string_view file,
                                             bool value_lists = true) {
  auto head = detail::report_head(m, p, file);
  plan_facts facts;
  {
    const auto plan = std::move(p.plan);  // destroyed at the end of this block
    facts = facts_of(plan);
  }
  return detail::report_of_facts(m, std::move(head), std::move(facts), value_lists);
}

}  // namespace xlamem::report
