// SPDX-License-Identifier: Apache-2.0
/// @file
/// What collectives cost on a machine model, and what moving one value from one sharding to
/// another costs.
///
/// One axis of n devices, link (alpha, bw), each device holding an operand of S bytes (ring
/// algorithms; docs/autoshard.md derives them):
///   all-gather      (n-1) alpha + (n-1) S / bw           sends (n-1) S        (result n S)
///   reduce-scatter  (n-1) alpha + (n-1)/n S / bw         sends (n-1)/n S      (result S/n)
///   all-reduce      reduce-scatter + all-gather of its result: twice the above
///   all-to-all      (n-1) alpha + (n-1)/n S / bw         sends (n-1)/n S      (pairwise exchange)
///   permute         alpha + S / bw                       sends S
/// Over several axes the collective runs hierarchically, one axis after another, each stage on
/// the bytes it then holds: an all-gather gathers the slowest axis first (while the data are
/// smallest), a reduce-scatter scatters it last, an all-reduce is the reduce-scatter then the
/// all-gather, an all-to-all sums its axes, and a permute crosses the slowest axis once.
/// Axes of size 1 cost nothing.
///
/// `resharding` decides per mesh axis what a value must do to go from one `tensor_sharding` to
/// another, and runs the moves in the order that keeps the bytes small: local slices first
/// (free), then reduce-scatters, all-to-alls, all-reduces, and all-gathers last.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/sharding/mesh.hpp"
#include "xlamem/sharding/tensor_sharding.hpp"

namespace xlamem::sharding {

/// The collectives XLA inserts.
enum class collective_kind { all_gather, reduce_scatter, all_reduce, all_to_all, collective_permute };

/// The name as in HLO: "all-gather", "reduce-scatter", ...
[[nodiscard]] constexpr std::string_view to_string(collective_kind k) noexcept {
  switch (k) {
    case collective_kind::all_gather: return "all-gather";
    case collective_kind::reduce_scatter: return "reduce-scatter";
    case collective_kind::all_reduce: return "all-reduce";
    case collective_kind::all_to_all: return "all-to-all";
    case collective_kind::collective_permute: return "collective-permute";
  }
  return "unknown";
}

/// The time of one collective and the bytes each device sends in it.
struct collective_cost {
  double seconds = 0;
  double bytes_sent = 0;
  collective_cost& operator+=(const collective_cost& o) noexcept {
    seconds += o.seconds;
    bytes_sent += o.bytes_sent;
    return *this;
  }
};

namespace detail {

/// Ok when `axes` are distinct axes of `mesh` and `bytes` is a size.
[[nodiscard]] inline result<void> check_collective(const machine_model& machine, const device_mesh& mesh,
                                                   std::span<const std::size_t> axes, double bytes) {
  if (auto ok = check_machine(machine, mesh); !ok) return ok;
  if (!(bytes >= 0 && bytes < 1e300)) return make_error(errc::invalid_argument, "a collective of a negative or infinite size");
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] >= mesh.axis_count()) {
      return make_error(errc::invalid_argument, "a collective over axis " + std::to_string(axes[i]) + ", which mesh " +
                                                    mesh.to_string() + " does not have");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (axes[j] == axes[i]) {
        return make_error(errc::invalid_argument, "a collective names axis '" + mesh.axis(axes[i]).name + "' twice");
      }
    }
  }
  return {};
}

/// `axes` without those of size 1, ordered by bandwidth (slowest first when `slowest_first`),
/// into `order` (reused: pricing runs millions of times while a problem is built). An
/// insertion sort: a handful of axes, equal bandwidths kept in the given order.
inline void stage_order(const machine_model& machine, const device_mesh& mesh, std::span<const std::size_t> axes,
                        bool slowest_first, std::vector<std::size_t>& order) {
  const auto before = [&](std::size_t x, std::size_t y) {
    return slowest_first ? machine.links[x].bandwidth < machine.links[y].bandwidth
                         : machine.links[x].bandwidth > machine.links[y].bandwidth;
  };
  order.clear();
  for (std::size_t a : axes) {
    if (mesh.size(a) == 1) continue;
    order.push_back(a);
    for (std::size_t k = order.size() - 1; k > 0 && before(order[k], order[k - 1]); --k) std::swap(order[k], order[k - 1]);
  }
}

/// Hierarchical all-gather (`gather`) or reduce-scatter of `bytes` per device.
[[nodiscard]] inline collective_cost staged(const machine_model& machine, const device_mesh& mesh,
                                            std::span<const std::size_t> axes, double bytes, bool gather,
                                            std::vector<std::size_t>& order) {
  collective_cost c;
  stage_order(machine, mesh, axes, gather, order);
  for (std::size_t a : order) {
    const double n = static_cast<double>(mesh.size(a));
    const axis_link& link = machine.links[a];
    const double sent = gather ? (n - 1) * bytes : (n - 1) / n * bytes;
    c.seconds += (n - 1) * link.latency + sent / link.bandwidth;
    c.bytes_sent += sent;
    bytes = gather ? bytes * n : bytes / n;
  }
  return c;
}

}  // namespace detail

