// SPDX-License-Identifier: Apache-2.0
// Tests of include/xlamem/io/xla/buffer_assignment_text.hpp: XLA's dump-format allocation table of a
// plan (every flag, parameters and their shape index, the output shape, emulated copies, phis,
// colours), layouts stripped where XLA strips them, and the table read back by the dump reader.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/io/xla/buffer_assignment_dump.hpp"
#include "xlamem/io/xla/buffer_assignment_text.hpp"
#include "xlamem/passes/buffer_assignment.hpp"

namespace buffer_assignment_text_test {
using xlamem::hlo::module;

// A while loop (phis), a reduce (thread-local values of its region), constants, a parameter
// in host memory (colour 5) and parameters returned as they are (emulated output copies).
inline constexpr const char* loop_module = R"(HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

body {
  bp = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[4]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v2 = f32[4]{0} exponential(v)
  ROOT bt = (s32[], f32[4]{0}) tuple(i2, v2)
}

cond {
  cp = (s32[], f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(ci, ten), direction=LT
}

ENTRY e {
  p = f32[4]{0} parameter(0)
  h = f32[8]{0:S(5)} parameter(1)
  z = s32[] constant(0)
  w0 = (s32[], f32[4]{0}) tuple(z, p)
  w = (s32[], f32[4]{0}) while(w0), condition=cond, body=body
  wv = f32[4]{0} get-tuple-element(w), index=1
  e1 = f32[4]{0} exponential(wv)
  zero = f32[] constant(0)
  r = f32[] reduce(e1, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[8]{0:S(5)}, f32[4]{0}) tuple(r, h, p)
}
)";

// A tuple parameter: one allocation per leaf and one for its table, each with its ShapeIndex;
// the output aliases one leaf.
inline constexpr const char* tuple_parameter_module = R"(HloModule m, input_output_alias={ {1}: (1, {1}, may-alias) }

ENTRY e {
  p = f32[4]{0} parameter(0)
  q = (f32[2]{0}, s32[]) parameter(1)
  c = f32[4]{0} constant({1, 2, 3, 4})
  a = f32[4]{0} add(p, c)
  n = f32[4]{0} negate(a)
  s = s32[] get-tuple-element(q), index=1
  ROOT t = (f32[4]{0}, s32[]) tuple(n, s)
}
)";

inline module parsed(const char* text) {
  auto m = xlamem::hlo::parse_module(text, "m.hlo");
  REQUIRE_MESSAGE(m.has_value(), m.error().to_string());
  return std::move(*m);
}

