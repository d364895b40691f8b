// Recursive-descent JSON parser with line/column/pointer for every value (see json.h).
//
// The parser walks the text once. Errors are thrown as a private exception that
// carries a finished collscope::Error and are turned into a Result at the edge
// (parse()), so the grammar functions read straight through without error plumbing.
#include "scenario/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>

namespace collscope::json {

const Member* Value::find(std::string_view key) const {
  for (const auto& m : members)
    if (m.key == key) return &m;
  return nullptr;
}

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string_view kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::null:
      return "null";
    case Value::Kind::boolean:
      return "boolean";
    case Value::Kind::number:
      return "number";
    case Value::Kind::string:
      return "string";
    case Value::Kind::array:
      return "array";
    case Value::Kind::object:
      return "object";
  }
  return "value";
}

std::string quote(std::string_view s, std::size_t max_chars) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  std::size_t chars = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xC0) != 0x80 && chars++ == max_chars) {
      out += "...";
      break;
    }
    switch (b) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (b < 0x20 || b == 0x7F) {
          out += "\\u00";
          out += hex[b >> 4];
          out += hex[b & 15];
        } else {
          out += static_cast<char>(b);
        }
    }
  }
  return out + "\"";
}

std::string literal(const Value& v, std::size_t max_chars) {
  return v.text.size() > max_chars ? v.text.substr(0, max_chars) + "..." : v.text;
}

std::string describe(const Value& v) {
  switch (v.kind) {
    case Value::Kind::null:
      return "null";
    case Value::Kind::boolean:
      return v.boolean ? "boolean true" : "boolean false";
    case Value::Kind::number:
      return "number " + literal(v);
    case Value::Kind::string:
      return "string " + quote(v.text);
    case Value::Kind::array:
      return "array";
    case Value::Kind::object:
      return "object";
  }
  return "value";
}

IntegerValue to_integer(const Value& v) {
  IntegerValue r;
  if (v.kind != Value::Kind::number) return r;
  r.negative = !v.text.empty() && v.text[0] == '-';
  if (v.integer_literal) {
    const char* first = v.text.data();
    const char* last = first + v.text.size();
    if (r.negative) {
      std::int64_t x = 0;
      auto [p, ec] = std::from_chars(first, last, x);
      if (ec != std::errc() || p != last) {
        r.status = IntegerValue::Status::too_small;
        return r;
      }
      r.value = x;
    } else {
      std::uint64_t x = 0;
      auto [p, ec] = std::from_chars(first, last, x);
      if (ec != std::errc() || p != last) {
        r.status = IntegerValue::Status::too_large;
        return r;
      }
      r.uvalue = x;
      r.value = x > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                    ? std::numeric_limits<std::int64_t>::max()
                    : static_cast<std::int64_t>(x);
    }
    if (r.negative && r.value == 0) r.negative = false;  // "-0"
    r.status = IntegerValue::Status::ok;
    return r;
  }
  // 4.0 or 1e3: accept when the value written is a whole number that fits. Decided on
  // the digits as written, not on the double they round to: 1e-400 and 5e-324 round
  // to 0 or to a tiny double, 4.00000000000000000001 rounds to 4, and none of them is
  // an integer.
  std::string_view t = v.text;
  if (r.negative) t.remove_prefix(1);
  const auto e = t.find_first_of("eE");
  std::string_view mant = t.substr(0, e);
  long long exp10 = 0;
  if (e != std::string_view::npos) {
    std::string_view x = t.substr(e + 1);
    const bool eneg = !x.empty() && x[0] == '-';
    if (!x.empty() && (x[0] == '-' || x[0] == '+')) x.remove_prefix(1);
    for (char c : x)
      exp10 = std::min<long long>(exp10 * 10 + (c - '0'), 1000000000LL);  // saturates, far beyond any fit
    if (eneg) exp10 = -exp10;
  }
  std::string digits;
  const auto dot = mant.find('.');
  digits.append(mant.substr(0, dot));
  if (dot != std::string_view::npos) {
    const std::string_view frac = mant.substr(dot + 1);
    digits.append(frac);
    exp10 -= static_cast<long long>(frac.size());
  }
  const auto first = digits.find_first_not_of('0');
  if (first == std::string::npos) {  // 0.0, 0e7, -0.0
    r.negative = false;
    r.status = IntegerValue::Status::ok;
    return r;
  }
  digits.erase(0, first);
  while (digits.back() == '0') digits.pop_back(), ++exp10;
  if (exp10 < 0) return r;  // not_integer: digits remain after the decimal point
  const auto over = r.negative ? IntegerValue::Status::too_small : IntegerValue::Status::too_large;
  if (static_cast<long long>(digits.size()) + exp10 > 20) {
    r.status = over;
    return r;
  }
  std::uint64_t u = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u);
  (void)p;
  if (ec != std::errc()) {
    r.status = over;
    return r;
  }
  for (long long i = 0; i < exp10; ++i) {
    if (u > UINT64_MAX / 10) {
      r.status = over;
      return r;
    }
    u *= 10;
  }
  if (r.negative) {
    if (u > (std::uint64_t{1} << 63)) {
      r.status = over;
      return r;
    }
    r.value = u == (std::uint64_t{1} << 63) ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(u);
  } else {
    r.uvalue = u;
    r.value = u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                  ? std::numeric_limits<std::int64_t>::max()
                  : static_cast<std::int64_t>(u);
  }
  r.status = IntegerValue::Status::ok;
  return r;
}

