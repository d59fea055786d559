// SPDX-License-Identifier: Apache-2.0
/// @file
/// The ways one operation of a program can run on a device mesh, and what each costs.
///
/// A strategy gives every mesh axis of size above 1 to one letter of the operation
/// (program.hpp) or to none. A dimension whose letter holds axes is split over them (in mesh
/// order, the first axis major); an operand without the letter is replicated over them. Every
/// split dimension must be a multiple of its tiles (no padding: JAX requires it of arguments and
/// results, and padding inside would make the memory figures lie), and a `whole_dimension`
/// takes no axis. Axes held by a letter that the result lacks (a contracting or reduced
/// dimension) leave partial sums, which the strategy finishes at once: by an all-reduce over
/// those axes, or, as a second strategy, by a reduce-scatter onto the largest result dimension
/// they divide. Results never stay partial, so what flows along the program's edges is always a
/// `tensor_sharding` an HLO module can state.
///
/// Cost of a strategy on one device, in seconds (machine model, sharding/mesh.hpp): its compute,
/// the larger of its FLOPs over the devices that split the work (the product of all the axes it
/// uses; replicated axes repeat the work) at the machine's rate and the bytes it reads and writes
/// at the memory bandwidth (a roofline); plus the collective that finishes its partial sums.
///
/// An operation with many letters on a mesh with many axes has many strategies ((letters + 1)
/// to the power of the axes); beyond `max_strategies` the cheapest are kept (compute and
/// collective time, then the smaller result shard), the replicated strategy always among them.
/// An operation without operands (an argument, a constant) costs nothing to run: its layout is
/// paid for on its edges.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/sharding/collectives.hpp"
#include "xlamem/sharding/mesh.hpp"
#include "xlamem/sharding/program.hpp"
#include "xlamem/sharding/tensor_sharding.hpp"

