// A small JSON reader that remembers where everything came from.
//
// Scenario errors point at the exact line and column of the offending key or value
// and name its JSON Pointer ("/program/3/root"), so the reader keeps, for every
// value and every object key, its 1-based line and column and its pointer.
// General-purpose JSON libraries drop that information once parsing is done,
// which is why scenarios are read with this recursive-descent parser instead.
//
// What it accepts is strict RFC 8259 JSON, plus a leading UTF-8 byte order mark.
// It rejects, each with a precise location:
//   scenario.parse          syntax errors (saying what was expected), NaN/Infinity,
//                           comments, invalid UTF-8, lone surrogates in \u escapes
//   scenario.duplicate_key  the same key twice in one object (naming the first line)
//   scenario.too_deep       arrays/objects nested deeper than kMaxJsonDepth
//
// Columns count characters (UTF-8 code points) from the start of the line, so they
// match what an editor shows for ASCII and for accented text alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collscope/result.h"

namespace collscope::json {

inline constexpr int kMaxJsonDepth = 64;

struct Member;

struct Value {
  enum class Kind : std::uint8_t { null, boolean, number, string, array, object };

  Kind kind = Kind::null;
  bool boolean = false;
  std::string text;              // string: the decoded string; number: the literal as written
  double number = 0;             // number: its value as a double (may be +-inf when huge)
  bool integer_literal = false;  // number: written without fraction or exponent
  std::vector<Value> items;      // array
  std::vector<Member> members;   // object, in the order written

  int line = 0, col = 0;  // where the value starts (1-based)
  std::string pointer;    // JSON Pointer of the value ("" = the document)

  bool is_object() const { return kind == Kind::object; }
  bool is_array() const { return kind == Kind::array; }
  bool is_string() const { return kind == Kind::string; }
  bool is_number() const { return kind == Kind::number; }
  bool is_boolean() const { return kind == Kind::boolean; }

  // The member named `key`, or nullptr.
  const Member* find(std::string_view key) const;
};

struct Member {
  std::string key;
  int line = 0, col = 0;  // where the key's opening quote is
  Value value;
};

// What both JSON readers (this one and import's cursor) share: the character a
// one-letter escape (\n, \", ...) stands for, 0 for any other letter; and a code point
// appended as UTF-8.
char simple_escape(char e);
void append_utf8(std::string& out, std::uint32_t cp);

// Parses a whole document. `file` only labels error locations.
Result<Value> parse(std::string_view text, const std::string& file);

// Escapes one reference token for a JSON Pointer ("a/b" -> "a~1b", "m~n" -> "m~0n").
std::string escape_pointer_token(std::string_view token);

// A string from the user as an error message shows it: in double quotes, with
// quotes, backslashes and control characters escaped as in JSON (so a message stays
// on one line), and cut after about `max_chars` characters with "...".
std::string quote(std::string_view s, std::size_t max_chars = 48);
// A number literal as written, cut the same way ("1e999", "123456...").
std::string literal(const Value& v, std::size_t max_chars = 32);

// "string \"4\"", "number 2.5", "boolean true", "null", "array", "object": how error
// messages name a value the user wrote.
std::string describe(const Value& v);
// "string", "number", ...
std::string_view kind_name(Value::Kind k);

// Integer view of a number: written as an integer literal, or as a fraction/exponent
// whose value as written is a whole number (4.0, 1e3). Decided on the digits, never on
// the rounded double: 1e-400, 5e-324 and 4.00000000000000000001 are not integers.
struct IntegerValue {
  enum class Status : std::uint8_t { ok, not_integer, too_large, too_small };
  Status status = Status::not_integer;
  std::int64_t value = 0;    // when ok and signed fits
  std::uint64_t uvalue = 0;  // when ok and non-negative
  bool negative = false;
};
// Interprets `v` (a number) as an integer that fits in int64 or, when non-negative, uint64.
IntegerValue to_integer(const Value& v);

}  // namespace collscope::json
