// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the IOPDDL problem reader (`xlamem shard` input), plain and gzip, and the
// solution reader. The first byte picks what the rest is:
//   0: the problem file's bytes as they are (JSON, or gzip/zlib when the bytes say so);
//   1: JSON text, wrapped here in a valid gzip member of stored blocks (a block every `size % 61
//      + 1` bytes), so the reader is fuzzed through the decompressor with every CRC right;
//   2: a problem, a zero byte, and a solution line for it.
// Invariants: a refused input names the source; an accepted problem has what the reader
// promises (sizes that agree, nonnegative costs and usages, intervals with 0 <= lo <= hi, edge
// ends in range) and evaluates; a solution accepted for a problem evaluates on it and writes
// back to the same line; a solution line read alone reads the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "../test/io/deflate_writer.hpp"
#include "fuzz_check.hpp"
#include "xlamem/io/sharding/iopddl_json.hpp"
#include "xlamem/io/sharding/iopddl_solution.hpp"
#include "xlamem/sharding/evaluate.hpp"

namespace {

using namespace xlamem;

void require_promises(const sharding::problem& p) {
  const std::size_t n = p.node_count();
  fuzz::require(p.strategy_offsets.size() == n + 1 && p.strategy_offsets.back() == p.costs.size() &&
                    p.costs.size() == p.usages.size(),
                "one cost and one usage per strategy");
  for (std::size_t i = 0; i < n; ++i) {
    fuzz::require(p.strategy_count(i) > 0, "every node has a strategy");
    fuzz::require(p.intervals[i].lower >= 0 && p.intervals[i].lower <= p.intervals[i].upper, "0 <= lo <= hi");
  }
  for (std::size_t k = 0; k < p.costs.size(); ++k) fuzz::require(p.costs[k] >= 0 && p.usages[k] >= 0, "nonnegative");
  fuzz::require(p.edge_offsets.size() == p.edge_count() + 1 && p.edge_offsets.back() == p.edge_costs.size(),
                "one matrix per edge");
  for (std::size_t e = 0; e < p.edge_count(); ++e) {
    const auto [u, v] = p.edges[e];
    fuzz::require(u < n && v < n, "edge ends in range");
    fuzz::require(p.edge_offsets[e + 1] - p.edge_offsets[e] == p.strategy_count(u) * p.strategy_count(v),
                  "an edge matrix of |S_u| x |S_v|");
  }
  for (const auto c : p.edge_costs) fuzz::require(c >= 0, "nonnegative edge costs");
  fuzz::require(p.limit >= 0, "a nonnegative limit");
  auto first = sharding::evaluate(p, sharding::assignment(n, 0));
  fuzz::require(first.has_value(), "strategy 0 everywhere evaluates", first ? std::string() : first.error().message());
}

void check_solution(const sharding::problem& p, std::string_view line) {
  auto alone = parse_iopddl_solution(line, std::string_view("fuzz.sol"));
  auto a = parse_iopddl_solution(line, p, "fuzz.sol");
  if (!alone) {
    fuzz::require_good_error(alone.error(), "fuzz.sol:");
    fuzz::require(!a.has_value(), "a line refused alone is refused for a problem");
    return;
  }
  auto again = parse_iopddl_solution(format_iopddl_solution(*alone), std::string_view("again.sol"));
  fuzz::require(again.has_value() && *again == *alone,
                "a solution line writes back to itself");
  if (!a) {
    fuzz::require_good_error(a.error(), "fuzz.sol:");
    return;
  }
  fuzz::require(*a == *alone, "the same line reads the same with or without the problem");
  auto ev = sharding::evaluate(p, *a);
  fuzz::require(ev.has_value(), "an accepted solution evaluates", ev ? std::string() : ev.error().message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int mode = data[0] % 3;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string_view solution;
  if (mode == 2) {
    const auto zero = text.find('\0');
    if (zero == std::string_view::npos) return 0;
    solution = text.substr(zero + 1);
    text = text.substr(0, zero);
  }
  std::string bytes(text);
  if (mode == 1) bytes = test::gzip_member(test::stored_deflate(text, size % 61 + 1), text);
  auto p = parse_iopddl(bytes, "fuzz.json");
  if (!p) {
    fuzz::require_good_error(p.error(), "fuzz.json:");
    return 0;
  }
  require_promises(*p);
  if (mode == 2) check_solution(*p, solution);
  return 0;
}