/// The cost of `kind` over mesh `axes` on `machine`, each device holding an operand of `bytes`
/// (the formulas of this file's comment). Errors name an axis outside the mesh or used twice,
/// a machine that does not fit the mesh, or a negative size.
[[nodiscard]] inline result<collective_cost> collective(collective_kind kind, const machine_model& machine,
                                                        const device_mesh& mesh, std::span<const std::size_t> axes,
                                                        double bytes);

namespace detail {

/// `collective` for arguments known to be valid (`check_collective` holds); `order` is scratch.
[[nodiscard]] inline collective_cost collective_of(collective_kind kind, const machine_model& machine,
                                                   const device_mesh& mesh, std::span<const std::size_t> axes,
                                                   double bytes, std::vector<std::size_t>& order) {
  switch (kind) {
    case collective_kind::all_gather: return detail::staged(machine, mesh, axes, bytes, true, order);
    case collective_kind::reduce_scatter: return detail::staged(machine, mesh, axes, bytes, false, order);
    case collective_kind::all_reduce: {
      collective_cost c = detail::staged(machine, mesh, axes, bytes, false, order);
      double group = 1;
      for (std::size_t a : axes) group *= static_cast<double>(mesh.size(a));
      c += detail::staged(machine, mesh, axes, bytes / group, true, order);
      return c;
    }
    case collective_kind::all_to_all: {
      collective_cost c;
      detail::stage_order(machine, mesh, axes, true, order);
      for (std::size_t a : order) {
        const double n = static_cast<double>(mesh.size(a));
        c.seconds += (n - 1) * machine.links[a].latency + (n - 1) / n * bytes / machine.links[a].bandwidth;
        c.bytes_sent += (n - 1) / n * bytes;
      }
      return c;
    }
    case collective_kind::collective_permute: {
      detail::stage_order(machine, mesh, axes, true, order);
      if (order.empty()) return collective_cost{};
      double latency = 0;
      for (std::size_t a : order) latency = std::max(latency, machine.links[a].latency);
      return collective_cost{latency + bytes / machine.links[order.front()].bandwidth, bytes};
    }
  }
  return {};
}

}  // namespace detail

inline result<collective_cost> collective(collective_kind kind, const machine_model& machine, const device_mesh& mesh,
                                          std::span<const std::size_t> axes, double bytes) {
  if (auto ok = detail::check_collective(machine, mesh, axes, bytes); !ok) return ok.error();
  switch (kind) {
    case collective_kind::all_gather:
    case collective_kind::reduce_scatter:
    case collective_kind::all_reduce:
    case collective_kind::all_to_all:
    case collective_kind::collective_permute: {
      std::vector<std::size_t> order;
      return detail::collective_of(kind, machine, mesh, axes, bytes, order);
    }
  }
  return make_error(errc::internal, "unknown collective kind");
}

/// One collective of a resharding: over which axes, on how many bytes per device.
struct collective_step {
  collective_kind kind = collective_kind::all_gather;
  std::vector<std::size_t> axes;
  double bytes_in = 0;    ///< each device's operand
  double bytes_sent = 0;  ///< what each device sends
  double seconds = 0;
};

/// What moving a value between two shardings costs, and the collectives that do it.
struct resharding_cost {
  double seconds = 0;
  double bytes_sent = 0;            ///< per device, over all steps
  std::vector<collective_step> steps;  ///< in the order they run
};

