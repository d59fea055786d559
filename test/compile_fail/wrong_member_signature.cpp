// SPDX-License-Identifier: Apache-2.0
// Must NOT compile: a graph_traits member that the passes detect by name (here is_constant,
// chosen by XLAMEM_WRONG_MEMBER) is present with a signature the passes cannot use. The build
// must stop with the static_assert naming the member, not fall back to the default.
#include <string>

#include "../support/hlo_archetype.hpp"
#include "xlamem/passes/buffer_assignment.hpp"

struct wrong_graph {};

template <>
struct xlamem::graph_traits<wrong_graph> : xlamem::test::archetype::traits_base<wrong_graph> {
#if XLAMEM_WRONG_MEMBER == 1
  // Returns a string where bool is expected.
  static std::string is_constant(const wrong_graph&, instruction_type) { return "yes"; }
#elif XLAMEM_WRONG_MEMBER == 2
  // Returns integers where io_alias entries are expected.
  static std::vector<int> input_output_aliases(const wrong_graph&) { return {}; }
#elif XLAMEM_WRONG_MEMBER == 3
  // Takes the instruction by mutable reference: not callable with a const handle's copy.
  static bool can_share_operand_buffer(wrong_graph&, instruction_type, const shape_index&, instruction_type,
                                       const shape_index&) {
    return true;
  }
#endif
};

int main() {
  const wrong_graph g;
  return xlamem::buffer_assignment<wrong_graph>::run(g).has_value() ? 0 : 1;
}
