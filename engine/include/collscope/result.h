// Errors as values. Every failure that crosses the engine's API is an Error with a
// stable id ("scenario.unknown_key"), a location when there is one, a message and
// a hint that says what to do. Exceptions may be used inside the engine but are
// caught at the API edge.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace collscope {

// Exit codes of the collscope binary (docs/ARCHITECTURE.md, "Errors").
enum class ExitCode : int { ok = 0, wrong_result = 1, bad_input = 2, backend_failure = 3 };

struct Location {
  std::string file;     // empty when the input did not come from a file
  int line = 0;         // 1-based; 0 = unknown
  int col = 0;          // 1-based; 0 = unknown
  std::string pointer;  // JSON Pointer ("/program/3/root"); empty = none
};

struct Error {
  std::string id;       // stable, e.g. "scenario.unknown_key"
  std::string message;  // what is wrong
  std::string hint;     // what to do (may be empty)
  Location where;
  ExitCode exit = ExitCode::bad_input;

  // error[scenario.unknown_key] scenarios/x.json:12:5 /program/3: unknown key "rot" (did you mean "root"?)
  std::string format() const;
};

Error make_error(std::string id, std::string message, std::string hint = {}, Location where = {},
                 ExitCode exit = ExitCode::bad_input);

template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() { return std::get<0>(v_); }
  const T& operator*() const { return std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Status(Unit{}); }

}  // namespace collscope
