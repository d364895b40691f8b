#include "scenario/expr.h"

#include <algorithm>
#include <cctype>

namespace collscope::scenario {

class ExprParser {
 public:
  using Kind = Expression::Kind;
  explicit ExprParser(Expression& e) : e_(e), t_(e.text_) {}

  Status run() {
    if (t_.size() > Expression::kMaxChars) {
      pos_ = Expression::kMaxChars;
      return fail("is longer than " + std::to_string(Expression::kMaxChars) + " characters");
    }
    skip();
    if (pos_ >= t_.size()) return fail("is empty");
    auto r = parse_or();
    if (!r) return r.error();
    if (too_deep_) return fail("has too many operators in a row");
    skip();
    if (pos_ < t_.size()) return fail("has unexpected \"" + t_.substr(pos_, 1) + "\"");
    e_.root_ = *r;
    return ok_status();
  }

 private:
  Expression& e_;
  const std::string& t_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  bool too_deep_ = false;
  static constexpr int kMaxNesting = 64;

  Error fail(const std::string& what) const {
    return make_error("scenario.bad_expression",
                      "expression \"" + (t_.size() > 60 ? t_.substr(0, 60) + "..." : t_) + "\" " + what +
                          " (at character " + std::to_string(pos_ + 1) + ")",
                      "write integers, rank, size and repeat variables with + - * / % ( ) == != < <= > >= and or not, "
                      "min(a, b), max(a, b) and abs(a), "
                      "e.g. \"(rank + 1) % size\"");
  }
  static std::string too_deep() {
    return "is nested too deeply: more than " + std::to_string(kMaxNesting) + " levels of parentheses, - and not";
  }
  void skip() {
    while (pos_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
  }
  bool eat(const char* tok) {
    skip();
    const std::string s(tok);
    if (t_.compare(pos_, s.size(), s) != 0) return false;
    // Words must end at a word boundary ("or" is not the start of "order").
    if (std::isalpha(static_cast<unsigned char>(s[0])) && pos_ + s.size() < t_.size() &&
        (std::isalnum(static_cast<unsigned char>(t_[pos_ + s.size()])) || t_[pos_ + s.size()] == '_'))
      return false;
    // "<" must not eat the start of "<=", "/" not the start of "//", "!" not "!=".
    pos_ += s.size();
    return true;
  }
  // Every node knows the height of its subtree. Evaluation recurses that deep, so the
  // height is bounded: "1+1+1+...+1" nests to the left without nesting the parser.
  std::int32_t node(Kind k, std::int32_t a = -1, std::int32_t b = -1) {
    Expression::Node n{k};
    n.a = a;
    n.b = b;
    for (std::int32_t child : {a, b})
      if (child >= 0) n.height = std::max(n.height, e_.nodes_[static_cast<std::size_t>(child)].height + 1);
    if (n.height > Expression::kMaxHeight) too_deep_ = true;
    e_.nodes_.push_back(std::move(n));
    return static_cast<std::int32_t>(e_.nodes_.size()) - 1;
  }

  using R = Result<std::int32_t>;
  template <class Next>
  R binary(Next next, std::initializer_list<std::pair<const char*, Kind>> ops) {
    auto l = (this->*next)();
    if (!l) return l;
    std::int32_t left = *l;
    for (;;) {
      bool matched = false;
      for (const auto& [tok, kind] : ops) {
        const std::size_t save = pos_;
        if (!eat(tok)) continue;
        // Reject the one-character prefix of a two-character operator.
        skip();
        if ((std::string(tok) == "<" || std::string(tok) == ">") && pos_ < t_.size() && t_[pos_] == '=') {
          pos_ = save;
          continue;
        }
        auto r = (this->*next)();
        if (!r) return r;
        left = node(kind, left, *r);
        matched = true;
        break;
      }
      if (!matched) return left;
    }
  }
  R parse_or() { return binary(&ExprParser::parse_and, {{"||", Kind::lor}, {"or", Kind::lor}}); }
  R parse_and() { return binary(&ExprParser::parse_not, {{"&&", Kind::land}, {"and", Kind::land}}); }
  R parse_not() {
    skip();
    const bool bang = pos_ < t_.size() && t_[pos_] == '!' && !(pos_ + 1 < t_.size() && t_[pos_ + 1] == '=');
    if (bang) ++pos_;
    if (bang || eat("not")) {
      // "not not not ..." recurses like parentheses do, and counts against the same limit.
      if (++depth_ > kMaxNesting) {
        pos_ = bang ? pos_ - 1 : pos_ - 3;  // at the "not" (or "!") that is one too many
        return fail(too_deep());
      }
      struct Leave {
        int& d;
        ~Leave() { --d; }
      } leave{depth_};
      auto r = parse_not();
      if (!r) return r;
      return node(Kind::lnot, *r);
    }
    return parse_cmp();
  }
  R parse_cmp() {
    auto l = parse_sum();
    if (!l) return l;
    static const std::pair<const char*, Kind> ops[] = {{"==", Kind::eq}, {"!=", Kind::ne}, {"<=", Kind::le},
                                                       {">=", Kind::ge}, {"<", Kind::lt},  {">", Kind::gt}};
    for (const auto& [tok, kind] : ops)
      if (eat(tok)) {
        auto r = parse_sum();
        if (!r) return r;
        return node(kind, *l, *r);
      }
    return l;
  }
  R parse_sum() { return binary(&ExprParser::parse_term, {{"+", Kind::add}, {"-", Kind::sub}}); }
  R parse_term() {
    return binary(&ExprParser::parse_unary, {{"*", Kind::mul}, {"//", Kind::div}, {"/", Kind::div}, {"%", Kind::mod}});
  }
  R parse_unary() {
    skip();
    if (pos_ >= t_.size()) return fail("ends too early");
    const char c = t_[pos_];
    // Only what nests counts: an opening parenthesis or a "-" (a plain number or name
    // is no level), so 64 levels are allowed and the 65th is refused at its character.
    const bool nests = c == '-' || c == '(';
    if (nests && ++depth_ > kMaxNesting) return fail(too_deep());
    struct Leave {
      int& d;
      bool on;
      ~Leave() {
        if (on) --d;
      }
    } leave{depth_, nests};
    if (c == '-') {
      ++pos_;
      auto r = parse_unary();
      if (!r) return r;
      return node(Kind::neg, *r);
    }
    if (c == '(') {
      ++pos_;
      auto r = parse_or();
      if (!r) return r;
      if (!eat(")")) return fail("lacks a closing \")\"");
      return r;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t v = 0;
      while (pos_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[pos_]))) {
        const int d = t_[pos_] - '0';
        if (v > (INT64_MAX - d) / 10) return fail("has a number too large");
        v = v * 10 + d;
        ++pos_;
      }
      const std::int32_t n = node(Kind::number);
      e_.nodes_[static_cast<std::size_t>(n)].value = v;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[pos_])) || t_[pos_] == '_')) ++pos_;
      const std::string word = t_.substr(start, pos_ - start);
      if (word == "and" || word == "or" || word == "not") {
        pos_ = start;
        return fail("has \"" + word + "\" where a value belongs");
      }
      // min, max and abs are functions when called ("min(rank, 3)"), names otherwise.
      if ((word == "min" || word == "max" || word == "abs") && eat("(")) return call(word);
      const std::int32_t n = node(Kind::name);
      e_.nodes_[static_cast<std::size_t>(n)].name = word;
      return n;
    }
    return fail("has unexpected \"" + std::string(1, c) + "\"");
  }
  // min(a, b, ...) and max(a, b, ...) fold their arguments pairwise; abs takes one.
  R call(const std::string& fn) {
    const Kind kind = fn == "min" ? Kind::min : fn == "max" ? Kind::max : Kind::abs;
    auto first = parse_or();
    if (!first) return first;
    std::int32_t acc = *first;
    int args = 1;
    while (eat(",")) {
      auto next = parse_or();
      if (!next) return next;
      acc = node(kind, acc, *next);
      ++args;
    }
    if (!eat(")")) return fail("lacks a closing \")\" after the arguments of " + fn);
    if (kind == Kind::abs) {
      if (args != 1) return fail("gives abs " + std::to_string(args) + " arguments; it takes one");
      return node(Kind::abs, acc);
    }
    if (args < 2) return fail("gives " + fn + " one argument; it takes two or more");
    return acc;
  }
};

