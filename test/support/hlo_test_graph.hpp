// SPDX-License-Identifier: Apache-2.0
// A second, non-HLO model of graph_traits for the tests: a tiny "kernel graph" whose handles are
// strings (no dense numbers, so analyses fall back to hash maps), whose outputs are one leaf or a
// flat tuple of leaves, and whose node kinds are its own words ("input", "op", "pack", "pick",
// "view", "update", "kernel"). The passes run on it unchanged.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xlamem/graph/graph_traits.hpp"

namespace xlamem::test {

struct kg_leaf {
  std::uint64_t bytes = 0;
  std::int64_t space = 0;
  std::optional<split_config> split;
};

struct kg_node {
  std::string kind;                  // input | op | pack | pick | view | update | kernel
  std::string region;                // owning region
  std::vector<std::string> inputs;   // operand node names
  int input_number = -1;             // for "input"
  int pick = -1;                     // for "pick": which element
  std::string body;                  // for "kernel": the region it runs
  bool tuple = false;                // output is a flat tuple of `leaves`
  std::vector<kg_leaf> leaves;       // one leaf, or the tuple elements
};

struct kg_region {
  std::vector<std::string> nodes;    // in order
  std::vector<std::string> inputs;   // by input number
  std::string result;
};

struct kernel_graph {
  std::map<std::string, kg_node> nodes;
  std::map<std::string, kg_region> regions;
  std::vector<std::string> region_order;

  kg_node& add(const std::string& region, const std::string& name, kg_node n) {
    n.region = region;
    if (regions.find(region) == regions.end()) region_order.push_back(region);
    auto& r = regions[region];
    r.nodes.push_back(name);
    if (n.kind == "input") {
      if (r.inputs.size() <= static_cast<std::size_t>(n.input_number)) r.inputs.resize(static_cast<std::size_t>(n.input_number) + 1);
      r.inputs[static_cast<std::size_t>(n.input_number)] = name;
    }
    r.result = name;  // the last node added is the result
    return nodes[name] = std::move(n);
  }
  kg_leaf* leaf(const std::string& node, const shape_index& index) {
    auto& n = nodes.at(node);
    if (!n.tuple) return index.empty() ? &n.leaves.at(0) : nullptr;
    if (index.size() != 1 || index[0] < 0 || static_cast<std::size_t>(index[0]) >= n.leaves.size()) return nullptr;
    return &n.leaves[static_cast<std::size_t>(index[0])];
  }
  const kg_leaf* leaf(const std::string& node, const shape_index& index) const {
    return const_cast<kernel_graph*>(this)->leaf(node, index);
  }
};

}  // namespace xlamem::test

template <>
struct xlamem::graph_traits<xlamem::test::kernel_graph> {
  using G = xlamem::test::kernel_graph;
  using computation_type = std::string;
  using instruction_type = std::string;

  static const std::vector<std::string>& computations(const G& g) { return g.region_order; }
  static const std::vector<std::string>& instructions(const G& g, const std::string& c) { return g.regions.at(c).nodes; }
  static const std::vector<std::string>& parameters(const G& g, const std::string& c) { return g.regions.at(c).inputs; }
  static std::string root(const G& g, const std::string& c) { return g.regions.at(c).result; }
  static std::string parent(const G& g, const std::string& i) { return g.nodes.at(i).region; }
  static const std::vector<std::string>& operands(const G& g, const std::string& i) { return g.nodes.at(i).inputs; }
  static std::vector<std::string> users(const G& g, const std::string& i) {
    std::vector<std::string> out;
    for (const auto& n : g.regions.at(g.nodes.at(i).region).nodes) {
      for (const auto& in : g.nodes.at(n).inputs) {
        if (in == i) {
          out.push_back(n);
          break;
        }
      }
    }
    return out;
  }
  static memory_semantics<std::string> semantics(const G& g, const std::string& i) {
    const auto& n = g.nodes.at(i);
    memory_semantics<std::string> s;
    if (n.kind == "pack") {
      for (std::size_t k = 0; k < n.inputs.size(); ++k) s.forwards.push_back({{static_cast<std::int64_t>(k)}, k, {}});
    } else if (n.kind == "pick") {
      s.forwards.push_back({{}, 0, {n.pick}});
    } else if (n.kind == "view") {
      s.is_bitcast = true;
    } else if (n.kind == "update") {
      s.in_place.push_back({0, {}, {}, true});
    } else if (n.kind == "kernel") {
      s.calls.push_back({n.body, call_binding::fusion, 0});
    }
    return s;
  }
  template <class F>
  static void for_each_subshape(const G& g, const std::string& i, F&& f) {
    const auto& n = g.nodes.at(i);
    if (!n.tuple) {
      const auto& l = n.leaves.at(0);
      f(shape_index{}, subshape_info{false, 0, l.bytes, l.space, l.split});
      return;
    }
    f(shape_index{}, subshape_info{true, n.leaves.size(), 8 * n.leaves.size(), 0, std::nullopt});
    for (std::size_t k = 0; k < n.leaves.size(); ++k) {
      const auto& l = n.leaves[k];
      f(shape_index{static_cast<std::int64_t>(k)}, subshape_info{false, 0, l.bytes, l.space, l.split});
    }
  }
  static std::int64_t memory_space(const G& g, const std::string& i, const shape_index& index) {
    const auto* l = g.leaf(i, index);
    return l ? l->space : 0;
  }
  static std::optional<split_config> split(const G& g, const std::string& i, const shape_index& index) {
    const auto* l = g.leaf(i, index);
    return l ? l->split : std::nullopt;
  }
  static void set_memory_space(G& g, const std::string& i, const shape_index& index, std::int64_t space) {
    if (auto* l = g.leaf(i, index)) l->space = space;
  }
  static void set_split(G& g, const std::string& i, const shape_index& index, const std::optional<split_config>& sc) {
    if (auto* l = g.leaf(i, index)) l->split = sc;
  }
};

static_assert(xlamem::graph<xlamem::test::kernel_graph>);
static_assert(xlamem::memory_space_graph<xlamem::test::kernel_graph>);
static_assert(!xlamem::dense_graph<xlamem::test::kernel_graph>, "the kernel graph exercises the hash-map path");
