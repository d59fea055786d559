// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the HLO text reader on arbitrary bytes. A refused input gets a bounded
// message naming fuzz.hlo:line:column; an accepted one prints to text that reads back to the
// same module, and the dataflow analysis runs on it without crashing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "xlamem/hlo/graph_model.hpp"
#include "xlamem/hlo/printer.hpp"
#include "xlamem/hlo/reader.hpp"
#include "xlamem/passes/dataflow.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace xlamem;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = hlo::parse_module(text, "fuzz.hlo");
  if (!m) {
    fuzz::require_good_error(m.error(), "fuzz.hlo:");
    return 0;
  }
  const std::string printed = hlo::to_string(*m);
  auto again = hlo::parse_module(printed, "printed.hlo");
  fuzz::require(again.has_value(), "a printed module reads back", again ? std::string() : again.error().message());
  fuzz::require(hlo::to_string(*again) == printed, "printing is stable across a round trip", printed.substr(0, 2000));
  (void)dataflow_analysis<hlo::module>::run(*m, dataflow_options{false, true});
  return 0;
}
