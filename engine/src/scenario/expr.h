// Integer expressions in programs: "(rank + 1) % size", "rank == 0", "i * 4".
//
// Programs name peers, offsets, counts and the ranks that run an op with small
// expressions over `rank` (the rank running the op), `size` (the number of ranks)
// and the variables of enclosing repeats, as the tutorial writes them in Python:
//
//   expr   := or
//   or     := and (("||" | "or") and)*
//   and    := not (("&&" | "and") not)*
//   not    := ("!" | "not") not | cmp
//   cmp    := sum (("==" | "!=" | "<" | "<=" | ">" | ">=") sum)?
//   sum    := term (("+" | "-") term)*
//   term   := unary (("*" | "/" | "//" | "%") unary)*
//   unary  := "-" unary | number | call | name | "(" expr ")"
//   call   := ("min" | "max") "(" expr ("," expr)* ")" | "abs" "(" expr ")"
//
// Arithmetic is on 64-bit integers with Python's meaning of / and %: division rounds
// down and a remainder has the divisor's sign, so (rank - 1) % size is never negative.
// Comparisons and logic give 1 or 0.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "collscope/result.h"

namespace collscope::scenario {

// Values of the variables in scope, innermost last.
using Env = std::vector<std::pair<std::string, std::int64_t>>;

class Expression {
 public:
  // Limits, so that parsing and evaluating stay quick and shallow whatever the text.
  static constexpr std::size_t kMaxChars = 1000;
  static constexpr std::int32_t kMaxHeight = 256;

  Expression() = default;
  // Errors: id "scenario.bad_expression"; the message names the column in the text.
  static Result<Expression> parse(const std::string& text);
  static Expression constant(std::int64_t v);

  // Errors: "program.bad_value" (division by zero, unknown variable, overflow).
  Result<std::int64_t> eval(const Env& env) const;

  const std::string& text() const { return text_; }
  bool empty() const { return nodes_.empty(); }
  bool is_constant() const;
  // Names the expression reads, in order of first use.
  std::vector<std::string> names() const;

 private:
  enum class Kind : std::uint8_t {
    number,
    name,
    neg,
    lnot,
    add,
    sub,
    mul,
    div,
    mod,
    eq,
    ne,
    lt,
    le,
    gt,
    ge,
    land,
    lor,
    min,
    max,
    abs
  };
  struct Node {
    Kind kind;
    std::int64_t value = 0;  // number
    std::string name;        // name
    std::int32_t a = -1, b = -1;
    std::int32_t height = 0;  // of the subtree below this node
  };
  friend class ExprParser;
  std::string text_;
  std::vector<Node> nodes_;
  std::int32_t root_ = -1;
  Result<std::int64_t> eval_node(std::int32_t n, const Env& env) const;
};

// A text with expressions in braces, as labels and captions write them: "F{mb}",
// "micro-batch {mb + 1} of {size}". "{{" and "}}" stand for the braces themselves.
class TextTemplate {
 public:
  // Errors: "scenario.bad_expression" (an expression in it, or an unclosed "{").
  static Result<TextTemplate> parse(const std::string& text);
  // The text with every expression's value in its place.
  Result<std::string> render(const Env& env) const;
  bool plain() const { return holes_.empty(); }  // no expression: render gives the text back
  std::vector<std::string> names() const;        // the names its expressions read

 private:
  std::vector<std::string> pieces_;  // literal text before each hole, and after the last
  std::vector<Expression> holes_;
};

// A rank range "FIRST..LAST" (1 to 9 digits each, blanks allowed around them), as
// "ranks" selectors write it. False for anything else (an expression, perhaps).
bool parse_rank_range(const std::string& text, long& first, long& last);

}  // namespace collscope::scenario
