// SPDX-License-Identifier: Apache-2.0
/// @file
/// The device mesh a program is sharded over, and the machine that prices its communication.
///
/// A `device_mesh` is a list of named axes with sizes ("data"=2, "model"=4), like a JAX `Mesh`:
/// devices are numbered row-major over the axes (the last axis varies fastest), as
/// `jax.make_mesh` numbers host devices. `parse_mesh` reads "2x4" or "data=2,model=4".
///
/// A `machine_model` gives each mesh axis an alpha-beta link (a latency per step and the bytes
/// per second one device sends on it) and each device a compute rate and a memory bandwidth.
/// Presets named after real machines (`machine_presets`, figures and sources in
/// docs/autoshard.md) describe the machine as nested levels of consecutive devices (8 GPUs of a
/// host, then hosts); `machine_for` gives each mesh axis the link of the innermost level that
/// holds every group of that axis, so an axis that crosses hosts pays the inter-host link.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"

namespace xlamem::sharding {

/// The most devices a mesh may have (2^20): larger meshes are typos, not machines.
inline constexpr std::int64_t max_mesh_devices = std::int64_t{1} << 20;
/// The most axes a mesh may have.
inline constexpr std::size_t max_mesh_axes = 16;

/// One named mesh axis.
struct mesh_axis {
  std::string name;
  std::int64_t size = 1;
  friend bool operator==(const mesh_axis&, const mesh_axis&) = default;
};

namespace detail {

/// True when `name` is an identifier: [A-Za-z_][A-Za-z0-9_]* (so a PartitionSpec prints it).
[[nodiscard]] inline bool is_axis_name(std::string_view name) noexcept {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

/// `text` without blanks at either end.
[[nodiscard]] inline std::string_view trim(std::string_view text) noexcept {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

/// The decimal integer that is all of `text`, if it is one.
[[nodiscard]] inline std::optional<std::int64_t> whole_integer(std::string_view text) noexcept {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace detail

/// Named axes with sizes; valid by construction (`make` checks).
class device_mesh {
 public:
  /// A mesh of the given axes: names are identifiers and distinct, sizes >= 1, at most
  /// `max_mesh_axes` axes and `max_mesh_devices` devices.
  [[nodiscard]] static result<device_mesh> make(std::vector<mesh_axis> axes) {
    if (axes.empty()) return make_error(errc::invalid_argument, "a mesh needs at least one axis");
    if (axes.size() > max_mesh_axes) {
      return make_error(errc::invalid_argument, "a mesh has " + std::to_string(axes.size()) +
                                                    " axes; at most " + std::to_string(max_mesh_axes) + " are allowed");
    }
    std::int64_t devices = 1;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const mesh_axis& a = axes[i];
      if (!detail::is_axis_name(a.name)) {
        return make_error(errc::invalid_argument, "mesh axis " + std::to_string(i) + " has the name '" + a.name +
                                                      "'; a name is a letter or '_' followed by letters, digits or '_'");
      }
      for (std::size_t j = 0; j < i; ++j) {
        if (axes[j].name == a.name) {
          return make_error(errc::invalid_argument, "mesh axis name '" + a.name + "' appears twice");
        }
      }
      if (a.size < 1) {
        return make_error(errc::invalid_argument,
                          "mesh axis '" + a.name + "' has size " + std::to_string(a.size) + "; sizes are >= 1");
      }
      if (a.size > max_mesh_devices || devices > max_mesh_devices / a.size) {
        return make_error(errc::invalid_argument, "the mesh has more than " + std::to_string(max_mesh_devices) +
                                                      " devices (at axis '" + a.name + "')");
      }
      devices *= a.size;
    }
    device_mesh m;
    m.axes_ = std::move(axes);
    m.devices_ = devices;
    return m;
  }

  [[nodiscard]] std::size_t axis_count() const noexcept { return axes_.size(); }
  [[nodiscard]] const std::vector<mesh_axis>& axes() const noexcept { return axes_; }
  [[nodiscard]] const mesh_axis& axis(std::size_t i) const noexcept { return axes_[i]; }
  [[nodiscard]] std::int64_t size(std::size_t i) const noexcept { return axes_[i].size; }
  [[nodiscard]] std::int64_t device_count() const noexcept { return devices_; }

  /// The devices between neighbours on axis `i`: the product of the sizes of the axes after it.
  [[nodiscard]] std::int64_t stride(std::size_t i) const noexcept {
    std::int64_t s = 1;
    for (std::size_t j = i + 1; j < axes_.size(); ++j) s *= axes_[j].size;
    return s;
  }

  /// The index of the axis called `name`, if there is one.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < axes_.size(); ++i) {
      if (axes_[i].name == name) return i;
    }
    return std::nullopt;
  }

  /// "data=2,model=4" (what `parse_mesh` reads back).
  [[nodiscard]] std::string to_string() const {
    std::string s;
    for (const auto& a : axes_) {
      if (!s.empty()) s += ',';
      s += a.name + "=" + std::to_string(a.size);
    }
    return s;
  }

  friend bool operator==(const device_mesh&, const device_mesh&) = default;

 private:
  device_mesh() = default;
  std::vector<mesh_axis> axes_;
  std::int64_t devices_ = 1;
};

/// The name `parse_mesh` gives axis `i` of a mesh written by sizes only ("2x4"): "x", "y", "z",
/// then "a3", "a4", ...
[[nodiscard]] inline std::string default_axis_name(std::size_t i) {
  static constexpr const char* first[] = {"x", "y", "z"};
  return i < 3 ? std::string(first[i]) : "a" + std::to_string(i);
}

/// Reads a mesh: sizes joined by 'x' ("2x4", "8"; axes named by `default_axis_name`) or
/// name=size pairs joined by ',' ("data=2,model=4"). Blanks around parts are ignored. Errors
/// (`parse_error` for the syntax, `invalid_argument` for sizes and names) quote the bad part.
[[nodiscard]] inline result<device_mesh> parse_mesh(std::string_view text) {
  const std::string whole = "mesh \"" + std::string(text) + "\": ";
  const std::string_view body = detail::trim(text);
  if (body.empty()) return make_error(errc::parse_error, whole + "is empty (write \"2x4\" or \"data=2,model=4\")");
  const bool named = body.find('=') != std::string_view::npos;
  const char separator = named ? ',' : 'x';
  std::vector<mesh_axis> axes;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = body.find(separator, start);
    const std::string_view part = detail::trim(body.substr(start, end == std::string_view::npos ? body.npos : end - start));
    const std::string where = whole + "axis " + std::to_string(axes.size()) + " ('" + std::string(part) + "')";
    if (part.empty()) return make_error(errc::parse_error, where + " is empty");
    std::string_view size_text = part;
    mesh_axis axis;
    if (named) {
      const std::size_t eq = part.find('=');
      if (eq == std::string_view::npos) return make_error(errc::parse_error, where + " is not name=size");
      axis.name = std::string(detail::trim(part.substr(0, eq)));
      size_text = detail::trim(part.substr(eq + 1));
      if (axis.name.empty()) return make_error(errc::parse_error, where + " has no name before '='");
    } else {
      axis.name = default_axis_name(axes.size());
    }
    const auto size = detail::whole_integer(size_text);
    if (!size) return make_error(errc::parse_error, where + ": '" + std::string(size_text) + "' is not a whole number");
    axis.size = *size;
    axes.push_back(std::move(axis));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  auto mesh = device_mesh::make(std::move(axes));
  if (!mesh) return mesh.error().with_context("mesh \"" + std::string(text) + "\"");
  return mesh;
}

/// One link in the alpha-beta model: a step costs `latency` seconds, and one device sends
/// `bandwidth` bytes per second on it (one direction; every link the collective can use on
/// this axis together).
struct axis_link {
  double latency = 0;    ///< seconds per step (alpha)
  double bandwidth = 1;  ///< bytes per second per device, one direction (1 / beta)
  friend bool operator==(const axis_link&, const axis_link&) = default;
};

/// The machine a mesh runs on: one link per mesh axis, the compute rate and memory bandwidth
/// of one device.
struct machine_model {
  std::string name;
  std::vector<axis_link> links;       ///< one per mesh axis, in the mesh's order
  double flops = 1;                   ///< FLOP/s of one device
  double memory_bandwidth = 1;        ///< bytes/s of one device's memory
};

/// Ok when `m` fits `mesh` (one link per axis) and every figure is positive and finite.
[[nodiscard]] inline result<void> check_machine(const machine_model& m, const device_mesh& mesh) {
  // Named only on failure: solvers check a machine once per collective they price.
  const auto who = [&] { return "machine '" + m.name + "'"; };
  if (m.links.size() != mesh.axis_count()) {
    return make_error(errc::invalid_argument, who() + " has " + std::to_string(m.links.size()) + " links for a mesh of " +
                                                  std::to_string(mesh.axis_count()) + " axes (" + mesh.to_string() + ")");
  }
  const auto positive = [](double v) { return v > 0 && v < 1e300; };
  for (std::size_t i = 0; i < m.links.size(); ++i) {
    if (!(m.links[i].latency >= 0 && m.links[i].latency < 1e300) || !positive(m.links[i].bandwidth)) {
      return make_error(errc::invalid_argument, who() + ": the link of axis '" + mesh.axis(i).name +
                                                    "' needs a latency >= 0 and a bandwidth > 0");
    }
  }
  if (!positive(m.flops) || !positive(m.memory_bandwidth)) {
    return make_error(errc::invalid_argument, who() + " needs a compute rate and a memory bandwidth > 0");
  }
  return {};
}

/// One level of a preset machine: blocks of `span` consecutive devices joined by `link`.
struct machine_level {
  std::int64_t span = 1;
  axis_link link;
};

/// A machine named after a real one; its figures are cited in docs/autoshard.md.
struct machine_preset {
  std::string_view name;
  std::string_view description;
  std::vector<machine_level> levels;  ///< innermost first; the last level's span is the device count
  double flops = 1;
  double memory_bandwidth = 1;
  [[nodiscard]] std::int64_t device_count() const noexcept { return levels.back().span; }
};

/// The preset to use when none is named: the 8 host devices JAX makes on a CPU (tests, runners).
inline constexpr std::string_view default_machine_name = "cpu-host-8";

/// The presets, by name. Figures: docs/autoshard.md (with their sources).
[[nodiscard]] inline const std::vector<machine_preset>& machine_presets() {
  // NVLink 4: 900 GB/s per H100 both ways, 450 GB/s one way. NDR: 400 Gb/s = 50 GB/s per GPU.
  static const axis_link nvlink4{2e-6, 450e9};
  static const axis_link ndr{5e-6, 50e9};
  static const std::vector<machine_preset> presets = {
      {"h100-8-nvlink", "one host of 8 NVIDIA H100 SXM joined by NVLink 4 through NVSwitch", {{8, nvlink4}},
       989.4e12, 3.35e12},
      {"h100-2x8-ib",
       "2 hosts of 8 NVIDIA H100 SXM: NVLink 4 inside a host, InfiniBand NDR (one ConnectX-7 per GPU) between hosts",
       {{8, nvlink4}, {16, ndr}}, 989.4e12, 3.35e12},
      {"tpu-v5e-256", "a TPU v5e pod: 256 chips on a 16x16 2-D torus, each mesh axis a ring of the torus (2 ICI ports)",
       {{256, {1e-6, 100e9}}}, 197e12, 819e9},
      {"cpu-host-8", "8 XLA host devices on one CPU socket (--xla_force_host_platform_device_count=8)",
       {{8, {1e-6, 38.4e9}}}, 128e9, 38.4e9},
  };
  return presets;
}

/// The preset called `name`; the error lists the names there are.
[[nodiscard]] inline result<const machine_preset*> find_machine_preset(std::string_view name) {
  std::string names;
  for (const auto& p : machine_presets()) {
    if (p.name == name) return &p;
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  return make_error(errc::not_found, "no machine called '" + std::string(name) + "' (machines: " + names + ")");
}

/// The machine `preset` gives `mesh`: mesh devices take the preset's first devices in order,
/// and each axis gets the link of the innermost level whose blocks hold every group of the axis
/// (a level of span L holds an axis of size n and stride s when L is a multiple of n * s);
/// otherwise the outermost level's. Errors when the mesh has more devices than the machine.
[[nodiscard]] inline result<machine_model> machine_for(const machine_preset& preset, const device_mesh& mesh) {
  if (mesh.device_count() > preset.device_count()) {
    return make_error(errc::invalid_argument, "mesh " + mesh.to_string() + " has " + std::to_string(mesh.device_count()) +
                                                  " devices; machine '" + std::string(preset.name) + "' has " +
                                                  std::to_string(preset.device_count()));
  }
  machine_model m;
  m.name = std::string(preset.name);
  m.flops = preset.flops;
  m.memory_bandwidth = preset.memory_bandwidth;
  for (std::size_t i = 0; i < mesh.axis_count(); ++i) {
    const std::int64_t extent = mesh.size(i) * mesh.stride(i);
    const machine_level* chosen = &preset.levels.back();
    for (const auto& level : preset.levels) {
      if (level.span % extent == 0) {
        chosen = &level;
        break;
      }
    }
    m.links.push_back(chosen->link);
  }
  return m;
}

/// `machine_for` of the preset called `name`.
[[nodiscard]] inline result<machine_model> machine_for(std::string_view name, const device_mesh& mesh) {
  auto preset = find_machine_preset(name);
  if (!preset) return preset.error();
  return machine_for(**preset, mesh);
}

}  // namespace xlamem::sharding