namespace {

struct Failure {
  Error error;
};

bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is invalid
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto at = [&](std::size_t k) -> int { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : -1; };
  const int b0 = at(0);
  auto in = [](int b, int lo, int hi) { return b >= lo && b <= hi; };
  if (b0 < 0x80) return 1;
  if (in(b0, 0xC2, 0xDF)) return in(at(1), 0x80, 0xBF) ? 2 : 0;
  if (b0 == 0xE0) return in(at(1), 0xA0, 0xBF) && in(at(2), 0x80, 0xBF) ? 3 : 0;
  if (in(b0, 0xE1, 0xEC) || in(b0, 0xEE, 0xEF)) return in(at(1), 0x80, 0xBF) && in(at(2), 0x80, 0xBF) ? 3 : 0;
  if (b0 == 0xED) return in(at(1), 0x80, 0x9F) && in(at(2), 0x80, 0xBF) ? 3 : 0;
  if (b0 == 0xF0) return in(at(1), 0x90, 0xBF) && in(at(2), 0x80, 0xBF) && in(at(3), 0x80, 0xBF) ? 4 : 0;
  if (in(b0, 0xF1, 0xF3)) return in(at(1), 0x80, 0xBF) && in(at(2), 0x80, 0xBF) && in(at(3), 0x80, 0xBF) ? 4 : 0;
  if (b0 == 0xF4) return in(at(1), 0x80, 0x8F) && in(at(2), 0x80, 0xBF) && in(at(3), 0x80, 0xBF) ? 4 : 0;
  return 0;
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The value of a literal too large or too small for a double: +-infinity when its
// magnitude is huge (checked later by whoever needs a finite number), 0 when tiny.
double out_of_range_value(std::string_view t) {
  const bool neg = !t.empty() && t[0] == '-';
  long long exp10 = 0;
  const auto e = t.find_first_of("eE");
  if (e != std::string_view::npos) {
    std::string_view x = t.substr(e + 1);
    const bool eneg = !x.empty() && x[0] == '-';
    if (!x.empty() && (x[0] == '-' || x[0] == '+')) x.remove_prefix(1);
    for (char c : x) exp10 = std::min<long long>(exp10 * 10 + (c - '0'), 1000000000LL);
    if (eneg) exp10 = -exp10;
  }
  std::string_view m = t.substr(neg ? 1 : 0, e == std::string_view::npos ? std::string_view::npos : e - (neg ? 1 : 0));
  const auto dot = m.find('.');
  std::string_view ip = m.substr(0, dot);
  while (!ip.empty() && ip[0] == '0') ip.remove_prefix(1);
  long long mag = 0;
  if (!ip.empty()) {
    mag = static_cast<long long>(ip.size()) - 1 + exp10;
  } else {
    std::string_view fp = dot == std::string_view::npos ? std::string_view{} : m.substr(dot + 1);
    long long zeros = 0;
    while (zeros < static_cast<long long>(fp.size()) && fp[static_cast<std::size_t>(zeros)] == '0') ++zeros;
    mag = -(zeros + 1) + exp10;
  }
  if (mag < 0) return neg ? -0.0 : 0.0;
  return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& file) : s_(text), file_(file) {}

