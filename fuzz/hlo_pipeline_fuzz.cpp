// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness, structure-aware: the fuzz bytes choose a *valid* HLO module (random array
// and tuple shapes with layouts and memory spaces, elementwise ops, tuples, get-tuple-element,
// bitcast, copy-start/-done, in-place dynamic-update-slice and custom-call aliasing, fusions,
// calls, async computations, while loops and conditionals, input_output_alias, scheduled or
// not), which the reader must accept; the whole plan pipeline (dataflow, liveness, colocation,
// buffer assignment with the XLA and heuristic packers) must give a plan that validates, and
// memory-space propagation must run, with XLA:CPU's or XLA:GPU's sharing rules. Random bytes
// rarely get past a parser; this reaches the passes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "byte_choices.hpp"
#include "fuzz_check.hpp"
#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/passes/buffer_assignment.hpp"
#include "xlamem/passes/memory_space_propagation.hpp"

namespace {

struct gen_shape {
  std::string text;                 // HLO text of the shape
  std::vector<gen_shape> elements;  // tuple elements
  bool tuple = false;
};

class generator {
 public:
  explicit generator(xlamem::fuzz::byte_choices& f) : f_(f) {}

  std::string module() {
    std::string head = "HloModule fuzz";
    const bool scheduled = f_.flag();
    if (scheduled) head += ", is_scheduled=true";
    std::vector<gen_shape> params;
    const int np = f_.in_range(0, 3);
    for (int k = 0; k < np; ++k) params.push_back(shape(1));
    std::string entry = computation("main", params, nullptr, 0, true);
    if (!params.empty() && f_.flag() && !entry_root_.tuple && entry_root_.text == params[0].text) {
      head += ", input_output_alias={ {}: (0, {}, may-alias) }";
    }
    return head + "\n\n" + callees_ + entry;
  }

 private:
  // Bounded text keeps each execution fast under ASan (10^6 executions in one run): cost grows
  // with the positions of a module, which a long tuple shape multiplies on every line.
  static constexpr std::size_t max_module_text = 2000;
  static constexpr std::size_t max_tuple_text = 120;

  xlamem::fuzz::byte_choices& f_;
  std::string callees_;          // computations called by what was generated so far
  std::size_t enclosing_text_ = 0;  // text of the unfinished computations that call this one
  int next_comp_ = 0;
  gen_shape entry_root_;

  gen_shape array() {
    static constexpr const char* types[] = {"f32", "bf16", "s32", "pred", "s8", "f64", "u8", "f16"};
    gen_shape s;
    s.text = types[f_.in_range<int>(0, 7)];
    const int rank = f_.in_range(0, 3);
    s.text += '[';
    for (int d = 0; d < rank; ++d) {
      if (d) s.text += ',';
      s.text += std::to_string(f_.flag() ? f_.in_range(1, 8) : f_.in_range(0, 300));
    }
    s.text += ']';
    const int layout = f_.in_range(0, 3);
    if (layout >= 2) {
      s.text += '{';
      for (int d = rank - 1; d >= 0; --d) s.text += std::to_string(d) + (d ? "," : "");
      if (layout == 3) s.text += ":S(1)";
      s.text += '}';
    }
    return s;
  }
  gen_shape shape(int depth) {
    if (depth < 3 && f_.in_range(0, 4) == 0) {
      gen_shape t;
      t.tuple = true;
      const int n = f_.in_range(1, 3);
      t.text = "(";
      for (int k = 0; k < n; ++k) {
        t.elements.push_back(shape(depth + 1));
        t.text += (k ? ", " : "") + t.elements.back().text;
      }
      t.text += ")";
      if (t.text.size() <= max_tuple_text) return t;
    }
    return array();
  }
  static gen_shape pred() { return {"pred[]", {}, false}; }

  struct value {
    std::string name;
    gen_shape shape;
  };