// "FIRST..LAST" with 1 to 9 digits each and optional blanks around them.
bool parse_rank_range(const std::string& s, long& first, long& last) {
  std::size_t i = 0;
  auto blanks = [&] {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  };
  auto digits = [&](long& out) {
    const std::size_t start = i;
    out = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 9) out = out * 10 + (s[i++] - '0');
    return i > start && !(i < s.size() && s[i] >= '0' && s[i] <= '9');
  };
  blanks();
  if (!digits(first)) return false;
  blanks();
  if (s.compare(i, 2, "..") != 0) return false;
  i += 2;
  blanks();
  if (!digits(last)) return false;
  blanks();
  return i == s.size();
}

Result<Expression> Expression::parse(const std::string& text) {
  Expression e;
  e.text_ = text;
  ExprParser p(e);
  if (auto st = p.run(); !st) return st.error();
  return e;
}

Expression Expression::constant(std::int64_t v) {
  Expression e;
  e.text_ = std::to_string(v);
  Node n{Kind::number};
  n.value = v;
  e.nodes_.push_back(n);
  e.root_ = 0;
  return e;
}

bool Expression::is_constant() const {
  for (const auto& n : nodes_)
    if (n.kind == Kind::name) return false;
  return !nodes_.empty();
}

std::vector<std::string> Expression::names() const {
  std::vector<std::string> out;
  for (const auto& n : nodes_)
    if (n.kind == Kind::name && std::find(out.begin(), out.end(), n.name) == out.end()) out.push_back(n.name);
  return out;
}