  Value document() {
    check_utf8();
    // A UTF-8 byte order mark is harmless; editors on some systems add it.
    if (s_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
    skip_space();
    if (at_end())
      fail("scenario.parse", "expected a JSON value, got end of file",
           "the file is empty; it should hold one JSON object {...}");
    Value v = value("", 0);
    skip_space();
    if (!at_end())
      fail("scenario.parse", "unexpected " + got() + " after the end of the JSON document",
           "a file holds exactly one JSON value; remove what follows the closing bracket");
    return v;
  }

 private:
  std::string_view s_;
  const std::string& file_;
  std::size_t pos_ = 0;
  int line_ = 1, col_ = 1;

  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }

  // Moves past one byte. col_ is the column of the character at pos_: it counts
  // characters, so continuation bytes of a multi-byte character do not add one.
  // A line ends at "\n", "\r\n" or a lone "\r" (old Mac files): the "\n" of "\r\n"
  // does not start another line.
  void advance() {
    const auto b = static_cast<unsigned char>(s_[pos_]);
    if (b == '\n' || b == '\r') {
      if (!(b == '\n' && pos_ > 0 && s_[pos_ - 1] == '\r')) ++line_;
      col_ = 1;
    } else if (pos_ + 1 >= s_.size() || !is_continuation(static_cast<unsigned char>(s_[pos_ + 1]))) {
      ++col_;
    }
    ++pos_;
  }

  [[noreturn]] void fail_at(int line, int col, const std::string& pointer, std::string id, std::string message,
                            std::string hint) const {
    throw Failure{make_error(std::move(id), std::move(message), std::move(hint), Location{file_, line, col, pointer})};
  }
  [[noreturn]] void fail(std::string id, std::string message, std::string hint = {}) const {
    fail_at(line_, col_, pointer_, std::move(id), std::move(message), std::move(hint));
  }

  std::string pointer_;  // pointer of the container being parsed, for syntax errors inside it

  // How an error message names what was found at the current position.
  std::string got() const {
    if (at_end()) return "end of file";
    const auto b = static_cast<unsigned char>(s_[pos_]);
    if (is_word_char(s_[pos_])) {
      std::size_t e = pos_;
      while (e < s_.size() && is_word_char(s_[e]) && e - pos_ < 20) ++e;
      return "'" + std::string(s_.substr(pos_, e - pos_)) + "'";
    }
    if (b < 0x20 || b == 0x7F) {
      static const char* hex = "0123456789abcdef";
      return std::string("control character 0x") + hex[b >> 4] + hex[b & 15];
    }
    if (b >= 0x80) return "'" + std::string(s_.substr(pos_, utf8_sequence_length(s_, pos_))) + "'";
    return std::string("'") + static_cast<char>(b) + "'";
  }

  // A hint for the most common ways hand-written JSON goes wrong.
  std::string hint_for_unexpected() const {
    const char c = peek();
    if (c == '\'') return "JSON strings use double quotes: \"like this\"";
    if (c == '/') return "JSON has no comments; put notes in \"description\" or \"caption\"";
    if (c == '+') return "JSON numbers have no leading +";
    if (c == '.') return "write a digit before the decimal point: 0.5";
    const std::string_view rest = s_.substr(pos_);
    if (rest.starts_with("True") || rest.starts_with("False") || rest.starts_with("None") || rest.starts_with("TRUE") ||
        rest.starts_with("FALSE") || rest.starts_with("NULL") || rest.starts_with("Null"))
      return "JSON literals are lowercase: true, false, null";
    if (is_word_char(c)) return "strings need double quotes: \"like this\"";
    return {};
  }

  void check_utf8() {
    int line = 1, col = 1;
    for (std::size_t i = s_.starts_with("\xEF\xBB\xBF") ? 3 : 0; i < s_.size();) {
      const std::size_t n = utf8_sequence_length(s_, i);
      if (n == 0) {
        static const char* hex = "0123456789abcdef";
        const auto b = static_cast<unsigned char>(s_[i]);
        fail_at(line, col, "", "scenario.parse",
                std::string("invalid UTF-8: byte 0x") + hex[b >> 4] + hex[b & 15] + " does not start a valid character",
                "save the file as UTF-8");
      }
      if (s_[i] == '\n' || s_[i] == '\r') {
        if (!(s_[i] == '\n' && i > 0 && s_[i - 1] == '\r')) ++line;
        col = 1;
      } else {
        ++col;
      }
      i += n;
    }
  }

  void skip_space() {
    while (!at_end()) {
      const char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') advance();
      else break;
    }
  }

