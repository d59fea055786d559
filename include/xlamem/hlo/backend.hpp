// SPDX-License-Identifier: Apache-2.0
/// @file
/// XLA's compilers as planning presets: whose buffer rules the graph model applies to a module
/// (`xla_backend`, set on `hlo::module::backend`), the alignment of temporaries, and which
/// memory spaces' temporaries may use another space's heap. `xla_cpu` and `xla_gpu` are plain
/// values; `find_backend` reads them by name (`xlamem plan --backend`, the Python package).
/// Applying a preset to a plan is `report/plan_report.hpp`'s `planning_options`.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "xlamem/error.hpp"
#include "xlamem/name_table.hpp"

namespace xlamem::hlo {

/// Which XLA compiler's buffer rules the graph model applies to a module. Not part of the HLO
/// text: whoever plans the module says where it runs.
/// - `cpu`: XLA:CPU, whose rules are XLA's generic ones (a plain `AliasInfo`).
/// - `gpu`: XLA:GPU on NVIDIA (`NVPTXAliasInfo`): fusions share an operand's buffer by the GPU
///   fusion rules, all-reduce and collective-broadcast work in place, cublasLt's bias operand C
///   may become the result, and a reshape is a no-op when in-place pairs are traced through a
///   fusion (`hlo/gpu_aliasing.hpp`; docs/xla-gpu-buffer-assignment.md has the rules and their
///   sources).
enum class xla_backend : std::uint8_t { cpu, gpu };

/// A colour pair (buffer colour, allocation colour): temporaries of the first colour may fill
/// free gaps of the second colour's heap.
using color_pair = std::pair<std::int64_t, std::int64_t>;

/// How one XLA compiler assigns buffers.
struct backend_preset {
  static constexpr std::string_view kind = "backend";
  std::string_view name;                       ///< "cpu", "gpu"
  std::string_view help;                       ///< one line for `--help` and messages
  xla_backend rules = xla_backend::cpu;        ///< the graph model's sharing rules
  std::int64_t alignment = 64;                 ///< of temporaries, bytes
  std::span<const color_pair> can_use_allocation;  ///< cross-colour heap reuse
};

/// XLA:GPU's one cross-colour rule: temporaries of colour 0 may fill free gaps of the colour-1
/// (collective memory) heap (`BufferAssigner::AllowCrossColorReuse`).
inline constexpr std::array<color_pair, 1> xla_gpu_cross_color_reuse{{{0, 1}}};

/// XLA:CPU: the generic rules, 64-byte temporaries.
inline constexpr backend_preset xla_cpu{"cpu", "XLA:CPU's rules", xla_backend::cpu, 64, {}};
/// XLA:GPU on NVIDIA: its fusion sharing rules, in-place all-reduce, 256-byte temporaries
/// (XLA:GPU before mid-2025 used 128), cross-colour reuse of the collective heap.
inline constexpr backend_preset xla_gpu{"gpu", "XLA:GPU's on NVIDIA", xla_backend::gpu, 256,
                                        xla_gpu_cross_color_reuse};

/// The presets by name, the default first.
inline constexpr std::array<backend_preset, 2> backend_presets{xla_cpu, xla_gpu};

/// The preset named `name`, or null.
[[nodiscard]] constexpr const backend_preset* find_backend(std::string_view name) noexcept {
  return name_table<backend_preset>(backend_presets).find(name);
}

/// The preset named `name`, or `errc::invalid_argument`: "unknown backend 'tpu' (expected cpu
/// or gpu)".
[[nodiscard]] inline result<backend_preset> parse_backend(std::string_view name) {
  return name_table<backend_preset>(backend_presets).parse(name);
}

}  // namespace xlamem::hlo
