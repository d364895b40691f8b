// Writing trace events as JSON text, key by key, without building a tree (a trace
// of 100k transfers has half a million events): integers with to_chars, times from
// integer nanoseconds as microseconds with at most three decimals.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace collscope::trace {

using Ns = std::int64_t;  // times are kept in integer nanoseconds so that touching slices touch exactly

inline void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}
inline void append_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// Microseconds with at most three decimals, written from integer nanoseconds: exact,
// and much faster than formatting doubles.
inline void append_us(std::string& out, Ns ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  append_int(out, ns / 1000);
  const int frac = static_cast<int>(ns % 1000);
  if (frac == 0) return;
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  std::size_t len = 4;
  while (digits[len - 1] == '0') --len;
  out.append(digits, len);
}

// Appends one JSON object to a string key by key, without building a tree: a trace
// of 100k transfers has half a million events. Keys are literals of this file; `str`
// values must need no escaping (text composed here from literals and numbers); user
// text goes through quoted() and `raw`.
class ObjectText {
 public:
  explicit ObjectText(std::string& out) : out_(out) { out_ += '{'; }
  ObjectText& raw(std::string_view key, std::string_view json_text) {
    put_key(key);
    out_ += json_text;
    return *this;
  }
  ObjectText& str(std::string_view key, std::string_view plain) {
    put_key(key);
    out_ += '"';
    out_ += plain;
    out_ += '"';
    return *this;
  }
  ObjectText& num(std::string_view key, std::int64_t v) {
    put_key(key);
    append_int(out_, v);
    return *this;
  }
  ObjectText& unum(std::string_view key, std::uint64_t v) {
    put_key(key);
    append_uint(out_, v);
    return *this;
  }
  // Puts the key and hands out the string for a value written in place.
  std::string& value(std::string_view key) {
    put_key(key);
    return out_;
  }
  ObjectText& time(std::string_view key, Ns ns) {
    put_key(key);
    append_us(out_, ns);
    return *this;
  }
  ObjectText& open(std::string_view key) {
    put_key(key);
    out_ += '{';
    first_ = true;
    return *this;
  }
  ObjectText& close() {
    out_ += '}';
    first_ = false;
    return *this;
  }
  void end() { out_ += '}'; }

 private:
  void put_key(std::string_view key) {
    if (!first_) out_ += ',';
    first_ = false;
    out_ += '"';
    out_ += key;
    out_ += "\":";
  }
  std::string& out_;
  bool first_ = true;
};

}  // namespace collscope::trace