namespace detail {

/// What one mesh axis does to a value in one sharding.
struct axis_role {
  enum kind_type { none, split, partial } kind = none;
  std::size_t dim = 0;   ///< the dimension it splits
  bool kept = false;     ///< it splits the same dimension after the same axes in both shardings
};

/// The role of every axis in `s` into `roles` (one per mesh axis); `other` decides whether a
/// split is kept.
inline void axis_roles(const tensor_sharding& s, const tensor_sharding& other, std::size_t axes,
                       std::vector<axis_role>& roles) {
  roles.assign(axes, axis_role{});
  for (std::size_t d = 0; d < s.rank(); ++d) {
    const auto& mine = s.dims[d];
    const auto& theirs = other.dims[d];
    std::size_t common = 0;
    while (common < mine.size() && common < theirs.size() && mine[common] == theirs[common]) ++common;
    for (std::size_t i = 0; i < mine.size(); ++i) roles[mine[i]] = {axis_role::split, d, i < common};
  }
  for (std::size_t a : s.partial) roles[a].kind = axis_role::partial;
}

/// What one pricing needs besides its result, kept between calls so that building a problem
/// of millions of edges allocates nothing per edge.
struct resharding_scratch {
  std::vector<axis_role> src, dst;
  std::vector<std::size_t> slices, scatters, exchanges, reduces, gathers, order;
};

/// `resharding` for shardings and a machine known to be valid (`check_sharding` with `pad`,
/// `check_machine`); the collectives' steps recorded only when `with_steps`.
[[nodiscard]] inline result<resharding_cost> resharding_of(const array_shape& shape, const tensor_sharding& from,
                                                           const tensor_sharding& to, const device_mesh& mesh,
                                                           const machine_model& machine, bool with_steps,
                                                           resharding_scratch& scratch) {
  auto& [src, dst, slices, scatters, exchanges, reduces, gathers, order] = scratch;
  detail::axis_roles(from, to, mesh.axis_count(), src);
  detail::axis_roles(to, from, mesh.axis_count(), dst);
  for (auto* v : {&slices, &scatters, &exchanges, &reduces, &gathers}) v->clear();
  // The bytes a device holds as the steps run: the source's shard (padding included), divided
  // by the pieces each device's part is cut into since.
  const double source_bytes = static_cast<double>(shard_bytes(from, shape, mesh));
  double pieces = 1;
  for (std::size_t a = 0; a < mesh.axis_count(); ++a) {
    const auto& f = src[a];
    const auto& t = dst[a];
    if (t.kind == detail::axis_role::partial) {
      if (f.kind != detail::axis_role::partial) {
        return make_error(errc::invalid_argument, "resharding " + partition_spec(from, mesh) + " to " +
                                                      partition_spec(to, mesh) + ": a value cannot become a partial sum over '" +
                                                      mesh.axis(a).name + "'");
      }
      continue;
    }
    if (mesh.size(a) == 1) continue;  // nothing to move
    if (f.kind == detail::axis_role::partial) {
      (t.kind == detail::axis_role::split ? scatters : reduces).push_back(a);
    } else if (f.kind == detail::axis_role::split && !f.kept) {
      (t.kind == detail::axis_role::split && t.dim != f.dim ? exchanges : gathers).push_back(a);
    } else if (f.kind == detail::axis_role::none && t.kind == detail::axis_role::split) {
      slices.push_back(a);
    }
  }
  resharding_cost out;
  // Bindings are not captured (clang before 16 refuses): the lambda reads the scratch by name.
  const auto run = [&](collective_kind kind, const std::vector<std::size_t>& axes) {
    if (axes.empty()) return;
    const double bytes_in = source_bytes / pieces;
    const collective_cost c = detail::collective_of(kind, machine, mesh, axes, bytes_in, scratch.order);
    out.seconds += c.seconds;
    out.bytes_sent += c.bytes_sent;
    if (with_steps) out.steps.push_back(collective_step{kind, axes, bytes_in, c.bytes_sent, c.seconds});
  };
  for (std::size_t a : slices) pieces *= static_cast<double>(mesh.size(a));
  run(collective_kind::reduce_scatter, scatters);
  for (std::size_t a : scatters) pieces *= static_cast<double>(mesh.size(a));
  run(collective_kind::all_to_all, exchanges);  // the same bytes, cut another way
  run(collective_kind::all_reduce, reduces);
  run(collective_kind::all_gather, gathers);
  return out;
}

}  // namespace detail

/// The cost of moving a value of `shape` from sharding `from` to sharding `to` on `mesh` and
/// `machine`. Per mesh axis: a split kept (same dimension, same axes before it) or a partial sum
/// kept costs nothing; not split -> split is a local slice (free); split -> not split, or a split
/// whose dimension keeps it but after other axes, is an all-gather (then a free slice); split d ->
/// split d' is an all-to-all; partial -> split is a reduce-scatter; partial -> not split an
/// all-reduce; anything -> partial is invalid. Axes of one kind run as one collective, in the
/// order slices, reduce-scatters, all-to-alls, all-reduces, all-gathers, each stage on the bytes
/// a device holds then: the source's shard (padding included) scaled by the pieces cut or joined
/// since (the steps between two shardings are not shardings of their own, so they are not padded).
[[nodiscard]] inline result<resharding_cost> resharding(const array_shape& shape, const tensor_sharding& from,
                                                        const tensor_sharding& to, const device_mesh& mesh,
                                                        const machine_model& machine) {
  for (const auto* s : {&from, &to}) {
    if (auto ok = check_sharding(*s, shape, mesh, uneven_shards::pad); !ok) {
      return ok.error().with_context(s == &from ? "the source sharding" : "the target sharding");
    }
  }
  if (auto ok = check_machine(machine, mesh); !ok) return ok.error();
  detail::resharding_scratch scratch;
  return detail::resharding_of(shape, from, to, mesh, machine, true, scratch);
}

}  // namespace xlamem::sharding