  /// A computation with these parameters; when `want` is set its root has that shape (loop
  /// bodies, branches), else it is the last instruction.
  std::string computation(const std::string& base, const std::vector<gen_shape>& params, const gen_shape* want,
                          int depth, bool entry) {
    const std::string name = base + "." + std::to_string(next_comp_++);
    std::vector<value> vals;
    std::string body;
    auto emit = [&](const gen_shape& s, const std::string& rhs) {
      const std::string n = "v" + std::to_string(vals.size());
      body += "  " + n + " = " + s.text + " " + rhs + "\n";
      vals.push_back({n, s});
      return vals.size() - 1;
    };
    for (std::size_t k = 0; k < params.size(); ++k) emit(params[k], "parameter(" + std::to_string(k) + ")");
    const int steps = f_.in_range(1, depth == 0 ? 10 : 5);
    // Bounded text: what is finished, what the callers have so far, and this body.
    const std::size_t outer = enclosing_text_;
    for (int step = 0; step < steps && f_.remaining() > 0 && callees_.size() + outer + body.size() < max_module_text;
         ++step) {
      enclosing_text_ = outer + body.size();  // what a computation called from this step sees
      // A copy: `emit` appends to `vals`, which would leave a reference dangling.
      auto pick = [&]() -> value { return vals[f_.in_range<std::size_t>(0, vals.size() - 1)]; };
      const int op = vals.empty() ? 0 : f_.in_range(0, 13);
      switch (op) {
        case 0: emit(array(), "constant(0)"); break;
        case 1: {  // elementwise
          const value a = pick();
          if (a.shape.tuple) break;
          const value b = pick();
          if (!b.shape.tuple && b.shape.text == a.shape.text) emit(a.shape, "add(" + a.name + ", " + b.name + ")");
          else emit(a.shape, "negate(" + a.name + ")");
          break;
        }
        case 2: {  // tuple
          const int n = f_.in_range(1, 3);
          gen_shape t;
          t.tuple = true;
          t.text = "(";
          std::string ops;
          for (int k = 0; k < n; ++k) {
            const value e = pick();
            t.elements.push_back(e.shape);
            t.text += (k ? ", " : "") + e.shape.text;
            ops += (k ? ", " : "") + e.name;
          }
          t.text += ")";
          if (t.text.size() > max_tuple_text) break;  // tuples of tuples grow exponentially
          emit(t, "tuple(" + ops + ")");
          break;
        }
        case 3: {  // get-tuple-element, or its compact form as an operand
          const value t = pick();
          if (!t.shape.tuple) break;
          const auto k = f_.in_range<std::size_t>(0, t.shape.elements.size() - 1);
          const gen_shape e = t.shape.elements[k];
          if (f_.flag()) emit(e, "get-tuple-element(" + t.name + "), index=" + std::to_string(k));
          else emit(e, "copy(" + t.name + "#" + std::to_string(k) + ")");
          break;
        }
        case 4: {  // copy or bitcast
          const value a = pick();
          emit(a.shape, (f_.flag() || a.shape.tuple ? "copy(" : "bitcast(") + a.name + ")");
          break;
        }
        case 5: {  // copy-start / copy-done
          const value a = pick();
          if (a.shape.tuple) break;
          gen_shape cs{"(" + a.shape.text + ", " + a.shape.text + ", u32[])", {a.shape, a.shape, {"u32[]", {}, false}}, true};
          const auto s = emit(cs, "copy-start(" + a.name + ")");
          emit(a.shape, "copy-done(" + vals[s].name + ")");
          break;
        }
        case 6: {  // in-place dynamic-update-slice
          const value a = pick();
          if (a.shape.tuple) break;
          emit(a.shape, "dynamic-update-slice(" + a.name + ", " + a.name + ")");
          break;
        }
        case 7: {  // custom-call updating operand 0 in place
          const value a = pick();
          emit(a.shape, "custom-call(" + a.name + "), custom_call_target=\"fuzz\", output_to_operand_aliasing={{}: (0, {})}");
          break;
        }
        case 8:    // fusion
        case 9: {  // call
          if (depth >= 3) break;
          std::vector<gen_shape> ps;
          std::string ops;
          const int n = f_.in_range(1, 3);
          for (int k = 0; k < n; ++k) {
            const value a = pick();
            ps.push_back(a.shape);
            ops += (k ? ", " : "") + a.name;
          }
          const bool fusion = op == 8;
          gen_shape root;
          const std::string callee = computation(fusion ? "fused" : "callee", ps, nullptr, depth + 1, false);
          root = last_root_;
          callees_ += callee;
          if (fusion) emit(root, "fusion(" + ops + "), kind=kLoop, calls=" + last_name_);
          else emit(root, "call(" + ops + "), to_apply=" + last_name_);
          break;
        }
        case 10: {  // while
          if (depth >= 3) break;
          const value init = pick();
          const gen_shape s = init.shape;
          callees_ += computation("body", {s}, &s, depth + 1, false);
          const std::string body_name = last_name_;
          const gen_shape p = pred();
          callees_ += computation("cond", {s}, &p, depth + 1, false);
          emit(s, "while(" + init.name + "), condition=" + last_name_ + ", body=" + body_name);
          break;
        }
        case 11: {  // conditional
          if (depth >= 3) break;
          const int branches = f_.in_range(1, 3);
          const gen_shape out = shape(1);
          std::string ops, names;
          for (int k = 0; k < branches; ++k) {
            const value a = pick();
            callees_ += computation("branch", {a.shape}, &out, depth + 1, false);
            ops += ", " + a.name;
            names += (k ? ", " : "") + last_name_;
          }
          const auto sel = emit(branches == 1 || f_.flag() ? pred() : gen_shape{"s32[]", {}, false}, "constant(0)");
          if (vals[sel].shape.text == "pred[]" && branches != 2) {
            emit(out, "conditional(" + vals[sel].name + ops + "), branch_computations={" + names + "}");
          } else if (vals[sel].shape.text == "pred[]") {
            const auto comma = names.find(", ");
            emit(out, "conditional(" + vals[sel].name + ops + "), true_computation=" + names.substr(0, comma) +
                          ", false_computation=" + names.substr(comma + 2));
          } else {
            emit(out, "conditional(" + vals[sel].name + ops + "), branch_computations={" + names + "}");
          }
          break;
        }
        case 12: {  // async-start of a wrapped computation, and its async-done
          if (depth >= 3) break;
          const value a = pick();
          callees_ += computation("wrapped", {a.shape}, nullptr, depth + 1, false);
          const gen_shape out = last_root_;
          gen_shape st{"((" + a.shape.text + "), " + out.text + ", s32[])", {}, true};
          st.elements = {gen_shape{"(" + a.shape.text + ")", {a.shape}, true}, out, gen_shape{"s32[]", {}, false}};
          const auto s = emit(st, "async-start(" + a.name + "), calls=" + last_name_);
          emit(out, "async-done(" + vals[s].name + ")");
          break;
        }
        default: {  // broadcast / reshape to a new array shape
          const value a = pick();
          if (a.shape.tuple) break;
          emit(array(), (f_.flag() ? "broadcast(" : "reshape(") + a.name + ")");
          break;
        }
      }
    }
    // Root.
    std::string root_text;
    gen_shape root_shape;
    if (want != nullptr) {
      root_shape = *want;
      root_text = build(vals, body, *want, emit);
    } else if (vals.empty()) {
      root_shape = array();
      emit(root_shape, "constant(0)");
      root_text = vals.back().name;
    } else {
      root_shape = vals.back().shape;
      root_text = vals.back().name;
    }
    // Mark the root: rename the line defining it.
    const std::string marker = "  " + root_text + " = ";
    const auto at = body.rfind(marker);
    body.insert(at + 2, "ROOT ");
    last_root_ = root_shape;
    last_name_ = name;
    if (entry) entry_root_ = root_shape;
    return (entry ? "ENTRY " : "") + name + " {\n" + body + "}\n\n";
  }

