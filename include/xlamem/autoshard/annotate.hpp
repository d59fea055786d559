// SPDX-License-Identifier: Apache-2.0
/// @file
/// An auto-sharding answer written back onto the module it came from: a `sharding=` attribute
/// on every array instruction of the entry computation (the form XLA's SPMD partitioner reads,
/// `to_hlo_sharding`), and the PartitionSpec of each entry parameter and of each array the
/// entry returns (what `jax.jit`'s `in_shardings` and `out_shardings` take).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "xlamem/autoshard/hlo_program.hpp"
#include "xlamem/error.hpp"
#include "xlamem/hlo/module.hpp"
#include "xlamem/sharding/mesh.hpp"
#include "xlamem/sharding/tensor_sharding.hpp"

namespace xlamem::autoshard {

/// Sets the `sharding=` attribute of every array instruction of `m`'s entry to its operation's
/// layout in `shardings` (one per operation of `p`, which was read from `m`; an open marker
/// takes the layout of the value it marks), replacing one already there. Errors when the counts
/// differ or a layout has no HLO form; then nothing is changed.
[[nodiscard]] inline result<void> annotate(hlo::module& m, const hlo_program& p,
                                           const std::vector<sharding::tensor_sharding>& shardings,
                                           const sharding::device_mesh& mesh) {
  if (shardings.size() != p.program.op_count()) {
    return make_error(errc::invalid_argument, "annotate: " + std::to_string(shardings.size()) + " shardings for " +
                                                  std::to_string(p.program.op_count()) + " operations");
  }
  // Every attribute is written first, then set: an error leaves the module as it was.
  std::vector<std::pair<hlo::instruction_id, std::string>> written;
  for (const hlo::instruction_id id : m[m.entry].instructions) {
    const hlo::instruction& in = m[id];
    const std::size_t i = p.op_of_instruction[hlo::index_of(id)];
    if (!in.shape.is_array() || i >= p.entry_ops) continue;
    auto text = sharding::to_hlo_sharding(shardings[i], mesh);
    if (!text) return text.error().with_context("instruction '" + in.name + "'");
    written.emplace_back(id, std::move(*text));
  }
  for (auto& [id, text] : written) {
    hlo::instruction& in = m[id];
    hlo::attribute_list kept;
    for (const auto a : in.attributes) {
      if (a.key != "sharding") kept.push_back(a.key, a.value);
    }
    kept.push_back("sharding", std::move(text));
    in.attributes = std::move(kept);
  }
  return {};
}

/// One PartitionSpec of an entry parameter or result.
struct named_spec {
  std::string name;  ///< the instruction's name
  std::string spec;  ///< e.g. "P('data', None)"
};

/// The PartitionSpecs of the entry's parameters (by parameter number) and of the arrays it
/// returns (the root, or the root tuple's operands in order).
struct entry_specs {
  std::vector<named_spec> parameters;
  std::vector<named_spec> outputs;
};

/// The entry's PartitionSpecs under `shardings` (one per operation of `p`, read from `m`).
[[nodiscard]] inline entry_specs partition_specs(const hlo::module& m, const hlo_program& p,
                                                 const std::vector<sharding::tensor_sharding>& shardings,
                                                 const sharding::device_mesh& mesh) {
  const auto spec_of = [&](hlo::instruction_id id) -> named_spec {
    const std::size_t i = p.op_of_instruction[hlo::index_of(id)];
    const bool known = i < p.entry_ops && i < shardings.size() && m[id].shape.is_array();
    return {m[id].name, known ? sharding::partition_spec(shardings[i], mesh) : "P()"};
  };
  entry_specs out;
  const auto& entry = m[m.entry];
  for (const auto id : entry.parameters) out.parameters.push_back(spec_of(id));
  const auto& root = m[entry.root];
  if (root.opcode == hlo::opcodes::tuple) {
    for (const auto id : root.operands) out.outputs.push_back(spec_of(id));
  } else {
    out.outputs.push_back(spec_of(entry.root));
  }
  return out;
}

}  // namespace xlamem::autoshard
