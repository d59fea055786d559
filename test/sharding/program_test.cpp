// SPDX-License-Identifier: Apache-2.0
// Tests for sharding/program.hpp: the rules `check_program` states (operands before users, read
// with their own shapes, letters fitting the shapes, finite figures), each broken once and named
// in the error; `letter_count`; a user's own program type read through `program_traits`.
#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "support/sharding_programs.hpp"
#include "xlamem/sharding/program.hpp"

using namespace xlamem;
using namespace xlamem::sharding;
using namespace xlamem::test;

namespace {

std::string error_of(const sharding_program& p) {
  auto ok = check_program(p);
  REQUIRE_FALSE(ok);
  return ok.error().to_string();
}

// A program type of the user's own, read through a specialisation of the traits.
struct my_ir {
  std::vector<program_op> list;
};

}  // namespace

template <>
struct xlamem::sharding::program_traits<my_ir> {
  static std::size_t op_count(const my_ir& p) { return p.list.size(); }
  static const program_op& op(const my_ir& p, std::size_t i) { return p.list[i]; }
};

TEST_SUITE("sharding/program") {
  TEST_CASE("a well-formed program passes; letter_count counts the letters") {
    const auto p = matmul_program();
    CHECK(check_program(p));
    CHECK(letter_count(p.ops[2]) == 3);
    CHECK(letter_count(p.ops[0]) == 2);
    program_op scalar;
    CHECK(letter_count(scalar) == 0);
  }

  TEST_CASE("each broken rule is named") {
    {
      auto p = matmul_program();
      p.ops[2].operands[1] = 2;  // itself
      CHECK(error_of(p).find("operation 2 ('y')'s operand 1 is operation 2, which does not come before it") !=
            std::string::npos);
    }
    {
      auto p = matmul_program();
      p.ops[2].operand_shapes[0].dims = {8, 5};
      CHECK(error_of(p).find("'y')'s operand 0 is read with another shape") != std::string::npos);
    }
    {
      auto p = matmul_program();
      p.ops[2].operand_letters[1] = {1};
      CHECK(error_of(p).find("operand 1 has 1 letters for 2 dimensions") != std::string::npos);
    }
    {
      auto p = matmul_program();
      p.ops[2].output_letters = {0, -2};
      CHECK(error_of(p).find("a negative letter") != std::string::npos);
    }
    {
      auto p = matmul_program();
      p.ops[2].operand_letters.pop_back();
      CHECK(error_of(p).find("one letter list and one shape per operand") != std::string::npos);
    }
    {
      auto p = matmul_program();
      p.ops[2].flops = -1;
      CHECK(error_of(p).find("flops must be finite") != std::string::npos);
    }
    {
      auto p = matmul_program();
      p.ops[0].shape.element_bytes = 0;
      CHECK(error_of(p).find("operation 0 ('x'): elements need at least 1 byte") != std::string::npos);
    }
    {
      auto p = matmul_program();
      p.ops[1].live = {-1, 2};
      CHECK(error_of(p).find("starts before 0") != std::string::npos);
    }
  }

  TEST_CASE("a program of the user's own type is read through program_traits") {
    static_assert(shardable_program<my_ir>);
    my_ir ir{matmul_program().ops};
    CHECK(check_program(ir));
    ir.list[2].operands[0] = 5;
    CHECK_FALSE(check_program(ir));
  }
}
