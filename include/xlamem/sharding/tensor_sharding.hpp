// SPDX-License-Identifier: Apache-2.0
/// @file
/// How one array is laid out on a device mesh: per array dimension, the ordered list of mesh
/// axes it is split over (major first, like a JAX PartitionSpec), and the mesh axes over which
/// the value is a pending partial sum (a dot whose contracting dimension was split, before its
/// all-reduce or reduce-scatter; JAX calls such axes "unreduced").
///
/// Shards may be uneven: XLA pads a dimension of size D split t ways to t tiles of ceil(D / t),
/// so a shard's shape and bytes always use the ceiling. `check_sharding` rejects uneven splits
/// unless asked to pad (`uneven_shards::pad`): JAX requires even splits of a jitted function's
/// arguments and results, while XLA pads values inside the program.
///
/// Text forms: `partition_spec` ("P('data', None)") for people and JAX, and `to_hlo_sharding`
/// (`{devices=[2,1,4]<=[8] last_tile_dim_replicate}`) for an HLO module's `sharding=` attribute,
/// with `parse_hlo_sharding` reading that attribute back onto a mesh. Mesh devices are numbered
/// row-major (mesh.hpp), which is what XLA's iota tile assignments `<=[...]` describe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/sharding/mesh.hpp"

namespace xlamem::sharding {

/// The global shape of an array and the bytes of one element.
struct array_shape {
  std::vector<std::int64_t> dims;
  std::int64_t element_bytes = 4;
};

/// One array's layout on a mesh (axes are indices into the mesh).
struct tensor_sharding {
  std::vector<std::vector<std::size_t>> dims;  ///< per array dimension: mesh axes, major first
  std::vector<std::size_t> partial;            ///< axes of pending partial sums, ascending