Result<std::int64_t> Expression::eval(const Env& env) const {
  if (root_ < 0) return make_error("program.bad_value", "empty expression", "write a value");
  return eval_node(root_, env);
}

Result<std::int64_t> Expression::eval_node(std::int32_t i, const Env& env) const {
  const Node& n = nodes_[static_cast<std::size_t>(i)];
  auto bad = [&](const std::string& what) {
    return make_error("program.bad_value", "expression \"" + text_ + "\": " + what,
                      "check the expression for the ranks and repeat values it runs with");
  };
  switch (n.kind) {
    case Kind::number:
      return n.value;
    case Kind::name:
      for (auto it = env.rbegin(); it != env.rend(); ++it)
        if (it->first == n.name) return it->second;
      return bad("unknown name \"" + n.name + "\"");
    default:
      break;
  }
  auto a = eval_node(n.a, env);
  if (!a) return a;
  if (n.kind == Kind::neg) {
    if (*a == INT64_MIN) return bad("overflow");
    return -*a;
  }
  if (n.kind == Kind::lnot) return static_cast<std::int64_t>(*a == 0);
  if (n.kind == Kind::abs) {
    if (*a == INT64_MIN) return bad("overflow");
    return *a < 0 ? -*a : *a;
  }
  // Short-circuit logic, so "rank > 0 and 8 / rank == 2" never divides by zero.
  if (n.kind == Kind::land && *a == 0) return std::int64_t{0};
  if (n.kind == Kind::lor && *a != 0) return std::int64_t{1};
  auto b = eval_node(n.b, env);
  if (!b) return b;
  const std::int64_t x = *a, y = *b;
  std::int64_t r = 0;
  switch (n.kind) {
    case Kind::add:
      if (__builtin_add_overflow(x, y, &r)) return bad("overflow");
      return r;
    case Kind::sub:
      if (__builtin_sub_overflow(x, y, &r)) return bad("overflow");
      return r;
    case Kind::mul:
      if (__builtin_mul_overflow(x, y, &r)) return bad("overflow");
      return r;
    case Kind::div:
    case Kind::mod: {
      if (y == 0) return bad("division by zero");
      if (x == INT64_MIN && y == -1) return bad("overflow");
      std::int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {  // round towards minus infinity, like Python
        q -= 1;
        m += y;
      }
      return n.kind == Kind::div ? q : m;
    }
    case Kind::eq:
      return static_cast<std::int64_t>(x == y);
    case Kind::ne:
      return static_cast<std::int64_t>(x != y);
    case Kind::lt:
      return static_cast<std::int64_t>(x < y);
    case Kind::le:
      return static_cast<std::int64_t>(x <= y);
    case Kind::gt:
      return static_cast<std::int64_t>(x > y);
    case Kind::ge:
      return static_cast<std::int64_t>(x >= y);
    case Kind::land:
    case Kind::lor:
      return static_cast<std::int64_t>(y != 0);
    case Kind::min:
      return std::min(x, y);
    case Kind::max:
      return std::max(x, y);
    default:
      return bad("internal error");
  }
}

Result<TextTemplate> TextTemplate::parse(const std::string& text) {
  TextTemplate t;
  std::string piece;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {  // "{{" and "}}"
      piece += c;
      ++i;
      continue;
    }
    if (c == '}')
      return make_error("scenario.bad_expression", "text \"" + text + "\" has a \"}\" that closes nothing",
                        "write \"}}\" for a brace, or put an expression in braces: \"F{mb}\"");
    if (c != '{') {
      piece += c;
      continue;
    }
    const std::size_t end = text.find('}', i + 1);
    if (end == std::string::npos)
      return make_error("scenario.bad_expression", "text \"" + text + "\" has a \"{\" that is never closed",
                        "close the expression with \"}\" (\"F{mb}\"), or write \"{{\" for a brace");
    auto e = Expression::parse(text.substr(i + 1, end - i - 1));
    if (!e) return e.error();
    t.pieces_.push_back(std::move(piece));
    piece.clear();
    t.holes_.push_back(std::move(*e));
    i = end;
  }
  t.pieces_.push_back(std::move(piece));
  return t;
}

Result<std::string> TextTemplate::render(const Env& env) const {
  std::string out = pieces_[0];
  for (std::size_t i = 0; i < holes_.size(); ++i) {
    auto v = holes_[i].eval(env);
    if (!v) return v.error();
    out += std::to_string(*v) + pieces_[i + 1];
  }
  return out;
}

std::vector<std::string> TextTemplate::names() const {
  std::vector<std::string> out;
  for (const auto& h : holes_)
    for (const auto& n : h.names())
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

}  // namespace collscope::scenario
