// SPDX-License-Identifier: Apache-2.0
/// @file
/// HLO text printer: writes an `hlo::module` as HLO text that `parse_module` accepts again and
/// that parses to the same IR (attributes are written verbatim, shapes from the IR, so a
/// propagated memory space shows in every shape that carries it). Long form by default
/// (`%` names, computation signatures, operand shapes), short form on request.
/// `memory_space_leaves` gives the memory space of every output leaf as data (what
/// `xlamem propagate --json` shows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xlamem/hlo/module.hpp"
#include "xlamem/hlo/shape.hpp"

namespace xlamem::hlo {

/// How much the printer writes.
struct print_options {
  bool percent_names = true;    ///< `%name` rather than `name`
  bool signatures = true;       ///< `%comp (p: f32[]) -> f32[] {`
  bool operand_shapes = true;   ///< `add(f32[] %x, f32[] %y)`
  bool stack_frames = true;     ///< the FileNames/.../StackFrames tables
};

/// Short form as in the XLA benchmark files: no `%`, no signatures, no operand shapes.
[[nodiscard]] constexpr print_options short_form() noexcept { return {false, false, false, true}; }

namespace detail {
inline void append_name(std::string& out, const std::string& name, const print_options& o) {
  if (o.percent_names) out += '%';
  out += name;
}
}  // namespace detail

/// Appends the text of instruction `id` (no indentation, no newline).
inline void append_instruction(std::string& out, const module& m, instruction_id id, const print_options& o = {}) {
  const instruction& in = m[id];
  if (in.is_root) out += "ROOT ";
  detail::append_name(out, in.name, o);
  out += " = ";
  append_shape(out, in.shape);
  out += ' ';
  if (in.opcode_spelling.empty()) out += name_of(in.opcode);
  else out += in.opcode_spelling.str();
  out += '(';
  if (in.opcode == opcodes::parameter) {
    detail::append_int(out, in.parameter_number);
  } else if (in.opcode == opcodes::constant) {
    out += in.literal.str();
  } else {
    for (std::size_t k = 0; k < in.operands.size(); ++k) {
      if (k) out += ", ";
      const instruction& op = m[in.operands[k]];
      if (o.operand_shapes) {
        append_shape(out, op.shape);
        out += ' ';
      }
      detail::append_name(out, op.name, o);
    }
  }
  out += ')';
  for (const auto& a : in.attributes) {
    out += ", ";
    out += a.key;
    out += '=';
    out += a.value;
  }
}

/// The text of one instruction.
[[nodiscard]] inline std::string to_string(const module& m, instruction_id id, const print_options& o = {}) {
  std::string out;
  append_instruction(out, m, id, o);
  return out;
}

/// Appends the text of the whole module.
inline void append_module(std::string& out, const module& m, const print_options& o = {}) {
  out += "HloModule ";
  out += m.name;
  if (m.is_scheduled) out += ", is_scheduled=true";
  if (!m.input_output_alias.empty()) {
    out += ", input_output_alias={ ";
    for (std::size_t k = 0; k < m.input_output_alias.size(); ++k) {
      const auto& e = m.input_output_alias[k];
      if (k) out += ", ";
      append_shape_index(out, e.output_index);
      out += ": (";
      detail::append_int(out, e.parameter);
      out += ", ";
      append_shape_index(out, e.parameter_index);
      out += e.must_alias ? ", must-alias)" : ", may-alias)";
    }
    out += " }";
  }
  if (!m.buffer_donors.empty()) {
    out += ", buffer_donor={ ";
    for (std::size_t k = 0; k < m.buffer_donors.size(); ++k) {
      if (k) out += ", ";
      out += '(';
      detail::append_int(out, m.buffer_donors[k].parameter);
      out += ", ";
      append_shape_index(out, m.buffer_donors[k].parameter_index);
      out += ')';
    }
    out += " }";
  }
  if (m.entry_parameter_layouts && m.entry_result_layout) {
    out += ", entry_computation_layout={(";
    for (std::size_t k = 0; k < m.entry_parameter_layouts->size(); ++k) {
      if (k) out += ", ";
      append_shape(out, (*m.entry_parameter_layouts)[k]);
    }
    out += ")->";
    append_shape(out, *m.entry_result_layout);
    out += '}';
  }
  for (const auto& a : m.attributes) {
    out += ", ";
    out += a.key;
    out += '=';
    out += a.value;
  }
  out += "\n\n";
  if (o.stack_frames) {
    for (const auto& sec : m.stack_frames) {
      out += sec.name;
      out += '\n';
      for (const auto& [id, v] : sec.entries) {
        detail::append_int(out, id);
        out += ' ';
        out += v;
        out += '\n';
      }
      out += '\n';
    }
  }
  for (std::size_t k = 0; k < m.computations.size(); ++k) {
    const computation& c = m.computations[k];
    if (c.is_entry) out += "ENTRY ";
    detail::append_name(out, c.name, o);
    if (o.signatures) {
      out += " (";
      for (std::size_t p = 0; p < c.parameters.size(); ++p) {
        if (p) out += ", ";
        const instruction& pi = m[c.parameters[p]];
        out += pi.name;
        out += ": ";
        append_shape(out, pi.shape);
      }
      out += ") -> ";
      append_shape(out, m[c.root].shape);
    }
    for (const auto& a : c.attributes) {
      out += ", ";
      out += a.key;
      out += '=';
      out += a.value;
    }
    out += " {\n";
    for (auto i : c.instructions) {
      out += "  ";
      append_instruction(out, m, i, o);
      out += '\n';
    }
    out += "}\n\n";
  }
}

/// The text of the whole module.
[[nodiscard]] inline std::string to_string(const module& m, const print_options& o = {}) {
  std::string out;
  append_module(out, m, o);
  return out;
}

/// The memory space and split config of one array leaf of an instruction's output.
struct memory_space_leaf {
  std::string computation;
  std::string instruction;
  shape_index index;
  std::int64_t memory_space = 0;
  std::optional<split_config> split;  ///< the first `SC(d:i,...)` of the layout, if any
};

/// Every array leaf of every instruction's output, computation by computation.
[[nodiscard]] inline std::vector<memory_space_leaf> memory_space_leaves(const module& m) {
  std::vector<memory_space_leaf> out;
  for (const auto& c : m.computations) {
    for (const auto id : c.instructions) {
      const auto& in = m[id];
      for_each_subshape(in.shape, [&](const shape_index& index, const shape& s) {
        if (s.is_tuple()) return;
        memory_space_leaf leaf{c.name, in.name, index, s.has_layout ? s.layout.memory_space : 0, std::nullopt};
        if (s.has_layout && !s.layout.details().split_configs.empty()) leaf.split = s.layout.details().split_configs.front();
        out.push_back(std::move(leaf));
      });
    }
  }
  return out;
}

/// A leaf's fields for writers that visit fields; `split_config` is null when there is none.
template <class F>
void visit_fields(const memory_space_leaf& l, F&& f) {
  f("computation", l.computation);
  f("instruction", l.instruction);
  f("index", l.index);
  f("memory_space", l.memory_space);
  f("split_config", l.split);
}

}  // namespace xlamem::hlo