  /// Every dimension whole on every device.
  [[nodiscard]] static tensor_sharding replicated(std::size_t rank) {
    tensor_sharding s;
    s.dims.resize(rank);
    return s;
  }
  [[nodiscard]] std::size_t rank() const noexcept { return dims.size(); }
  friend bool operator==(const tensor_sharding&, const tensor_sharding&) = default;
};

/// Whether `check_sharding` accepts a dimension its tiles do not divide.
enum class uneven_shards {
  reject,  ///< a dimension must be a multiple of its tile count (JAX's rule for arguments)
  pad,     ///< allowed: shards are ceil(size / tiles), the last ones padded (XLA's rule)
};

/// The number of tiles dimension `d` is cut into (the product of its axes' sizes).
[[nodiscard]] inline std::int64_t tile_count(const tensor_sharding& s, std::size_t d, const device_mesh& mesh) noexcept {
  std::int64_t t = 1;
  for (std::size_t a : s.dims[d]) t *= mesh.size(a);
  return t;
}

namespace detail {

/// "'data'" or "('data', 'model')" for one dimension; "None" when whole.
[[nodiscard]] inline std::string spec_entry(const std::vector<std::size_t>& axes, const device_mesh& mesh) {
  if (axes.empty()) return "None";
  std::string s = axes.size() > 1 ? "(" : "";
  for (std::size_t i = 0; i < axes.size(); ++i) s += (i ? ", '" : "'") + mesh.axis(axes[i]).name + "'";
  return s + (axes.size() > 1 ? ")" : "");
}

/// The message for axis `a` used twice or outside the mesh, if it is.
[[nodiscard]] inline std::optional<std::string> axis_use_error(std::size_t a, std::vector<char>& used,
                                                               const device_mesh& mesh, const std::string& where) {
  if (a >= mesh.axis_count()) {
    return where + " names mesh axis " + std::to_string(a) + ", which mesh " + mesh.to_string() + " does not have";
  }
  if (used[a]) return where + " uses mesh axis '" + mesh.axis(a).name + "' a second time";
  used[a] = 1;
  return std::nullopt;
}

/// What is wrong with a sharding for a shape (`none`: nothing), found without allocating:
/// strategy enumeration asks this of every candidate, most of which are rejected.
struct sharding_defect {
  enum class kind { none, rank, element_bytes, negative, unknown_axis, repeated_axis, uneven, partial_order, too_large };
  kind what = kind::none;
  std::size_t dim = 0;       ///< the dimension (for the per-dimension kinds)
  std::size_t axis = 0;      ///< the mesh axis (unknown or repeated)
  bool in_partial = false;   ///< the axis is one of the partial sums'
  std::int64_t tiles = 0;    ///< the tile count (uneven)
};

/// Whether axis `a` occurs in `s` before dimension `d`'s entry `i` (`d` = rank: before
/// partial-sum entry `p`).
[[nodiscard]] inline bool axis_used_before(const tensor_sharding& s, std::size_t a, std::size_t d, std::size_t i,
                                           std::size_t p) noexcept {
  for (std::size_t e = 0; e < d && e < s.rank(); ++e) {
    for (std::size_t b : s.dims[e]) {
      if (b == a) return true;
    }
  }
  if (d < s.rank()) return std::find(s.dims[d].begin(), s.dims[d].begin() + static_cast<std::ptrdiff_t>(i), a) !=
                           s.dims[d].begin() + static_cast<std::ptrdiff_t>(i);
  return std::find(s.partial.begin(), s.partial.begin() + static_cast<std::ptrdiff_t>(p), a) !=
         s.partial.begin() + static_cast<std::ptrdiff_t>(p);
}

/// The first defect of `s` for `shape` on `mesh`, in the order `check_sharding` reports them.
[[nodiscard]] inline sharding_defect first_defect(const tensor_sharding& s, const array_shape& shape,
                                                  const device_mesh& mesh, uneven_shards uneven) noexcept {
  using k = sharding_defect::kind;
  if (s.rank() != shape.dims.size()) return {k::rank};
  if (shape.element_bytes < 1) return {k::element_bytes};
  double bytes = static_cast<double>(shape.element_bytes);
  for (std::size_t d = 0; d < s.rank(); ++d) {
    if (shape.dims[d] < 0) return {k::negative, d};
    bytes *= static_cast<double>(shape.dims[d]);
    for (std::size_t i = 0; i < s.dims[d].size(); ++i) {
      const std::size_t a = s.dims[d][i];
      if (a >= mesh.axis_count()) return {k::unknown_axis, d, a};
      if (axis_used_before(s, a, d, i, 0)) return {k::repeated_axis, d, a};
    }
    const std::int64_t tiles = tile_count(s, d, mesh);
    if (uneven == uneven_shards::reject && shape.dims[d] % tiles != 0) return {k::uneven, d, 0, false, tiles};
  }
  for (std::size_t p = 0; p < s.partial.size(); ++p) {
    const std::size_t a = s.partial[p];
    if (a >= mesh.axis_count()) return {k::unknown_axis, 0, a, true};
    if (axis_used_before(s, a, s.rank(), 0, p)) return {k::repeated_axis, 0, a, true};
    if (p > 0 && a < s.partial[p - 1]) return {k::partial_order};
  }
  if (bytes > 4.0e18) return {k::too_large};
  return {};
}

}  // namespace detail

/// Ok when `s` can lay out an array of `shape` on `mesh`: one entry per dimension, each mesh
/// axis used at most once (dimensions and partial sums together), every axis in the mesh, and,
/// unless `uneven` is `pad`, every dimension a multiple of its tile count. Errors name the
/// dimension, its size and its axes.
[[nodiscard]] inline result<void> check_sharding(const tensor_sharding& s, const array_shape& shape,
                                                 const device_mesh& mesh, uneven_shards uneven = uneven_shards::reject) {
  using k = detail::sharding_defect::kind;
  const detail::sharding_defect f = detail::first_defect(s, shape, mesh, uneven);
  if (f.what == k::none) return {};
  const auto fail = [](std::string message) { return make_error(errc::invalid_argument, std::move(message)); };
  const std::string where = f.in_partial ? std::string("the partial sums")
                                         : f.dim < shape.dims.size() ? "dimension " + std::to_string(f.dim) + " (size " +
                                                                           std::to_string(shape.dims[f.dim]) + ")"
                                                                     : std::string();
  switch (f.what) {
    case k::rank:
      return fail("a sharding of rank " + std::to_string(s.rank()) + " for an array of rank " +
                  std::to_string(shape.dims.size()));
    case k::element_bytes: return fail("an array's elements need at least 1 byte");
    case k::negative: return fail(where + " is negative");
    case k::unknown_axis:
      return fail(where + " names mesh axis " + std::to_string(f.axis) + ", which mesh " + mesh.to_string() +
                  " does not have");
    case k::repeated_axis: return fail(where + " uses mesh axis '" + mesh.axis(f.axis).name + "' a second time");
    case k::uneven:
      return fail(where + " split over " + detail::spec_entry(s.dims[f.dim], mesh) + " (" + std::to_string(f.tiles) +
                  " tiles) is not a multiple of " + std::to_string(f.tiles));
    case k::partial_order: return fail("the partial-sum axes are not in ascending order");
    case k::too_large: return fail("the array has more than 4e18 bytes");
    case k::none: break;
  }
  return {};
}

/// The shape of one device's shard: ceil(size / tiles) per dimension. @pre `check_sharding`.
[[nodiscard]] inline std::vector<std::int64_t> shard_dims(const tensor_sharding& s, const array_shape& shape,
                                                          const device_mesh& mesh) {
  std::vector<std::int64_t> out(shape.dims.size());
  for (std::size_t d = 0; d < out.size(); ++d) {
    const std::int64_t t = tile_count(s, d, mesh);
    out[d] = (shape.dims[d] + t - 1) / t;
  }
  return out;
}

/// The bytes of one device's shard (padding included). @pre `check_sharding`.
[[nodiscard]] inline std::int64_t shard_bytes(const tensor_sharding& s, const array_shape& shape,
                                              const device_mesh& mesh) {
  std::int64_t bytes = shape.element_bytes;
  for (std::int64_t n : shard_dims(s, shape, mesh)) bytes *= n;
  return bytes;
}

/// How many devices hold the same data: the devices divided by the tiles of every dimension and
/// by the partial-sum axes' sizes (devices along a partial axis hold different addends).
/// @pre `check_sharding` (or at least every axis in the mesh and used once).
[[nodiscard]] inline std::int64_t replication(const tensor_sharding& s, const device_mesh& mesh) noexcept {
  std::int64_t distinct = 1;
  for (std::size_t d = 0; d < s.rank(); ++d) distinct *= tile_count(s, d, mesh);
  for (std::size_t a : s.partial) distinct *= mesh.size(a);
  return mesh.device_count() / distinct;
}

/// The JAX PartitionSpec: "P('data', None)", "P(('data', 'model'))", "P()"; partial-sum axes
/// as JAX's `unreduced`: "P('x', None, unreduced={'y'})". @pre every axis is in the mesh.
[[nodiscard]] inline std::string partition_spec(const tensor_sharding& s, const device_mesh& mesh) {
  std::string out = "P(";
  for (std::size_t d = 0; d < s.rank(); ++d) out += (d ? ", " : "") + detail::spec_entry(s.dims[d], mesh);
  if (!s.partial.empty()) {
    out += s.rank() ? ", unreduced={" : "unreduced={";
    for (std::size_t i = 0; i < s.partial.size(); ++i) out += (i ? ", '" : "'") + mesh.axis(s.partial[i]).name + "'";
    out += "}";
  }
  return out + ")";
}

namespace detail {

/// An iota tile assignment: iota(prod(dims)) reshaped to `dims`, transposed by `perm`.
struct iota_form {
  std::vector<std::int64_t> dims;
  std::vector<std::size_t> perm;
};

/// The form XLA prints: dimensions of size 1 dropped, and dimensions that stay neighbours
/// under the transpose merged into one.
[[nodiscard]] inline iota_form canonical_iota(const iota_form& in) {
  std::vector<std::size_t> renumber(in.dims.size(), 0);  // source dim -> its index among dims > 1
  std::size_t kept = 0;
  for (std::size_t i = 0; i < in.dims.size(); ++i) renumber[i] = in.dims[i] > 1 ? kept++ : kept;
  // Runs p, p+1, ... (after dropping size-1 dims) in the transposed order become one dimension.
  std::vector<std::pair<std::size_t, std::int64_t>> groups;  // (first source dim, merged size)
  std::size_t previous = 0;
  for (std::size_t p : in.perm) {
    if (in.dims[p] == 1) continue;
    if (!groups.empty() && renumber[p] == previous + 1) {
      groups.back().second *= in.dims[p];
    } else {
      groups.emplace_back(renumber[p], in.dims[p]);
    }
    previous = renumber[p];
  }
  std::vector<std::size_t> order(groups.size());  // groups by source position
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return groups[a].first < groups[b].first; });
  iota_form out;
  out.perm.resize(groups.size());
  for (std::size_t r = 0; r < order.size(); ++r) {
    out.dims.push_back(groups[order[r]].second);
    out.perm[order[r]] = r;
  }
  return out;
}

