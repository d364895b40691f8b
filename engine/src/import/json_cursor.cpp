// The pull reader of json_cursor.h.
#include "import/json_cursor.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "scenario/json.h"

namespace collscope::job {

namespace {

constexpr int kMaxDepth = 64;

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

Cursor::Cursor(std::string_view text) : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()) {
  if (text.size() >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) p_ += 3;
}

void Cursor::fail(const std::string& id, const std::string& message, const std::string& hint, std::size_t at) const {
  throw ReadFailure{id, message, hint, at, pointer};
}

void Cursor::syntax(const std::string& message) const {
  fail("import.parse", message, "the file is not valid JSON: was it cut short, or is it another kind of file?",
       offset());
}

void Cursor::wrong_type(const char* what, const char* expected) const {
  const char* got = "something else";
  if (p_ < end_) {
    switch (*p_) {
      case '{':
        got = "an object";
        break;
      case '[':
        got = "an array";
        break;
      case '"':
        got = "a string";
        break;
      case 't':
      case 'f':
        got = "a boolean";
        break;
      case 'n':
        got = "null";
        break;
      default:
        got = "a number";
        break;
    }
  }
  fail("import.bad_field", std::string(what) + " should be " + expected + ", not " + got,
       "the file does not follow the format it claims; was it written by another version or edited by hand?", offset());
}

void Cursor::ws() {
  while (p_ < end_ && is_ws(*p_)) ++p_;
}

void Cursor::expect(char c, const char* what) {
  ws();
  if (p_ >= end_) syntax(std::string("the text ends where ") + what + " was expected");
  if (*p_ != c) syntax(std::string("expected ") + what);
  ++p_;
}

Cursor::Type Cursor::peek() {
  ws();
  if (p_ >= end_) syntax("the text ends where a value was expected");
  switch (*p_) {
    case '{':
      return Type::object;
    case '[':
      return Type::array;
    case '"':
      return Type::string;
    case 't':
    case 'f':
      return Type::boolean;
    case 'n':
      return Type::null;
    default:
      if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) return Type::number;
      if (*p_ == 'N' || *p_ == 'I') syntax("NaN and Infinity are not JSON numbers");
      syntax("expected a value (an object, array, string, number, true, false or null)");
  }
}

void Cursor::enter() {
  if (++depth_ > kMaxDepth)
    fail("import.parse", "the JSON nests deeper than 64 levels", "no profiler, recorder or dump nests this deep",
         offset());
}

void Cursor::begin_object() {
  if (peek() != Type::object) wrong_type("this value", "an object");
  ++p_;
  enter();
  first_ = true;
}

bool Cursor::next_member(std::string_view& key) {
  ws();
  if (p_ >= end_) syntax("the text ends inside an object");
  if (*p_ == '}') {
    ++p_;
    leave();
    first_ = false;
    return false;
  }
  if (!first_) {
    if (*p_ != ',') syntax("expected ',' or '}' after an object member");
    ++p_;
    ws();
    if (p_ < end_ && *p_ == '}') syntax("a trailing comma before '}' is not JSON");
  }
  first_ = false;
  if (p_ >= end_ || *p_ != '"') syntax("expected a member name in double quotes");
  into_ = &key_scratch_;
  key = read_string();
  into_ = &scratch_;
  expect(':', "':' after a member name");
  return true;
}

void Cursor::begin_array() {
  if (peek() != Type::array) wrong_type("this value", "an array");
  ++p_;
  enter();
  first_ = true;
}

bool Cursor::next_item() {
  ws();
  if (p_ >= end_) syntax("the text ends inside an array");
  if (*p_ == ']') {
    ++p_;
    leave();
    first_ = false;
    return false;
  }
  if (!first_) {
    if (*p_ != ',') syntax("expected ',' or ']' after an array item");
    ++p_;
    ws();
    if (p_ < end_ && *p_ == ']') syntax("a trailing comma before ']' is not JSON");
  }
  first_ = false;
  return true;
}

std::string_view Cursor::read_string() {
  // p_ is at the opening quote.
  ++p_;
  const char* start = p_;
  // Fast path: no escapes, no control characters, ASCII only.
  while (p_ < end_) {
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      std::string_view out(start, static_cast<std::size_t>(p_ - start));
      ++p_;
      return out;
    }
    if (c == '\\' || c < 0x20 || c >= 0x80) break;
    ++p_;
  }
  std::string& out = *into_;
  out.assign(start, static_cast<std::size_t>(p_ - start));
  while (true) {
    if (p_ >= end_) syntax("the text ends inside a string");
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      ++p_;
      return out;
    }
    if (c < 0x20) syntax("a control character inside a string must be escaped");
    if (c == '\\') {
      read_escape(out);
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++p_;
      continue;
    }
    read_utf8(out);
  }
}

// p_ is at a backslash: appends what the escape stands for.
void Cursor::read_escape(std::string& out) {
  if (p_ + 1 >= end_) syntax("the text ends inside a string");
  const char e = p_[1];
  p_ += 2;
  if (const char plain = json::simple_escape(e)) {
    out += plain;
    return;
  }
  switch (e) {
    case 'u': {
      std::uint32_t cp = hex4();
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') syntax("a lone surrogate in a \\u escape");
        p_ += 2;
        const std::uint32_t lo = hex4();
        if (lo < 0xDC00 || lo > 0xDFFF) syntax("a lone surrogate in a \\u escape");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        syntax("a lone surrogate in a \\u escape");
      }
      json::append_utf8(out, cp);
      break;
    }
    default:
      syntax("an unknown escape in a string");
  }
}

