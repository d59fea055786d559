// SPDX-License-Identifier: Apache-2.0
/// @file
/// Memory properties as empty tag types, in the spirit of CCCL `cuda::mr`: a resource declares a
/// property with a hidden friend `get_property(const R&, Tag) noexcept {}`, code asks with
/// `has_property<R, Tag>`, and adaptors inherit their upstream's properties through
/// `forward_properties<Self, Upstream>`.
///
/// What the compiler cannot check: a declared property is a promise about every pointer the
/// resource returns (host_accessible: dereferenceable on the host; device_accessible: usable by
/// device kernels; pinned: page-locked, usable for asynchronous DMA; executable: may hold machine
/// code once its protection allows it).
#pragma once

namespace xlamem {

/// Memory the host CPU may read and write directly.
struct host_accessible {};
/// Memory device kernels may read and write directly.
struct device_accessible {};
/// Page-locked host memory, valid as the host side of asynchronous device copies.
struct pinned {};
/// Memory that may hold machine code (after its protection is set to read+execute).
struct executable {};

/// True when `Resource` declares `Property` through `get_property(const Resource&, Property)`,
/// found by argument-dependent lookup (usually a hidden friend).
template <class Resource, class Property>
concept has_property = requires(const Resource& r, const Property& p) {
  get_property(r, p);
};

/// Base class for adaptors: declares every property `Upstream` declares, for `Self`.
/// `class my_adaptor : public forward_properties<my_adaptor<U>, U> { ... };`
/// @tparam Self the adaptor (the class that derives from this).
/// @tparam Upstream the wrapped resource type.
template <class Self, class Upstream>
struct forward_properties {
  template <class Property>
  requires has_property<Upstream, Property>
  friend constexpr void get_property(const Self&, const Property&) noexcept {}
};

}  // namespace xlamem
