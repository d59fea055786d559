// SPDX-License-Identifier: Apache-2.0
/// @file
/// `named_mapper_registry<Mapper>`: one mapper per region name, made on first use by a factory
/// registered for that name (or by a fallback factory for every name). It replaces XLA's
/// process-global JIT memory-mapper registry with an object the user owns: no global state, and
/// the mappers live exactly as long as the registry. `xlamem/llvm/jit_memory_mapper_registry.hpp`
/// instantiates it for LLVM's `SectionMemoryManager::MemoryMapper`.
///
/// Thread safety: every member function may be called from any number of threads at once. A
/// factory runs under the registry's lock (as in XLA), so each name's mapper is made exactly once;
/// a factory must therefore not call back into the same registry.
/// Ownership: the registry owns the mappers it made; pointers it hands out stay valid until the
/// registry is destroyed (which must come after every JIT memory manager that uses them).
#pragma once

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xlamem/error.hpp"

namespace xlamem {

/// A registry of mapper factories by region name that makes and keeps one mapper per name.
/// @tparam Mapper the mapper type handed out (often an abstract base class).
template <class Mapper>
class named_mapper_registry {
 public:
  using mapper_type = Mapper;
  /// Makes the mapper for a region; gets the region name. Returning null is an error.
  using factory_type = std::function<std::unique_ptr<Mapper>(std::string_view region)>;

  named_mapper_registry() = default;
  named_mapper_registry(const named_mapper_registry&) = delete;
  named_mapper_registry& operator=(const named_mapper_registry&) = delete;

  /// Registers `factory` for region `name`.
  /// @returns `invalid_argument` for an empty name or factory, `already_exists` when `name`
  ///          already has a factory.
  [[nodiscard]] result<void> register_factory(std::string name, factory_type factory) {
    if (name.empty()) {
      return result<void>(errc::invalid_argument, "mapper registry: a region name must not be empty");
    }
    if (!factory) {
      return result<void>(errc::invalid_argument,
                          "mapper registry: the factory for region '" + name + "' is empty");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, inserted] = factories_.try_emplace(std::move(name), std::move(factory));
    if (!inserted) {
      return result<void>(errc::already_exists, "mapper registry: region '" + it->first +
                                                    "' already has a factory");
    }
    return {};
  }

  /// Registers `factory` for every region name without a factory of its own (XLA's single
  /// getter). @returns `invalid_argument` for an empty factory, `already_exists` when a fallback
  /// is already set.
  [[nodiscard]] result<void> register_fallback_factory(factory_type factory) {
    if (!factory) {
      return result<void>(errc::invalid_argument, "mapper registry: the fallback factory is empty");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (fallback_) {
      return result<void>(errc::already_exists, "mapper registry: a fallback factory is already set");
    }
    fallback_ = std::move(factory);
    return {};
  }

  /// The mapper for region `name`, made by its factory on first use; the same pointer for the
  /// same name ever after.
  /// @returns the mapper, `not_found` when neither a factory for `name` nor a fallback is
  ///          registered (the message lists the registered names), or `internal` when the
  ///          factory threw or returned null (the name is then retried on the next call).
  [[nodiscard]] result<Mapper*> try_get(std::string_view name) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = mappers_.find(name); it != mappers_.end()) return it->second.get();
    const factory_type* factory = nullptr;
    if (auto it = factories_.find(name); it != factories_.end()) {
      factory = &it->second;
    } else if (fallback_) {
      factory = &fallback_;
    } else {
      std::string known;
      for (const auto& [n, f] : factories_) {
        known += known.empty() ? "'" : ", '";
        known += n;
        known += "'";
      }
      return make_error(errc::not_found,
                        "mapper registry: no factory for region '" + std::string(name) +
                            "' and no fallback (registered: " +
                            (known.empty() ? std::string("none") : known) + ")");
    }
    std::unique_ptr<Mapper> made;
    try {
      made = (*factory)(name);
    } catch (const std::exception& e) {
      return make_error(errc::internal, "mapper registry: the factory for region '" +
                                            std::string(name) + "' threw: " + e.what());
    } catch (...) {
      return make_error(errc::internal, "mapper registry: the factory for region '" +
                                            std::string(name) + "' threw");
    }
    if (!made) {
      return make_error(errc::internal, "mapper registry: the factory for region '" +
                                            std::string(name) + "' returned null");
    }
    Mapper* p = made.get();
    mappers_.emplace(std::string(name), std::move(made));
    return p;
  }

  /// Like `try_get`, but null on any failure, so a caller can fall back to its default mapper
  /// (LLVM's, for a JIT memory manager). Never throws.
  [[nodiscard]] Mapper* find(std::string_view name) noexcept {
    try {
      auto r = try_get(name);
      return r ? *r : nullptr;
    } catch (...) {
      return nullptr;
    }
  }

  /// True when `name` has a factory of its own.
  [[nodiscard]] bool has_factory(std::string_view name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return factories_.find(name) != factories_.end();
  }

  /// True when a fallback factory is set.
  [[nodiscard]] bool has_fallback() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<bool>(fallback_);
  }

  /// Region names with a factory of their own, sorted.
  [[nodiscard]] std::vector<std::string> registered_names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> names;
    names.reserve(factories_.size());
    for (const auto& [n, f] : factories_) names.push_back(n);
    return names;
  }

  /// Region names whose mapper has been made, sorted.
  [[nodiscard]] std::vector<std::string> created_names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> names;
    names.reserve(mappers_.size());
    for (const auto& [n, m] : mappers_) names.push_back(n);
    return names;
  }

  /// The number of mappers made so far.
  [[nodiscard]] std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return mappers_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, factory_type, std::less<>> factories_;
  factory_type fallback_;
  std::map<std::string, std::unique_ptr<Mapper>, std::less<>> mappers_;
};

}  // namespace xlamem