/// The devices of an iota tile assignment, in the order of the transposed array.
[[nodiscard]] inline std::vector<std::int64_t> iota_devices(const iota_form& f) {
  std::int64_t total = 1;
  for (std::int64_t n : f.dims) total *= n;
  std::vector<std::int64_t> source_stride(f.dims.size(), 1);
  for (std::size_t i = f.dims.size(); i-- > 1;) source_stride[i - 1] = source_stride[i] * f.dims[i];
  std::vector<std::int64_t> out(static_cast<std::size_t>(total));
  for (std::int64_t o = 0; o < total; ++o) {
    std::int64_t rest = o, device = 0;
    for (std::size_t k = f.perm.size(); k-- > 0;) {  // digits of o over the transposed dims
      const std::int64_t n = f.dims[f.perm[k]];
      device += (rest % n) * source_stride[f.perm[k]];
      rest /= n;
    }
    out[static_cast<std::size_t>(o)] = device;
  }
  return out;
}

/// The iota form of `s` on `mesh`: the mesh reshaped to its axes, transposed so that each
/// dimension's axes come in order, then the unused axes (the replicated devices of a tile).
[[nodiscard]] inline iota_form sharding_iota(const tensor_sharding& s, const device_mesh& mesh) {
  iota_form f;
  std::vector<char> used(mesh.axis_count(), 0);
  for (const auto& axes : s.dims) {
    for (std::size_t a : axes) {
      f.perm.push_back(a);
      used[a] = 1;
    }
  }
  for (std::size_t a = 0; a < mesh.axis_count(); ++a) {
    f.dims.push_back(mesh.size(a));
    if (!used[a]) f.perm.push_back(a);
  }
  return f;
}

