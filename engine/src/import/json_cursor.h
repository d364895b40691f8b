// A pull reader for the large JSON files jobs leave behind (profiler traces, Flight
// Recorder dumps): the caller walks the document key by key and takes only what it
// needs, so nothing else is ever decoded or stored.
//
// Why not the scenario reader (scenario/json.h)? It builds a tree that remembers every
// value's line, column and pointer: ideal for a 4 MiB scenario, far too slow and large
// for a thousand ranks' dumps of a gigabyte together. This cursor keeps only the byte
// offset; line and column are counted from the start of the text when, and only when,
// there is an error to report.
//
// It accepts strict RFC 8259 JSON (and a leading UTF-8 byte order mark), and fails on
// syntax errors, NaN/Infinity, invalid UTF-8 in strings, and nesting deeper than 64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "collscope/result.h"

namespace collscope::job {

// Thrown inside the readers and turned into an Error at their edge.
struct ReadFailure {
  std::string id;  // "import.parse", "import.bad_field", ...
  std::string message;
  std::string hint;
  std::size_t offset;   // byte offset in the text the error points at
  std::string pointer;  // JSON Pointer, when the reader knows it
};

class Cursor {
 public:
  enum class Type : std::uint8_t { object, array, string, number, boolean, null };

  explicit Cursor(std::string_view text);

  // The type of the next value (skips white space); fails at the end of the text.
  Type peek();
  std::size_t offset() const { return static_cast<std::size_t>(p_ - begin_); }

  // Objects: begin_object(), then next_member(key) until it returns false.
  void begin_object();
  bool next_member(std::string_view& key);
  // Arrays: begin_array(), then next_item() until it returns false.
  void begin_array();
  bool next_item();

  // Values. Each fails (import.bad_field at the value, naming `what`) on another type.
  std::string_view string(const char* what);  // valid until the next string is read
  double number(const char* what);
  std::int64_t integer(const char* what);  // a whole number that fits 64 bits
  bool boolean(const char* what);
  void null();
  void skip();  // any value, however nested

  // After the document: only white space may follow.
  void finish();

  // The pointer readers attach to their errors.
  std::string pointer;

  [[noreturn]] void fail(const std::string& id, const std::string& message, const std::string& hint,
                         std::size_t at) const;
  [[noreturn]] void syntax(const std::string& message) const;
  [[noreturn]] void wrong_type(const char* what, const char* expected) const;

 private:
  void ws();
  void expect(char c, const char* what);
  std::string_view read_string();
  void read_escape(std::string& out);
  std::uint32_t hex4();
  void read_utf8(std::string& out);
  std::string_view number_text();
  void enter();
  void leave() { --depth_; }

  const char* begin_;
  const char* p_;
  const char* end_;
  int depth_ = 0;
  // After begin_object/begin_array: whether the first member/item is still to come.
  bool first_ = false;
  std::string scratch_, key_scratch_;
  std::string* into_ = &scratch_;
};

// "12:7" for a byte offset: 1-based line and column (columns count UTF-8 characters).
struct LineCol {
  int line = 1, col = 1;
};
LineCol line_col(std::string_view text, std::size_t offset);

// A ReadFailure as an Error about `file`.
Error to_error(const ReadFailure& f, std::string_view text, const std::string& file);

}  // namespace collscope::job