  void expect_word(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word ||
        (pos_ + word.size() < s_.size() && is_word_char(s_[pos_ + word.size()])))
      fail("scenario.parse", "expected a value, got " + got(), hint_for_unexpected());
    for (std::size_t i = 0; i < word.size(); ++i) advance();
  }

  Value value(const std::string& pointer, int depth) {
    Value v;
    v.line = line_;
    v.col = col_;
    v.pointer = pointer;
    const char c = peek();
    switch (c) {
      case '{':
        object(v, depth + 1);
        break;
      case '[':
        array(v, depth + 1);
        break;
      case '"':
        v.kind = Value::Kind::string;
        v.text = string_literal();
        break;
      case 't':
        expect_word("true");
        v.kind = Value::Kind::boolean;
        v.boolean = true;
        break;
      case 'f':
        expect_word("false");
        v.kind = Value::Kind::boolean;
        break;
      case 'n':
        expect_word("null");
        v.kind = Value::Kind::null;
        break;
      case 'N':
      case 'I':
        not_a_number();
        break;
      default:
        if (c == '-' || (c >= '0' && c <= '9')) {
          if (c == '-' && pos_ + 1 < s_.size() && s_[pos_ + 1] == 'I') not_a_number();
          number(v);
          break;
        }
        if (at_end())
          fail("scenario.parse", "expected a value, got end of file",
               "the document ends too early; close every { and [");
        fail("scenario.parse", "expected a value, got " + got(), hint_for_unexpected());
    }
    return v;
  }

  [[noreturn]] void not_a_number() {
    const std::string_view rest = s_.substr(pos_);
    for (std::string_view w : {"NaN", "Infinity", "-Infinity"})
      if (rest.starts_with(w))
        fail("scenario.parse", std::string(w) + " is not allowed in JSON", "write a finite number");
    fail("scenario.parse", "expected a value, got " + got(), hint_for_unexpected());
  }

  void number(Value& v) {
    v.kind = Value::Kind::number;
    const std::size_t start = pos_;
    bool integer = true;
    if (peek() == '-') advance();
    if (peek() == '0') {
      advance();
      if (peek() >= '0' && peek() <= '9')
        fail("scenario.parse", "number has a leading zero", "write the number without leading zeros");
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') advance();
    } else {
      fail("scenario.parse", "expected a digit after '-', got " + got());
    }
    if (peek() == '.') {
      integer = false;
      advance();
      if (!(peek() >= '0' && peek() <= '9')) fail("scenario.parse", "expected a digit after '.', got " + got());
      while (peek() >= '0' && peek() <= '9') advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      integer = false;
      advance();
      if (peek() == '+' || peek() == '-') advance();
      if (!(peek() >= '0' && peek() <= '9')) fail("scenario.parse", "expected a digit in the exponent, got " + got());
      while (peek() >= '0' && peek() <= '9') advance();
    }
    v.text = std::string(s_.substr(start, pos_ - start));
    v.integer_literal = integer;
    double d = 0;
    auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), d);
    (void)p;
    if (ec == std::errc::result_out_of_range) d = out_of_range_value(v.text);
    v.number = d;
  }

  std::uint32_t hex4() {
    std::uint32_t x = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = peek();
      int d = -1;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      if (d < 0) fail("scenario.parse", "expected 4 hex digits after \\u, got " + got());
      x = x * 16 + static_cast<std::uint32_t>(d);
      advance();
    }
    return x;
  }

  std::string string_literal() {
    const int line = line_, col = col_;
    advance();  // opening quote
    std::string out;
    while (true) {
      if (at_end())
        fail_at(line, col, pointer_, "scenario.parse", "string is not closed before the end of the file",
                "add the closing \"");
      const char c = s_[pos_];
      const auto b = static_cast<unsigned char>(c);
      if (c == '"') {
        advance();
        return out;
      }
      if (c == '\n' || c == '\r')
        fail_at(line, col, pointer_, "scenario.parse", "string is not closed before the end of the line",
                "add the closing \", or write \\n for a line break inside a string");
      if (b < 0x20)
        fail("scenario.parse", "raw " + got() + " inside a string", "write it as an escape such as \\t or \\u0001");
      if (c != '\\') {
        out += c;
        advance();
        continue;
      }
      advance();  // backslash
      const char e = peek();
      if (const char plain = simple_escape(e)) {
        out += plain;
        advance();
        continue;
      }
      switch (e) {
        case 'u': {
          const int ul = line_, uc = col_ - 1;
          advance();
          std::uint32_t cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            // A high surrogate must be followed by \u and a low surrogate.
            if (s_.substr(pos_, 2) != "\\u")
              fail_at(ul, uc, pointer_, "scenario.parse", "lone surrogate in \\u escape",
                      "a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF escape");
            advance();
            advance();
            const std::uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF)
              fail_at(ul, uc, pointer_, "scenario.parse", "lone surrogate in \\u escape",
                      "a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail_at(ul, uc, pointer_, "scenario.parse", "lone surrogate in \\u escape",
                    "a \\uDC00-\\uDFFF escape must follow a \\uD800-\\uDBFF escape");
          }
          append_utf8(out, cp);
          continue;  // hex4 already advanced
        }
        default:
          if (at_end()) fail("scenario.parse", "string is not closed before the end of the file", "add the closing \"");
          fail("scenario.parse", "invalid escape \\" + std::string(1, e) + " in a string",
               "valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
      }
      advance();
    }
  }

  void enter(int depth) {
    if (depth > kMaxJsonDepth)
      fail("scenario.too_deep", "nesting is deeper than " + std::to_string(kMaxJsonDepth) + " levels",
           "a scenario needs only a few levels of {} and []; look for a runaway bracket");
  }

  void object(Value& v, int depth) {
    enter(depth);
    v.kind = Value::Kind::object;
    const std::string saved = pointer_;
    pointer_ = v.pointer;
    advance();  // {
    std::unordered_map<std::string, std::size_t> seen;
    skip_space();
    if (peek() == '}') {
      advance();
      pointer_ = saved;
      return;
    }
    while (true) {
      if (peek() != '"') {
        if (at_end()) fail("scenario.parse", "expected a key string or '}', got end of file", "close every { and [");
        std::string hint = hint_for_unexpected();
        if (peek() == '}' && !v.members.empty()) hint = "remove the comma before '}': JSON allows no trailing comma";
        fail("scenario.parse", "expected a key string, got " + got(), hint);
      }
      Member m;
      m.line = line_;
      m.col = col_;
      m.key = string_literal();
      // JSON readers disagree on which of two equal keys wins, so a duplicate is an error.
      if (auto [it, fresh] = seen.emplace(m.key, v.members.size()); !fresh)
        fail_at(m.line, m.col, v.pointer + "/" + escape_pointer_token(m.key), "scenario.duplicate_key",
                "duplicate key " + quote(m.key) + " (first at line " + std::to_string(v.members[it->second].line) + ")",
                "remove one of them: a key may appear only once in an object");
      skip_space();
      if (peek() != ':') fail("scenario.parse", "expected ':' after key " + quote(m.key) + ", got " + got());
      advance();
      skip_space();
      m.value = value(v.pointer + "/" + escape_pointer_token(m.key), depth);
      v.members.push_back(std::move(m));
      skip_space();
      if (peek() == ',') {
        advance();
        skip_space();
        continue;
      }
      if (peek() == '}') {
        advance();
        pointer_ = saved;
        return;
      }
      if (at_end())
        fail("scenario.parse", "expected ',' or '}' after an object member, got end of file", "close every { and [");
      fail("scenario.parse", "expected ',' or '}' after an object member, got " + got(),
           peek() == '"' ? "add a comma between members" : hint_for_unexpected());
    }
  }

  void array(Value& v, int depth) {
    enter(depth);
    v.kind = Value::Kind::array;
    const std::string saved = pointer_;
    pointer_ = v.pointer;
    advance();  // [
    skip_space();
    if (peek() == ']') {
      advance();
      pointer_ = saved;
      return;
    }
    while (true) {
      if (peek() == ']' && !v.items.empty())
        fail("scenario.parse", "expected a value, got ']'",
             "remove the comma before ']': JSON allows no trailing comma");
      v.items.push_back(value(v.pointer + "/" + std::to_string(v.items.size()), depth));
      skip_space();
      if (peek() == ',') {
        advance();
        skip_space();
        continue;
      }
      if (peek() == ']') {
        advance();
        pointer_ = saved;
        return;
      }
      if (at_end())
        fail("scenario.parse", "expected ',' or ']' after an array element, got end of file", "close every { and [");
      fail("scenario.parse", "expected ',' or ']' after an array element, got " + got(),
           "separate array elements with commas");
    }
  }
};

}  // namespace

Result<Value> parse(std::string_view text, const std::string& file) {
  try {
    Parser p(text, file);
    return p.document();
  } catch (Failure& f) {
    return std::move(f.error);
  }
}

}  // namespace collscope::json