template <class T>
void append_list(std::string& out, const std::vector<T>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
}

}  // namespace detail

/// The HLO `sharding=` attribute text of `s`, as XLA prints it: `{replicated}` when no
/// dimension is split, else `{devices=[t0,...,tn(,r)]<=[dims](T(perm))( last_tile_dim_replicate)}`
/// with the replicated devices as a last tile dimension r when there are any. Errors on partial
/// sums, which an HLO sharding cannot hold, and on an axis outside the mesh or used twice.
[[nodiscard]] inline result<std::string> to_hlo_sharding(const tensor_sharding& s, const device_mesh& mesh) {
  std::vector<char> used(mesh.axis_count(), 0);
  for (std::size_t d = 0; d < s.rank(); ++d) {
    for (std::size_t a : s.dims[d]) {
      if (auto e = detail::axis_use_error(a, used, mesh, "dimension " + std::to_string(d))) {
        return make_error(errc::invalid_argument, *e);
      }
    }
  }
  for (std::size_t a : s.partial) {
    if (auto e = detail::axis_use_error(a, used, mesh, "the partial sums")) return make_error(errc::invalid_argument, *e);
  }
  if (!s.partial.empty()) {
    return make_error(errc::failed_precondition, "sharding " + partition_spec(s, mesh) +
                                                     " holds partial sums, which an HLO sharding cannot express");
  }
  std::vector<std::int64_t> tiles;
  std::int64_t tiled = 1;
  for (std::size_t d = 0; d < s.rank(); ++d) {
    tiles.push_back(tile_count(s, d, mesh));
    tiled *= tiles.back();
  }
  if (tiled == 1) return std::string("{replicated}");
  const std::int64_t replicas = mesh.device_count() / tiled;
  if (replicas > 1) tiles.push_back(replicas);
  const detail::iota_form f = detail::canonical_iota(detail::sharding_iota(s, mesh));
  std::string out = "{devices=[";
  detail::append_list(out, tiles);
  out += "]<=[";
  detail::append_list(out, f.dims);
  out += "]";
  bool identity = true;
  for (std::size_t i = 0; i < f.perm.size(); ++i) identity = identity && f.perm[i] == i;
  if (!identity) {
    out += "T(";
    detail::append_list(out, f.perm);
    out += ")";
  }
  if (replicas > 1) out += " last_tile_dim_replicate";
  return out + "}";
}

