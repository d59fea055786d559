// SPDX-License-Identifier: Apache-2.0
// A small non-HLO IR, as an inference runtime might hold a decoder step: layers in a vector
// (the vector order is the schedule), each with one named output tensor, operands by layer
// index, and a result layer that bundles the step's outputs. Two memory facts a runtime knows:
// the KV-cache input is donated to the updated-cache output (an input->output alias), and the
// cache update writes in place over its cache operand. `graph_traits<rt::network>` below adapts
// it for xlamem's planning passes; nothing in it knows about HLO.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ranges>
#include <string>
#include <vector>

#include "xlamem/graph/graph_queries.hpp"
#include "xlamem/graph/graph_traits.hpp"

namespace rt {

enum class layer_kind : std::uint8_t {
  input,      ///< a network input (weights, tokens, caches)
  matmul,     ///< a matrix product of its two operands
  relu,       ///< elementwise: may write over its operand when that dies here
  kv_update,  ///< appends to the KV cache in place: its output is operand 0's buffer
  attention,  ///< attention over the activations and the cache
  softmax,    ///< row-wise softmax (not elementwise: it reads a whole row first)
  outputs,    ///< the step's result: a bundle of its operands (a tuple)
};

struct layer {
  std::string name;
  layer_kind kind = layer_kind::input;
  std::vector<std::size_t> operands;  ///< layer indices, all earlier in the schedule
  std::string shape;                  ///< "f32[4,1024]" style, for reports
  std::uint64_t bytes = 0;            ///< output size (ignored for `outputs`)
};

/// One input donated to one output: the runtime may reuse the input's buffer for it.
struct donation {
  std::size_t input = 0;   ///< position in `network::inputs`
  std::int64_t output = 0;  ///< element of the result bundle
};

struct network {
  std::string name;
  std::vector<layer> layers;        ///< in schedule order
  std::vector<std::size_t> inputs;  ///< the input layers, in parameter order
  std::size_t result = 0;           ///< the `outputs` layer
  std::vector<donation> donations;
  std::vector<std::vector<std::size_t>> users;  ///< filled by `finish`

  /// Adds a layer and returns its index.
  std::size_t add(std::string n, layer_kind k, std::vector<std::size_t> ops, std::string shape, std::uint64_t bytes) {
    layers.push_back({std::move(n), k, std::move(ops), std::move(shape), bytes});
    if (k == layer_kind::input) inputs.push_back(layers.size() - 1);
    if (k == layer_kind::outputs) result = layers.size() - 1;
    return layers.size() - 1;
  }
  /// Computes the users of every layer (call once the layers are in).
  void finish() {
    users.assign(layers.size(), {});
    for (std::size_t i = 0; i < layers.size(); ++i) {
      for (const auto o : layers[i].operands) users[o].push_back(i);
    }
  }
};

/// One decoder step of a toy model: tokens x W, relu, cache update, attention, projection,
/// softmax; outputs (logits, new cache), the cache donated to output 1.
inline network decoder_step() {
  network n;
  n.name = "decoder_step";
  const auto tokens = n.add("tokens", layer_kind::input, {}, "f32[4,1024]", 4 * 1024 * 4);
  const auto cache = n.add("kv_cache", layer_kind::input, {}, "f32[64,1024]", 64 * 1024 * 4);
  const auto w = n.add("w_qkv", layer_kind::input, {}, "f32[1024,1024]", 1024 * 1024 * 4);
  const auto embed = n.add("embed", layer_kind::matmul, {tokens, w}, "f32[4,1024]", 4 * 1024 * 4);
  const auto act = n.add("act", layer_kind::relu, {embed}, "f32[4,1024]", 4 * 1024 * 4);
  const auto kv = n.add("kv_new", layer_kind::kv_update, {cache, act}, "f32[64,1024]", 64 * 1024 * 4);
  const auto attn = n.add("attn", layer_kind::attention, {act, kv}, "f32[4,1024]", 4 * 1024 * 4);
  const auto proj = n.add("proj", layer_kind::matmul, {attn, w}, "f32[4,1024]", 4 * 1024 * 4);
  const auto logits = n.add("logits", layer_kind::softmax, {proj}, "f32[4,1024]", 4 * 1024 * 4);
  n.add("result", layer_kind::outputs, {logits, kv}, "(f32[4,1024], f32[64,1024])", 0);
  n.donations.push_back({1, 1});  // kv_cache -> result element 1
  n.finish();
  return n;
}

}  // namespace rt