  /// Emits instructions that give a value of shape `s` (from a value of that shape, else built
  /// from constants and tuples); @returns its name.
  template <class Emit>
  std::string build(std::vector<value>& vals, std::string& body, const gen_shape& s, Emit& emit) {
    (void)body;
    for (std::size_t k = vals.size(); k-- > 0;) {
      if (vals[k].shape.text == s.text && f_.flag()) {
        return vals[emit(s, s.tuple ? "copy(" + vals[k].name + ")" : "negate(" + vals[k].name + ")")].name;
      }
    }
    if (!s.tuple) return vals[emit(s, "constant(0)")].name;
    std::string ops;
    for (std::size_t k = 0; k < s.elements.size(); ++k) ops += (k ? ", " : "") + build(vals, body, s.elements[k], emit);
    return vals[emit(s, "tuple(" + ops + ")")].name;
  }

  gen_shape last_root_;
  std::string last_name_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace xlamem;
  xlamem::fuzz::byte_choices f(data, size);
  generator g(f);
  const std::string text = g.module();
  auto m = hlo::parse_module(text, "generated.hlo");
  fuzz::require(m.has_value(), "a generated module reads", (m ? std::string() : m.error().message()) + "\n" + text);
  // Half the inputs are planned with XLA:GPU's sharing rules (the last byte decides).
  if (size > 0 && (data[size - 1] & 1) != 0) m->backend = hlo::xla_backend::gpu;
  for (const char* solver : {"xla", "heuristic"}) {
    buffer_assignment_options o;
    o.solver = *find_solver(solver);
    auto a = buffer_assignment<hlo::module>::run(*m, o);
    if (!a) {
      fuzz::require_good_error(a.error(), "");
      continue;
    }
    auto ok = a->validate(*m);
    fuzz::require(ok.has_value(), "the plan validates", (ok ? std::string() : ok.error().message()) + "\n" + text);
  }
  auto copy = *m;
  auto changed = propagate_memory_spaces(copy);
  if (changed) {
    auto again = hlo::parse_module(hlo::to_string(copy), "propagated.hlo");
    fuzz::require(again.has_value(), "a propagated module prints and reads back", again ? std::string() : again.error().message());
  }
  return 0;
}