namespace xlamem::sharding {

/// One way to run an operation.
struct op_strategy {
  tensor_sharding output;                  ///< how the result is laid out
  std::vector<tensor_sharding> operands;   ///< how each operand must be laid out (one per use)
  double compute_seconds = 0;              ///< the roofline time of one device's share
  std::vector<collective_step> finish;     ///< the collectives that finish partial sums
  double finish_seconds = 0;               ///< their time
  std::int64_t partial_bytes = 0;          ///< the partial sums' buffer before they are finished (0: none)
  [[nodiscard]] double seconds() const noexcept { return compute_seconds + finish_seconds; }
};

/// The default cap on strategies per operation.
inline constexpr std::size_t default_max_strategies = 64;

namespace detail {

/// A sharding of an array whose dimensions carry `letters`, under the axis-to-letter map
/// `owner` (axis -> letter or -1): each dimension gets its letter's axes in mesh order.
[[nodiscard]] inline tensor_sharding sharding_of(const std::vector<std::int32_t>& letters,
                                                 const std::vector<std::int32_t>& owner) {
  tensor_sharding s = tensor_sharding::replicated(letters.size());
  for (std::size_t d = 0; d < letters.size(); ++d) {
    if (letters[d] == whole_dimension) continue;
    for (std::size_t a = 0; a < owner.size(); ++a) {
      if (owner[a] == letters[d]) s.dims[d].push_back(a);
    }
  }
  return s;
}

/// Whether `s` lays out `shape`: no axis used twice (a letter named by two dimensions of one
/// array), and unless `uneven` is `pad` every dimension a multiple of its tiles.
[[nodiscard]] inline bool splits(const tensor_sharding& s, const array_shape& shape, const device_mesh& mesh,
                                 uneven_shards uneven) {
  return detail::first_defect(s, shape, mesh, uneven).what == detail::sharding_defect::kind::none;
}

/// The roofline time of a device's share of `op` under `st` (its shardings set).
[[nodiscard]] inline double compute_time(const program_op& op, const op_strategy& st, const std::vector<std::int32_t>& owner,
                                         const device_mesh& mesh, const machine_model& machine) {
  if (op.operands.empty()) return 0;
  double splitting = 1;
  for (std::size_t a = 0; a < owner.size(); ++a) {
    if (owner[a] >= 0) splitting *= static_cast<double>(mesh.size(a));
  }
  double bytes = static_cast<double>(shard_bytes(st.output, op.shape, mesh));
  for (std::size_t k = 0; k < op.operands.size(); ++k) {
    bytes += static_cast<double>(shard_bytes(st.operands[k], op.operand_shapes[k], mesh));
  }
  return std::max(op.flops / splitting / machine.flops, bytes / machine.memory_bandwidth);
}

/// Adds `kind` over `axes` on `bytes` per device to `st`'s finishing collectives.
inline void add_finish(op_strategy& st, collective_kind kind, const std::vector<std::size_t>& axes, double bytes,
                       const device_mesh& mesh, const machine_model& machine) {
  const auto c = collective(kind, machine, mesh, axes, bytes);
  if (!c) return;  // axes and machine were checked by the caller
  st.finish.push_back({kind, axes, bytes, c->bytes_sent, c->seconds});
  st.finish_seconds += c->seconds;
}

/// The strategies of one axis-to-letter map: none when a split is uneven; one, or two when
/// partial sums can also be reduce-scattered.
inline void strategies_of_map(const program_op& op, const std::vector<std::int32_t>& owner, const device_mesh& mesh,
                              const machine_model& machine, uneven_shards uneven, std::vector<op_strategy>& out) {
  op_strategy st;
  st.output = sharding_of(op.output_letters, owner);
  if (!splits(st.output, op.shape, mesh, uneven)) return;
  for (std::size_t k = 0; k < op.operands.size(); ++k) {
    st.operands.push_back(sharding_of(op.operand_letters[k], owner));
    if (!splits(st.operands[k], op.operand_shapes[k], mesh, uneven)) return;
  }
  std::vector<std::size_t> partial;  // axes whose letter the result lacks
  for (std::size_t a = 0; a < owner.size(); ++a) {
    if (owner[a] < 0) continue;
    if (std::find(op.output_letters.begin(), op.output_letters.end(), owner[a]) == op.output_letters.end()) {
      partial.push_back(a);
    }
  }
  st.compute_seconds = compute_time(op, st, owner, mesh, machine);
  if (partial.empty()) {
    out.push_back(std::move(st));
    return;
  }
  st.partial_bytes = shard_bytes(st.output, op.shape, mesh);
  const auto result_bytes = static_cast<double>(st.partial_bytes);
  // Reduce-scatter onto the largest result dimension (that may be split) the partial axes divide.
  std::int64_t group = 1;
  for (std::size_t a : partial) group *= mesh.size(a);
  std::size_t best = op.shape.dims.size();
  for (std::size_t d = 0; d < op.shape.dims.size(); ++d) {
    if (op.output_letters[d] == whole_dimension) continue;
    if (op.shape.dims[d] % (tile_count(st.output, d, mesh) * group) != 0) continue;
    if (best == op.shape.dims.size() || op.shape.dims[d] > op.shape.dims[best]) best = d;
  }
  if (best < op.shape.dims.size()) {
    op_strategy scattered = st;
    for (std::size_t a : partial) scattered.output.dims[best].push_back(a);
    add_finish(scattered, collective_kind::reduce_scatter, partial, result_bytes, mesh, machine);
    out.push_back(std::move(scattered));
  }
  add_finish(st, collective_kind::all_reduce, partial, result_bytes, mesh, machine);
  out.push_back(std::move(st));
}

}  // namespace detail

/// Every strategy of `op` on `mesh` and `machine` (see the file comment), at most
/// `max_strategies` (>= 1) of them, the replicated one first. With a fixed sharding (which may
/// split unevenly, as XLA pads), only the strategies that produce it, padded splits allowed;
/// when none does (the operation's letters do not allow that split), one strategy that runs
/// the operation replicated and keeps its slice of the result (always correct). Errors name the
/// operation (a fixed sharding that does not fit its array).
[[nodiscard]] inline result<std::vector<op_strategy>> op_strategies(const program_op& op, const device_mesh& mesh,
                                                                    const machine_model& machine,
                                                                    std::size_t max_strategies = default_max_strategies) {
  const std::string who = "operation '" + op.name + "'";
  if (auto ok = check_machine(machine, mesh); !ok) return ok.error();
  if (max_strategies < 1) return make_error(errc::invalid_argument, "at least one strategy per operation is needed");
  if (op.fixed) {
    if (auto ok = check_sharding(*op.fixed, op.shape, mesh, uneven_shards::pad); !ok) {
      return ok.error().with_context(who + "'s own sharding");
    }
  }
  const std::size_t letters = letter_count(op);
  std::vector<std::size_t> free_axes;  // axes of size above 1: the others change nothing
  for (std::size_t a = 0; a < mesh.axis_count(); ++a) {
    if (mesh.size(a) > 1) free_axes.push_back(a);
  }
  std::vector<op_strategy> all;
  std::vector<std::int32_t> owner(mesh.axis_count(), -1);
  // Count through every map of the free axes to {none, letter 0, ..., letter L-1}.
  std::vector<std::size_t> digit(free_axes.size(), 0);
  while (true) {
    for (std::size_t i = 0; i < free_axes.size(); ++i) owner[free_axes[i]] = static_cast<std::int32_t>(digit[i]) - 1;
    detail::strategies_of_map(op, owner, mesh, machine, op.fixed ? uneven_shards::pad : uneven_shards::reject, all);
    std::size_t i = 0;
    while (i < digit.size() && ++digit[i] == letters + 1) digit[i++] = 0;
    if (i == digit.size()) break;
  }
  if (op.fixed) {
    op_strategy replicated = all.front();  // the map of no axes: always there
    std::erase_if(all, [&](const op_strategy& s) { return !(s.output == *op.fixed); });
    if (all.empty()) {
      replicated.output = *op.fixed;  // a local slice of the whole result: free
      all.push_back(std::move(replicated));
    }
  }
  if (all.size() > max_strategies) {
    // Keep the first (replicated when not fixed), then the cheapest.
    std::stable_sort(all.begin() + 1, all.end(), [&](const op_strategy& x, const op_strategy& y) {
      if (x.seconds() != y.seconds()) return x.seconds() < y.seconds();
      return shard_bytes(x.output, op.shape, mesh) < shard_bytes(y.output, op.shape, mesh);
    });
    all.resize(max_strategies);
  }
  return all;
}

}  // namespace xlamem::sharding