namespace detail {

/// A parsed `{devices=...}` attribute: tile dimensions and the device of each tile position.
struct tiled_attribute {
  std::vector<std::int64_t> tiles;
  std::vector<std::int64_t> devices;
  bool last_replicated = false;
};

/// Reads "[a,b,c]" at the front of `text` (advancing it).
[[nodiscard]] inline std::optional<std::vector<std::int64_t>> read_bracket_list(std::string_view& text, char open,
                                                                                char close) {
  if (text.empty() || text.front() != open) return std::nullopt;
  const std::size_t end = text.find(close);
  if (end == std::string_view::npos) return std::nullopt;
  std::vector<std::int64_t> out;
  std::string_view body = text.substr(1, end - 1);
  text.remove_prefix(end + 1);
  while (!body.empty()) {
    const std::size_t comma = body.find(',');
    const auto v = whole_integer(trim(body.substr(0, comma)));
    if (!v) return std::nullopt;
    out.push_back(*v);
    body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
  }
  return out;
}

/// Reads the body of `{devices=...}` (after "devices="): tiles, then `<=[dims]T(perm)` or an
/// explicit device list, then an optional ` last_tile_dim_replicate` (other suffixes: error).
[[nodiscard]] inline result<tiled_attribute> read_tiled(std::string_view body, const std::string& who) {
  tiled_attribute t;
  auto tiles = read_bracket_list(body, '[', ']');
  if (!tiles || tiles->empty()) return make_error(errc::parse_error, who + ": expected [tile dimensions] after 'devices='");
  t.tiles = *tiles;
  if (body.substr(0, 2) == "<=") {
    body.remove_prefix(2);
    auto dims = read_bracket_list(body, '[', ']');
    if (!dims) return make_error(errc::parse_error, who + ": expected [dimensions] after '<='");
    iota_form f{*dims, {}};
    if (body.substr(0, 1) == "T") {
      body.remove_prefix(1);
      auto perm = read_bracket_list(body, '(', ')');
      if (!perm) return make_error(errc::parse_error, who + ": expected (permutation) after 'T'");
      for (std::int64_t p : *perm) f.perm.push_back(static_cast<std::size_t>(p));
    } else {
      f.perm.resize(f.dims.size());
      std::iota(f.perm.begin(), f.perm.end(), std::size_t{0});
    }
    std::vector<std::size_t> sorted = f.perm;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      if (sorted[i] != i || f.dims.size() != sorted.size()) return make_error(errc::parse_error, who + ": bad transpose");
    }
    std::int64_t count = 1;
    for (std::int64_t n : f.dims) {
      if (n < 1 || n > max_mesh_devices || (count *= n) > max_mesh_devices) {
        return make_error(errc::parse_error, who + ": the iota dimensions hold more than " +
                                                 std::to_string(max_mesh_devices) + " devices, or none");
      }
    }
    t.devices = iota_devices(f);
  } else {
    const std::size_t end = body.find_first_of(" }");
    const std::string list = "[" + std::string(body.substr(0, end)) + "]";
    std::string_view view = list;
    auto devices = read_bracket_list(view, '[', ']');
    if (!devices) return make_error(errc::parse_error, who + ": expected '<=[...]' or a device list");
    t.devices = *devices;
    body.remove_prefix(end == std::string_view::npos ? body.size() : end);
  }
  body = trim(body);
  if (body.substr(0, 23) == "last_tile_dim_replicate") {
    t.last_replicated = true;
    body = trim(body.substr(23));
  }
  if (!body.empty() && body.substr(0, 9) != "metadata=") {
    return make_error(errc::unimplemented, who + ": '" + std::string(body) + "' is not supported");
  }
  return t;
}

/// The devices of each tile of the layout `devices` (tile dims then replicas), each sorted.
[[nodiscard]] inline std::vector<std::vector<std::int64_t>> tile_groups(const std::vector<std::int64_t>& devices,
                                                                        std::int64_t replicas) {
  std::vector<std::vector<std::int64_t>> groups(devices.size() / static_cast<std::size_t>(replicas));
  for (std::size_t i = 0; i < devices.size(); ++i) groups[i / static_cast<std::size_t>(replicas)].push_back(devices[i]);
  for (auto& g : groups) std::sort(g.begin(), g.end());
  return groups;
}