/// The layer graph as xlamem sees it: one computation (0), instructions are layer indices.
template <>
struct xlamem::graph_traits<rt::network> {
  using computation_type = std::size_t;
  using instruction_type = std::size_t;
  using G = rt::network;

  // ---- the graph (required) ----
  static std::ranges::iota_view<std::size_t, std::size_t> computations(const G&) { return {0, 1}; }
  static std::ranges::iota_view<std::size_t, std::size_t> instructions(const G& n, std::size_t) {
    return {0, n.layers.size()};
  }
  static const std::vector<std::size_t>& parameters(const G& n, std::size_t) { return n.inputs; }
  static std::size_t root(const G& n, std::size_t) { return n.result; }
  static std::size_t parent(const G&, std::size_t) { return 0; }
  static const std::vector<std::size_t>& operands(const G& n, std::size_t i) { return n.layers[i].operands; }
  static const std::vector<std::size_t>& users(const G& n, std::size_t i) { return n.users[i]; }
  static memory_semantics<std::size_t> semantics(const G& n, std::size_t i) {
    memory_semantics<std::size_t> s;
    const auto& l = n.layers[i];
    if (l.kind == rt::layer_kind::outputs) {
      for (std::size_t k = 0; k < l.operands.size(); ++k) s.forwards.push_back({{static_cast<std::int64_t>(k)}, k, {}});
    } else if (l.kind == rt::layer_kind::kv_update) {
      s.in_place.push_back({0, {}, {}, false});  // the new cache is the old cache's buffer
    }
    return s;
  }
  template <class F>
  static void for_each_subshape(const G& n, std::size_t i, F&& f) {
    const auto& l = n.layers[i];
    if (l.kind != rt::layer_kind::outputs) {
      subshape_info leaf;
      leaf.bytes = l.bytes;
      f(shape_index{}, static_cast<const subshape_info&>(leaf));
      return;
    }
    subshape_info table;  // the bundle's pointer table: 8 bytes per element
    table.is_tuple = true;
    table.tuple_size = l.operands.size();
    table.bytes = 8 * l.operands.size();
    f(shape_index{}, static_cast<const subshape_info&>(table));
    for (std::size_t k = 0; k < l.operands.size(); ++k) {
      subshape_info leaf;
      leaf.bytes = n.layers[l.operands[k]].bytes;
      f(shape_index{static_cast<std::int64_t>(k)}, static_cast<const subshape_info&>(leaf));
    }
  }

  // ---- dense numbers: the layer index ----
  static std::size_t instruction_count(const G& n) { return n.layers.size(); }
  static std::size_t instruction_number(const G&, std::size_t i) { return i; }
  static std::size_t computation_count(const G&) { return 1; }
  static std::size_t computation_number(const G&, std::size_t c) { return c; }

  // ---- the program: entry, schedule, donations ----
  static std::size_t entry(const G&) { return 0; }
  static bool is_scheduled(const G&) { return true; }
  static std::vector<io_alias> input_output_aliases(const G& n) {
    std::vector<io_alias> out;
    for (const auto& d : n.donations) out.push_back({{d.output}, static_cast<std::int64_t>(d.input), {}, true});
    return out;
  }

  // ---- planning questions ----
  static const std::string& name(const G& n, std::size_t i) { return n.layers[i].name; }
  static std::string shape_string(const G& n, std::size_t i, const shape_index& index) {
    const auto& l = n.layers[i];
    if (l.kind == rt::layer_kind::outputs && index.size() == 1) return n.layers[l.operands[static_cast<std::size_t>(index[0])]].shape;
    return l.shape;
  }
  static std::string computation_name(const G& n, std::size_t) { return n.name; }
  /// A relu may write its output over its operand when the operand dies at the relu.
  static bool can_share_operand_buffer(const G& n, std::size_t operand, const shape_index& operand_index,
                                       std::size_t user, const shape_index& user_index) {
    const auto& u = n.layers[user];
    return u.kind == rt::layer_kind::relu && operand_index.empty() && user_index.empty() &&
           n.layers[operand].bytes == u.bytes;
  }
};

static_assert(xlamem::dense_graph<rt::network>);
static_assert(xlamem::module_graph<rt::network>);
static_assert(xlamem::graph_queries<rt::network>::checked);
