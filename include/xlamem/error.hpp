// SPDX-License-Identifier: Apache-2.0
/// @file
/// Errors by kind: `errc` codes, an `error` value (code + message), `result<T>` shaped like
/// `std::expected<T, error>`, and the exceptions thrown by throwing APIs (`out_of_memory` is a
/// `std::bad_alloc`). Passes and readers return `result`; `allocate()` throws; `try_` functions
/// return `result` and never throw.
#pragma once

#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "xlamem/config.hpp"

namespace xlamem {

/// Error codes, after the canonical status codes of absl/gRPC that ML runtimes already use.
enum class errc : int {
  invalid_argument = 1,    ///< the caller passed something malformed or impossible
  not_found,               ///< a named thing does not exist
  already_exists,          ///< a named thing exists and must not be created twice
  resource_exhausted,      ///< a bounded resource (pool, limit) has nothing left
  out_of_memory,           ///< the underlying memory source refused
  failed_precondition,     ///< the object is not in a state that allows the call
  out_of_range,            ///< an index or value lies outside what is allowed
  parse_error,             ///< text input is malformed; the message names file:line:column
  unavailable,             ///< a device, driver or service is not there
  deadline_exceeded,       ///< a time limit ran out
  unimplemented,           ///< the operation is not supported by this model or build
  internal,                ///< an invariant of xlamem itself broke (a bug)
};

/// The lowercase name of a code, as it appears in messages: "resource_exhausted".
[[nodiscard]] constexpr std::string_view to_string(errc code) noexcept {
  switch (code) {
    case errc::invalid_argument: return "invalid_argument";
    case errc::not_found: return "not_found";
    case errc::already_exists: return "already_exists";
    case errc::resource_exhausted: return "resource_exhausted";
    case errc::out_of_memory: return "out_of_memory";
    case errc::failed_precondition: return "failed_precondition";
    case errc::out_of_range: return "out_of_range";
    case errc::parse_error: return "parse_error";
    case errc::unavailable: return "unavailable";
    case errc::deadline_exceeded: return "deadline_exceeded";
    case errc::unimplemented: return "unimplemented";
    case errc::internal: return "internal";
  }
  return "unknown";
}

/// An error: what kind it is and a message naming what is wrong and where.
class error {
 public:
  error(errc code, std::string message) : code_(code), message_(std::move(message)) {}

