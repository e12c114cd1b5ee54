// Error and Expected<T>: the error type of the sandbox library.
//
// sandbox/ must not depend on core/, so it carries its own small error value:
// a kind (mapped onto core::StatusCode by core/sandboxed_runner.cc) and a
// one-line message meant for a user. Neither type throws. Thread-compatible.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace codex::sandbox {

enum class ErrorKind {
  kInvalidArgument,   // empty argv, bad cwd, bad writable root
  kNotFound,          // the program was not found
  kPermissionDenied,  // the program exists but cannot be executed
  kUnavailable,       // a kernel feature the sandbox needs is missing
  kCancelled,         // the caller cancelled the run
  kInternal,          // a system call failed unexpectedly
};

class [[nodiscard]] Error {
 public:
  Error(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }

 private:
  ErrorKind kind_;
  std::string message_;
};

// Either a T or an Error.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Expected(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Error& error() const {
    assert(!ok());
    return std::get<Error>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> v_;
};

// nullopt on success, else the Error: the sandbox library's Status.
using MaybeError = std::optional<Error>;

// "<what>: <strerror(err)>", for messages built after a failed system call.
std::string ErrnoMessage(const std::string& what, int err);

}  // namespace codex::sandbox

// Returns the Error of a MaybeError expression, if any.
#define RETURN_IF_SANDBOX_ERROR(expr)                           \
  do {                                                          \
    ::codex::sandbox::MaybeError codex_sandbox_error_ = (expr); \
    if (codex_sandbox_error_) return *codex_sandbox_error_;     \
  } while (0)

#define CODEX_SANDBOX_CONCAT_INNER(a, b) a##b
#define CODEX_SANDBOX_CONCAT(a, b) CODEX_SANDBOX_CONCAT_INNER(a, b)

// `ASSIGN_OR_RETURN_SANDBOX(auto x, MakeX());` binds the value of an
// Expected<T> or returns its Error.
#define ASSIGN_OR_RETURN_SANDBOX(lhs, expr) \
  CODEX_SANDBOX_ASSIGN_IMPL(CODEX_SANDBOX_CONCAT(codex_sandbox_expected_, __LINE__), lhs, expr)
#define CODEX_SANDBOX_ASSIGN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.error();              \
  lhs = std::move(tmp).value()