// XLA's plan of `m` (`m` must outlive it).
inline xlamem::buffer_assignment<module> planned(const module& m) {
  xlamem::buffer_assignment_options o;
  o.solver = *xlamem::find_solver("xla");
  auto a = xlamem::buffer_assignment<module>::run(m, o);
  REQUIRE_MESSAGE(a.has_value(), a.error().to_string());
  return std::move(*a);
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace buffer_assignment_text_test

TEST_SUITE("io/buffer_assignment_text") {
  using namespace buffer_assignment_text_test;

  TEST_CASE("strip_layout drops each {...} that follows ']', nested braces included, and nothing else") {
    using xlamem::detail::strip_layout;
    CHECK(strip_layout("f32[4,2]{1,0}") == "f32[4,2]");
    CHECK(strip_layout("(f32[2]{0}, s32[])") == "(f32[2], s32[])");
    CHECK(strip_layout("f32[8]{0:T(128)S(5)}") == "f32[8]");
    CHECK(strip_layout("f32[]{:P(f32[2]{0})}") == "f32[]");
    CHECK(strip_layout("(f32[2]{0}, (s32[3]{0}, pred[]))") == "(f32[2], (s32[3], pred[]))");
    CHECK(strip_layout("f32[4]") == "f32[4]");
    CHECK(strip_layout("{0}") == "{0}");  // not after ']': kept
    CHECK(strip_layout("").empty());
    CHECK(strip_layout("f32[4]{0") == "f32[4]");  // an unclosed layout runs to the end
  }

  TEST_CASE("every flag as XLA prints it: colour, parameter and ShapeIndex, output shape, constant, thread-local, temp, copies") {
    const module m = parsed(loop_module);
    const auto a = planned(m);
    const auto text = xlamem::buffer_assignment_text(m, a);
    CHECK(text.rfind("BufferAssignment:\nallocation 0: size ", 0) == 0);
    CHECK(has(text, ": size 32, color 5, parameter 1, shape |f32[8]| at ShapeIndex {}:\n"));
    CHECK(has(text, " h @5> (size=32,offset=0): f32[8]{0:S(5)}\n"));  // values keep their layouts
    CHECK(has(text, ": size 16, parameter 0, shape |f32[4]| at ShapeIndex {}:\n"));
    CHECK(has(text, ": size 24, output shape is |(f32[], f32[8], f32[4])|, maybe-live-out:\n"));
    CHECK(has(text, " t{} @0> (size=24,offset=0): (f32[], f32[8]{0:S(5)}, f32[4]{0})\n"));
    CHECK(has(text, ": size 4, constant:\n"));
    CHECK(has(text, ": size 4, thread-local:\n"));
    CHECK(has(text, ", preallocated-temp:\n"));
    CHECK(has(text, ": size 32, color 5, maybe-live-out:\n copy: t{1} (emulated copy insertion)\n"));
    CHECK(has(text, " copy: t{2} (emulated copy insertion)\n"));
    CHECK(has(text, " w{1} (phi) @0> (size=16,offset=0): f32[4]{0}\n"));
    CHECK(has(text, " bp{} (phi) @0> (size=16,offset="));
    CHECK(has(text, " e1 @0> (size=16,offset="));  // an array value: no {} after its name
    std::int64_t total = 0;
    for (const auto& al : a.allocations()) total += al.size();
    CHECK(text.ends_with("\n\nTotal bytes used: " + std::to_string(total) + "\n"));
  }

  TEST_CASE("a tuple parameter: each leaf and the table its own allocation, at its ShapeIndex") {
    const module m = parsed(tuple_parameter_module);
    const auto a = planned(m);
    const auto text = xlamem::buffer_assignment_text(m, a);
    CHECK(has(text, ": size 16, parameter 1, shape |(f32[2], s32[])| at ShapeIndex {}:\n"));
    CHECK(has(text, ": size 8, parameter 1, shape |f32[2]| at ShapeIndex {0}:\n"));
    CHECK(has(text, ": size 4, parameter 1, shape |s32[]| at ShapeIndex {1}, maybe-live-out:\n"));
    CHECK(has(text, " q{0} @0> (size=8,offset=0): f32[2]{0}\n"));
    CHECK(has(text, " q{} @0> (size=16,offset=0): (f32[2]{0}, s32[])\n"));
    CHECK(has(text, ": size 16, output shape is |(f32[4], s32[])|, maybe-live-out:\n"));
  }

  TEST_CASE("the table reads back with the dump reader: every allocation, flag and value as planned") {
    for (const char* source : {loop_module, tuple_parameter_module}) {
      const module m = parsed(source);
      const auto a = planned(m);
      // Every line reads back, the ` copy:` line of an emulated output copy included.
      const auto text = xlamem::buffer_assignment_text(m, a);
      auto d = xlamem::parse_buffer_assignment_dump(text, "plan.txt");
      REQUIRE_MESSAGE(d.has_value(), d.error().to_string());
      const auto& df = a.dataflow();
      REQUIRE(d->allocations.size() == a.allocations().size());
      std::int64_t total = 0;
      for (std::size_t k = 0; k < d->allocations.size(); ++k) {
        const auto& got = d->allocations[k];
        const auto& want = a.allocations()[k];
        const auto& f = want.flags();
        CAPTURE(k);
        total += want.size();
        CHECK(got.index == want.index);
        CHECK(got.size == static_cast<std::uint64_t>(want.size()));
        CHECK(got.color == want.color());
        CHECK(got.is_constant == f.is_constant);
        CHECK(got.is_thread_local == f.is_thread_local);
        CHECK(got.maybe_live_out == f.maybe_live_out);
        CHECK(got.is_preallocated_temp == f.is_preallocated_temp());
        CHECK(got.is_entry_parameter() == f.is_entry_parameter);
        if (f.is_entry_parameter) {
          CHECK(*got.parameter == want.parameter_number);
          CHECK(got.parameter_shape_index == want.parameter_index);
        }
        CHECK(got.output_shape.has_value() == want.holds_entry_root);
        CHECK(got.other_flags.empty());
        CHECK(got.copy_of == want.copy_of);
        REQUIRE(got.values.size() == want.values.size());
        for (std::size_t v = 0; v < got.values.size(); ++v) {
          const auto& x = want.values[v];
          const auto& val = df.get(x.value);
          CHECK(got.values[v].id == x.value);
          CHECK(got.values[v].instruction == m[val.defining.instruction].name);
          CHECK(got.values[v].shape_index == val.defining.index);
          CHECK(got.values[v].is_phi == val.is_phi);
          CHECK(got.values[v].color == want.color());
          CHECK(got.values[v].size == static_cast<std::uint64_t>(x.size));
          CHECK(got.values[v].offset == static_cast<std::uint64_t>(x.offset));
        }
      }
      REQUIRE(d->total_bytes_used.has_value());
      CHECK(*d->total_bytes_used == static_cast<std::uint64_t>(total));
    }
  }
}