// The four hexadecimal digits of a \u escape, at p_.
std::uint32_t Cursor::hex4() {
  if (end_ - p_ < 4) syntax("\\u needs four hexadecimal digits");
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const char h = *p_++;
    v <<= 4;
    if (h >= '0' && h <= '9') v |= static_cast<std::uint32_t>(h - '0');
    else if (h >= 'a' && h <= 'f') v |= static_cast<std::uint32_t>(h - 'a' + 10);
    else if (h >= 'A' && h <= 'F') v |= static_cast<std::uint32_t>(h - 'A' + 10);
    else syntax("\\u needs four hexadecimal digits");
  }
  return v;
}

// A UTF-8 sequence at p_: checked, so that what import writes back is valid text.
void Cursor::read_utf8(std::string& out) {
  const auto c = static_cast<unsigned char>(*p_);
  int len = 0;
  std::uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
  else syntax("invalid UTF-8 in a string");
  if (end_ - p_ < len) syntax("invalid UTF-8 in a string");
  for (int i = 1; i < len; ++i) {
    const auto cc = static_cast<unsigned char>(p_[i]);
    if ((cc & 0xC0) != 0x80) syntax("invalid UTF-8 in a string");
    cp = (cp << 6) | (cc & 0x3F);
  }
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    syntax("invalid UTF-8 in a string");
  out.append(p_, static_cast<std::size_t>(len));
  p_ += len;
}

std::string_view Cursor::string(const char* what) {
  if (peek() != Type::string) wrong_type(what, "a string");
  return read_string();
}

std::string_view Cursor::number_text() {
  const char* start = p_;
  if (p_ < end_ && *p_ == '-') ++p_;
  if (p_ >= end_ || !(*p_ >= '0' && *p_ <= '9')) syntax("a malformed number");
  if (*p_ == '0') {
    ++p_;
    if (p_ < end_ && *p_ >= '0' && *p_ <= '9') syntax("numbers do not start with 0");
  } else {
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
  }
  if (p_ < end_ && *p_ == '.') {
    ++p_;
    if (p_ >= end_ || !(*p_ >= '0' && *p_ <= '9')) syntax("a malformed number");
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ >= end_ || !(*p_ >= '0' && *p_ <= '9')) syntax("a malformed number");
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
  }
  return {start, static_cast<std::size_t>(p_ - start)};
}

double Cursor::number(const char* what) {
  if (peek() != Type::number) wrong_type(what, "a number");
  const std::size_t at = offset();
  const auto t = number_text();
  double v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (r.ec != std::errc() || !std::isfinite(v))
    fail("import.bad_field", std::string(what) + " " + std::string(t) + " is out of range",
         "the file does not follow the format it claims", at);
  return v;
}

std::int64_t Cursor::integer(const char* what) {
  if (peek() != Type::number) wrong_type(what, "a whole number");
  const std::size_t at = offset();
  const auto t = number_text();
  std::int64_t v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (r.ptr != t.data() + t.size()) {
    // 12.0 or 1e3 are whole numbers written as floating point (Python's json writes
    // floats for some counters); anything with a fraction is not.
    double d = 0;
    const auto rd = std::from_chars(t.data(), t.data() + t.size(), d);
    if (rd.ec == std::errc() && std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18)
      return static_cast<std::int64_t>(d);
    fail("import.bad_field", std::string(what) + " should be a whole number, not " + std::string(t),
         "the file does not follow the format it claims", at);
  }
  if (r.ec != std::errc())
    fail("import.bad_field", std::string(what) + " " + std::string(t) + " does not fit in 64 bits",
         "the file does not follow the format it claims", at);
  return v;
}

bool Cursor::boolean(const char* what) {
  if (peek() != Type::boolean) wrong_type(what, "true or false");
  if (end_ - p_ >= 4 && std::memcmp(p_, "true", 4) == 0) {
    p_ += 4;
    return true;
  }
  if (end_ - p_ >= 5 && std::memcmp(p_, "false", 5) == 0) {
    p_ += 5;
    return false;
  }
  syntax("expected true or false");
}

void Cursor::null() {
  if (peek() != Type::null || end_ - p_ < 4 || std::memcmp(p_, "null", 4) != 0) syntax("expected null");
  p_ += 4;
}

void Cursor::skip() {
  switch (peek()) {
    case Type::object: {
      begin_object();
      std::string_view k;
      while (next_member(k)) skip();
      return;
    }
    case Type::array:
      begin_array();
      while (next_item()) skip();
      return;
    case Type::string:
      read_string();
      return;
    case Type::number:
      number_text();
      return;
    case Type::boolean:
      boolean("value");
      return;
    case Type::null:
      null();
      return;
  }
}

void Cursor::finish() {
  ws();
  if (p_ != end_) syntax("unexpected text after the end of the JSON document");
}

LineCol line_col(std::string_view text, std::size_t offset) {
  LineCol lc;
  if (offset > text.size()) offset = text.size();
  for (std::size_t i = 0; i < offset; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++lc.line;
      lc.col = 1;
    } else if (c == '\r') {
      // CR LF counts once; a lone CR ends a line too.
      if (i + 1 < offset && text[i + 1] == '\n') continue;
      ++lc.line;
      lc.col = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++lc.col;
    }
  }
  return lc;
}

Error to_error(const ReadFailure& f, std::string_view text, const std::string& file) {
  const auto lc = line_col(text, f.offset);
  return make_error(f.id, f.message, f.hint, Location{file, lc.line, lc.col, f.pointer});
}

}  // namespace collscope::job