  [[nodiscard]] errc code() const noexcept { return code_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

  /// "code: message", the form printed by tools.
  [[nodiscard]] std::string to_string() const {
    std::string s(xlamem::to_string(code_));
    s += ": ";
    s += message_;
    return s;
  }

  /// A copy with `context` put in front of the message ("while reading x: ...").
  [[nodiscard]] error with_context(std::string_view context) const {
    std::string m(context);
    m += ": ";
    m += message_;
    return error(code_, std::move(m));
  }

  friend bool operator==(const error& a, const error& b) noexcept {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  errc code_;
  std::string message_;
};

/// Thrown by `result::value()` on an error, carrying that error.
class bad_result_access : public std::exception {
 public:
  explicit bad_result_access(error e) : error_(std::move(e)), what_(error_.to_string()) {}
  [[nodiscard]] const error& get() const noexcept { return error_; }
  [[nodiscard]] const char* what() const noexcept override { return what_.c_str(); }

 private:
  error error_;
  std::string what_;
};

/// Thrown by `allocate()` when memory cannot be had. A `std::bad_alloc`, so existing handlers
/// keep working, with a message naming the resource and the request.
class out_of_memory : public std::bad_alloc {
 public:
  explicit out_of_memory(std::string message)
      : message_(std::make_shared<std::string>(std::move(message))) {}
  [[nodiscard]] const char* what() const noexcept override { return message_->c_str(); }

 private:
  std::shared_ptr<const std::string> message_;  // shared: copying an exception must not throw
};

/// Thrown by throwing APIs for errors other than memory exhaustion.
class exception : public std::exception {
 public:
  explicit exception(error e) : error_(std::move(e)), what_(error_.to_string()) {}
  [[nodiscard]] const error& get() const noexcept { return error_; }
  [[nodiscard]] const char* what() const noexcept override { return what_.c_str(); }

 private:
  error error_;
  std::string what_;
};

/// Throws the exception that matches `e`: `out_of_memory` for memory codes, else `exception`.
[[noreturn]] inline void throw_error(const error& e) {
  if (e.code() == errc::out_of_memory || e.code() == errc::resource_exhausted) {
    XLAMEM_THROW(out_of_memory(e.to_string()));
  }
  XLAMEM_THROW(exception(e));
#if !XLAMEM_USE_EXCEPTIONS
  std::abort();
#endif
}

template <class T>
class result;

namespace detail {
template <class T>
struct is_result : std::false_type {};
template <class T>
struct is_result<result<T>> : std::true_type {};
}  // namespace detail

/// `result<void>`: success or an error.
template <>
class [[nodiscard]] result<void> {
 public:
  using value_type = void;
  using error_type = xlamem::error;

  result() = default;
  result(xlamem::error e) : error_(std::make_unique<error_type>(std::move(e))) {}  // NOLINT: implicit
  result(errc code, std::string message)
      : error_(std::make_unique<error_type>(code, std::move(message))) {}
  result(const result& other)
      : error_(other.error_ ? std::make_unique<error_type>(*other.error_) : nullptr) {}
  result(result&&) noexcept = default;
  result& operator=(const result& other) {
    if (this != &other) error_ = other.error_ ? std::make_unique<error_type>(*other.error_) : nullptr;
    return *this;
  }
  result& operator=(result&&) noexcept = default;

  [[nodiscard]] bool has_value() const noexcept { return error_ == nullptr; }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const {
    if (error_) XLAMEM_THROW(bad_result_access(*error_));
  }
  void operator*() const noexcept {}
  /// The error. @pre `!has_value()`.
  [[nodiscard]] const error_type& error() const& noexcept { return *error_; }

  template <class F>
  auto and_then(F&& f) const {
    using R = std::remove_cvref_t<std::invoke_result_t<F>>;
    static_assert(detail::is_result<R>::value, "and_then: the function must return a result");
    if (has_value()) return std::forward<F>(f)();
    return R(*error_);
  }
  template <class F>
  auto transform(F&& f) const {
    using U = std::remove_cvref_t<std::invoke_result_t<F>>;
    if (!has_value()) return result<U>(*error_);
    if constexpr (std::is_void_v<U>) {
      std::forward<F>(f)();
      return result<void>();
    } else {
      return result<U>(std::forward<F>(f)());
    }
  }

 private:
  std::unique_ptr<error_type> error_;  // null on success: a successful result<void> is one pointer
};


/// A value of type `T` or an `error`, shaped like `std::expected<T, error>`.
/// `value()` throws `bad_result_access` on an error; `operator*` requires a value.
template <class T>
class [[nodiscard]] result {
 public:
  using value_type = T;
  using error_type = xlamem::error;

  template <class U = T>
    requires std::is_constructible_v<T, U&&> &&
             (!std::is_same_v<std::remove_cvref_t<U>, result>) &&
             (!std::is_same_v<std::remove_cvref_t<U>, xlamem::error>)
  result(U&& v) : storage_(std::in_place_index<0>, std::forward<U>(v)) {}  // NOLINT: implicit
  result(xlamem::error e) : storage_(std::in_place_index<1>, std::move(e)) {}     // NOLINT: implicit
  result(errc code, std::string message)
      : storage_(std::in_place_index<1>, xlamem::error(code, std::move(message))) {}

  [[nodiscard]] bool has_value() const noexcept { return storage_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  [[nodiscard]] T& value() & {
    check();
    return std::get<0>(storage_);
  }
  [[nodiscard]] const T& value() const& {
    check();
    return std::get<0>(storage_);
  }
  [[nodiscard]] T&& value() && {
    check();
    return std::get<0>(std::move(storage_));
  }

  /// The error. @pre `!has_value()`.
  [[nodiscard]] const xlamem::error& error() const& noexcept { return *std::get_if<1>(&storage_); }

  [[nodiscard]] T& operator*() & noexcept { return *std::get_if<0>(&storage_); }
  [[nodiscard]] const T& operator*() const& noexcept { return *std::get_if<0>(&storage_); }
  [[nodiscard]] T&& operator*() && noexcept { return std::move(*std::get_if<0>(&storage_)); }
  [[nodiscard]] T* operator->() noexcept { return std::get_if<0>(&storage_); }
  [[nodiscard]] const T* operator->() const noexcept { return std::get_if<0>(&storage_); }

  template <class U>
  [[nodiscard]] T value_or(U&& fallback) const& {
    return has_value() ? **this : static_cast<T>(std::forward<U>(fallback));
  }

  /// `f(value)` when there is a value (f returns a `result`), else this error.
  template <class F>
  auto and_then(F&& f) & {
    using R = std::remove_cvref_t<std::invoke_result_t<F, T&>>;
    static_assert(detail::is_result<R>::value, "and_then: the function must return a result");
    if (has_value()) return std::forward<F>(f)(**this);
    return R(error());
  }
  template <class F>
  auto and_then(F&& f) const& {
    using R = std::remove_cvref_t<std::invoke_result_t<F, const T&>>;
    static_assert(detail::is_result<R>::value, "and_then: the function must return a result");
    if (has_value()) return std::forward<F>(f)(**this);
    return R(error());
  }
  template <class F>
  auto and_then(F&& f) && {
    using R = std::remove_cvref_t<std::invoke_result_t<F, T&&>>;
    static_assert(detail::is_result<R>::value, "and_then: the function must return a result");
    if (has_value()) return std::forward<F>(f)(std::move(**this));
    return R(error());
  }

  /// `result<U>` holding `f(value)` when there is a value, else this error.
  template <class F>
  auto transform(F&& f) const& {
    using U = std::remove_cvref_t<std::invoke_result_t<F, const T&>>;
    if (!has_value()) return result<U>(error());
    if constexpr (std::is_void_v<U>) {
      std::forward<F>(f)(**this);
      return result<void>();
    } else {
      return result<U>(std::forward<F>(f)(**this));
    }
  }
  template <class F>
  auto transform(F&& f) && {
    using U = std::remove_cvref_t<std::invoke_result_t<F, T&&>>;
    if (!has_value()) return result<U>(error());
    if constexpr (std::is_void_v<U>) {
      std::forward<F>(f)(std::move(**this));
      return result<void>();
    } else {
      return result<U>(std::forward<F>(f)(std::move(**this)));
    }
  }

  /// This result with `f(error)` as its error; a value passes through.
  template <class F>
  result transform_error(F&& f) && {
    if (has_value()) return std::move(*this);
    return result(xlamem::error(std::forward<F>(f)(error())));
  }

 private:
  void check() const {
    if (!has_value()) XLAMEM_THROW(bad_result_access(error()));
  }
  std::variant<T, xlamem::error> storage_;
};

/// Builds an error result in one expression: `return make_error(errc::parse_error, msg);`.
[[nodiscard]] inline error make_error(errc code, std::string message) {
  return error(code, std::move(message));
}

}  // namespace xlamem