/// Looks for axes of `mesh` for dimensions d.. of `candidate` whose layout puts the same devices
/// on each tile as `want`; `budget` bounds the candidates tried.
[[nodiscard]] inline bool match_axes(tensor_sharding& candidate, std::size_t d, std::int64_t left,
                                     std::vector<char>& used, const std::vector<std::int64_t>& tiles,
                                     const std::vector<std::vector<std::int64_t>>& want, const device_mesh& mesh,
                                     std::int64_t& budget) {
  if (--budget < 0) return false;
  if (d == candidate.rank()) {
    const std::int64_t replicas = mesh.device_count() / static_cast<std::int64_t>(want.size());
    return tile_groups(iota_devices(sharding_iota(candidate, mesh)), replicas) == want;
  }
  if (left == 1) return match_axes(candidate, d + 1, d + 1 < tiles.size() ? tiles[d + 1] : 1, used, tiles, want, mesh, budget);
  for (std::size_t a = 0; a < mesh.axis_count(); ++a) {
    if (used[a] || mesh.size(a) == 1 || left % mesh.size(a) != 0) continue;
    used[a] = 1;
    candidate.dims[d].push_back(a);
    if (match_axes(candidate, d, left / mesh.size(a), used, tiles, want, mesh, budget)) return true;
    candidate.dims[d].pop_back();
    used[a] = 0;
  }
  return false;
}

}  // namespace detail

/// Reads an HLO `sharding=` attribute (`{replicated}`, `{devices=[...]<=[...]T(...)}`, an explicit
/// device list, with or without ` last_tile_dim_replicate`) as the sharding of an array of `rank`
/// dimensions on `mesh`. Errors: not parseable (`parse_error`), a form with no PartitionSpec
/// (`{maximal ...}`, `{manual}`, tuples, other `last_tile_dims`: `unimplemented`), a device
/// count other than the mesh's, or a device layout no assignment of mesh axes produces.
[[nodiscard]] inline result<tensor_sharding> parse_hlo_sharding(std::string_view text, std::size_t rank,
                                                                const device_mesh& mesh) {
  const std::string who = "HLO sharding \"" + std::string(text) + "\"";
  std::string_view body = detail::trim(text);
  if (body.size() < 2 || body.front() != '{' || body.back() != '}') {
    return make_error(errc::parse_error, who + ": expected '{...}'");
  }
  body = detail::trim(body.substr(1, body.size() - 2));
  if (body == "replicated" || body.substr(0, 11) == "replicated ") return tensor_sharding::replicated(rank);
  if (body.substr(0, 8) != "devices=") {
    return make_error(errc::unimplemented, who + ": only {replicated} and {devices=...} map to a PartitionSpec");
  }
  auto t = detail::read_tiled(body.substr(8), who);
  if (!t) return t.error();
  std::int64_t total = 1;
  for (std::int64_t n : t->tiles) {
    if (n < 1 || n > max_mesh_devices) return make_error(errc::parse_error, who + ": bad tile dimension");
    total *= n;
    if (total > max_mesh_devices) return make_error(errc::parse_error, who + ": too many devices");
  }
  const std::size_t tiled_rank = t->tiles.size() - (t->last_replicated ? 1 : 0);
  if (tiled_rank != rank) {
    return make_error(errc::invalid_argument, who + " has " + std::to_string(tiled_rank) +
                                                  " tiled dimensions for an array of rank " + std::to_string(rank));
  }
  if (total != mesh.device_count() || static_cast<std::int64_t>(t->devices.size()) != total) {
    return make_error(errc::invalid_argument, who + " places " + std::to_string(t->devices.size()) +
                                                  " devices; mesh " + mesh.to_string() + " has " +
                                                  std::to_string(mesh.device_count()));
  }
  const std::int64_t replicas = t->last_replicated ? t->tiles.back() : 1;
  const auto want = detail::tile_groups(t->devices, replicas);
  tensor_sharding candidate = tensor_sharding::replicated(rank);
  std::vector<char> used(mesh.axis_count(), 0);
  std::int64_t budget = 100000;
  if (detail::match_axes(candidate, 0, rank ? t->tiles[0] : 1, used, t->tiles, want, mesh, budget)) return candidate;
  return make_error(errc::invalid_argument, who + " is no PartitionSpec over the axes of mesh " + mesh.to_string());
}

}  // namespace xlamem::sharding
