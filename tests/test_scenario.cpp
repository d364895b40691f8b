// Scenario files: the JSON reader, every error id with its message and location,
// count derivation, lowering, initial values, the round trip and the lessons.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "collscope/algorithms.h"
#include "collscope/scenario.h"
#include "scenario/json.h"
#include "scenario/suggest.h"

using namespace collscope;

namespace {

Error parse_error(const std::string& text, const std::string& file = "x.json") {
  auto r = parse_scenario(text, file);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

Scenario parse_ok(const std::string& text) {
  auto r = parse_scenario(text, "x.json");
  if (!r) FAIL_CHECK(r.error().format());
  REQUIRE(r.ok());
  return *r;
}

Schedule lower_ok(const Scenario& s) {
  auto r = lower_scenario(s);
  if (!r) FAIL_CHECK(r.error().format());
  REQUIRE(r.ok());
  return *r;
}

void check_where(const Error& e, int line, int col, const std::string& pointer) {
  CHECK(e.where.line == line);
  CHECK(e.where.col == col);
  CHECK(e.where.pointer == pointer);
}

// A scenario with one program entry `call` (written on line 8) and two buffers.
std::string with_call(const std::string& call, const std::string& extra_buffers = "") {
  return "{\n"                                               // 1
         "  \"version\": 1,\n"                               // 2
         "  \"ranks\": 4,\n"                                 // 3
         "  \"buffers\": {\n"                                // 4
         "    \"x\": {\"count\": 8, \"init\": \"rank\"},\n"  // 5
         "    \"table\": {\"counts\": [32, 0, 0, 0]}" +      // 6
         extra_buffers +
         "\n"
         "  },\n"  // 7
         "  \"program\": [" +
         call +
         "]\n"  // 8
         "}\n";
}

}  // namespace

// ---------------------------------------------------------------------------
// The JSON reader

TEST_CASE("scenario json: values remember line, column and pointer") {
  const std::string text = "{\n  \"a\": [1, {\"b/c\": true}],\n  \"t~\": \"\xC3\xA9\xC3\xA9\", \"n\": null\n}";
  auto r = json::parse(text, "f.json");
  REQUIRE(r.ok());
  const json::Value& v = *r;
  REQUIRE(v.members.size() == 3);
  CHECK(v.line == 1);
  CHECK(v.col == 1);
  const json::Member& a = v.members[0];
  CHECK(a.key == "a");
  CHECK(a.line == 2);
  CHECK(a.col == 3);
  CHECK(a.value.pointer == "/a");
  CHECK(a.value.col == 8);
  const json::Value& obj = a.value.items[1];
  CHECK(obj.pointer == "/a/1");
  CHECK(obj.col == 12);
  CHECK(obj.members[0].value.pointer == "/a/1/b~1c");
  CHECK(v.members[1].value.pointer == "/t~0");
  CHECK(v.members[1].value.text == "\xC3\xA9\xC3\xA9");
  // Columns count characters: "é" is two bytes but one column.
  CHECK(v.members[2].col == 15);
  CHECK(v.members[2].value.kind == json::Value::Kind::null);
}

TEST_CASE("scenario json: escapes, surrogate pairs, BOM and CRLF") {
  auto r = json::parse("\xEF\xBB\xBF{\"s\": \"a\\n\\u00e9\\ud83d\\ude00\\/\"}\r\n", "f.json");
  REQUIRE(r.ok());
  CHECK(r->members[0].value.text == "a\n\xC3\xA9\xF0\x9F\x98\x80/");
  auto crlf = json::parse("{\r\n  \"a\": 1,\r\n  \"b\": 2\r\n}", "f.json");
  REQUIRE(crlf.ok());
  CHECK(crlf->members[1].line == 3);
  CHECK(crlf->members[1].col == 3);
}

TEST_CASE("scenario json: numbers and their integer view") {
  auto r = json::parse(
      "[0, -7, 4.0, 1e3, 2.5, 18446744073709551615, 18446744073709551616, -9223372036854775809, 1e999]", "f.json");
  REQUIRE(r.ok());
  const auto& it = r->items;
  using S = json::IntegerValue::Status;
  CHECK(json::to_integer(it[0]).uvalue == 0);
  CHECK(json::to_integer(it[1]).negative);
  CHECK(json::to_integer(it[1]).value == -7);
  CHECK(json::to_integer(it[2]).uvalue == 4);
  CHECK(json::to_integer(it[3]).uvalue == 1000);
  CHECK(json::to_integer(it[4]).status == S::not_integer);
  CHECK(json::to_integer(it[5]).uvalue == UINT64_MAX);
  CHECK(json::to_integer(it[6]).status == S::too_large);
  CHECK(json::to_integer(it[7]).status == S::too_small);
  CHECK(json::to_integer(it[8]).status == S::too_large);
}

TEST_CASE("scenario json: syntax errors say where and what was expected") {
  auto err = [](const std::string& text) {
    auto r = json::parse(text, "f.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == "scenario.parse");
    return r.error();
  };
  {
    Error e = err("{\"version\": 1 \"ranks\": 4}");
    CHECK(e.message == "expected ',' or '}' after an object member, got '\"'");
    CHECK(e.hint == "add a comma between members");
    check_where(e, 1, 15, "");
  }
  {
    Error e = err("{\n  \"a\": [1, 2,]\n}");
    CHECK(e.message == "expected a value, got ']'");
    CHECK(e.hint.find("trailing comma") != std::string::npos);
    check_where(e, 2, 14, "/a");
  }
  {
    Error e = err("{\"a\": 1,}");
    CHECK(e.message == "expected a key string, got '}'");
    CHECK(e.hint.find("trailing comma") != std::string::npos);
  }
  CHECK(err("").message == "expected a JSON value, got end of file");
  CHECK(err("{\"a\": 1").message == "expected ',' or '}' after an object member, got end of file");
  CHECK(err("{\"a\": 1} x").message == "unexpected 'x' after the end of the JSON document");
  CHECK(err("{\"a\": 'b'}").hint == "JSON strings use double quotes: \"like this\"");
  CHECK(err("{\"a\": True}").hint == "JSON literals are lowercase: true, false, null");
  CHECK(err("{\"a\": 1 // note\n}").hint.find("no comments") != std::string::npos);
  CHECK(err("{\"a\": 01}").message == "number has a leading zero");
  CHECK(err("{\"a\": 1.}").message == "expected a digit after '.', got '}'");
  CHECK(err("{\"a\": \"\\x\"}").message == "invalid escape \\x in a string");
  CHECK(err("{\"a\": \"\\ud800\"}").message == "lone surrogate in \\u escape");
  {
    Error e = err("{\n  \"a\": \"abc\n\"}");
    CHECK(e.message == "string is not closed before the end of the line");
    check_where(e, 2, 8, "");
  }
  CHECK(err("{\"a\": \"abc").message == "string is not closed before the end of the file");
  CHECK(err("{\"a\": \"a\tb\"}").message == "raw control character 0x09 inside a string");
}

TEST_CASE("scenario json: NaN and Infinity are rejected") {
  for (const char* lit : {"NaN", "Infinity", "-Infinity"}) {
    auto r = json::parse(std::string("{\"a\": ") + lit + "}", "f.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == "scenario.parse");
    CHECK(r.error().message == std::string(lit) + " is not allowed in JSON");
    check_where(r.error(), 1, 7, "");
  }
}

TEST_CASE("scenario json: invalid UTF-8 is rejected with its position") {
  for (const std::string bad : {std::string("\xFF"), std::string("\xC0\xAF"), std::string("\xED\xA0\x80"),
                                std::string("\xF4\x90\x80\x80"), std::string("\xC3")}) {
    auto r = json::parse("{\n  \"t\": \"ab" + bad + "\"}", "f.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == "scenario.parse");
    CHECK(r.error().message.rfind("invalid UTF-8: byte 0x", 0) == 0);
    CHECK(r.error().hint == "save the file as UTF-8");
    CHECK(r.error().where.line == 2);
    CHECK(r.error().where.col == 11);
  }
}

TEST_CASE("scenario json: nesting deeper than 64 is refused without recursion blow-up") {
  const std::string ok_text = "{\"a\": " + std::string(63, '[') + std::string(63, ']') + "}";
  CHECK(json::parse(ok_text, "f.json").ok());
  const std::string deep = "{\"a\": " + std::string(64, '[') + std::string(64, ']') + "}";
  auto r = json::parse(deep, "f.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().id == "scenario.too_deep");
  CHECK(r.error().message == "nesting is deeper than 64 levels");
  check_where(
      r.error(), 1, 7 + 63, "/a" + [] {
        std::string p;
        for (int i = 0; i < 62; ++i) p += "/0";
        return p;
      }());
  // A hostile input: a million open brackets.
  auto huge = json::parse(std::string(1000000, '['), "f.json");
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.error().id == "scenario.too_deep");
}

TEST_CASE("scenario json: duplicate keys are ambiguous") {
  auto r = json::parse("{\n  \"a\": 1,\n  \"b\": {\"c\": 1,\n        \"c\": 2}\n}", "f.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().id == "scenario.duplicate_key");
  CHECK(r.error().message == "duplicate key \"c\" (first at line 3)");
  check_where(r.error(), 4, 9, "/b/c");
}

TEST_CASE("scenario suggestions: edit distance and closest name") {
  using scenario::closest;
  using scenario::edit_distance;
  CHECK(edit_distance("rot", "root") == 1);
  CHECK(edit_distance("sned", "send") == 1);
  CHECK(edit_distance("abc", "abc") == 0);
  const std::vector<std::string> keys = {"op", "buffer", "send", "recv", "count", "algorithm", "root"};
  CHECK(closest("rot", keys) == "root");
  CHECK(closest("bufer", keys) == "buffer");
  CHECK(closest("algo", keys) == "algorithm");
  CHECK(closest("ROOT", keys) == "root");
  CHECK_FALSE(closest("zzzzzz", keys).has_value());
  CHECK(closest("all-reduce", {"allreduce", "allgather"}) == "allreduce");
  CHECK(closest("reduce-scatter", {"reduce", "reduce_scatter"}) == "reduce_scatter");
}

// ---------------------------------------------------------------------------
// One test per error id

TEST_CASE("scenario error: scenario.io") {
  auto missing = load_scenario("/nonexistent/dir/x.json");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().id == "scenario.io");
  CHECK(missing.error().where.file == "/nonexistent/dir/x.json");
  CHECK(missing.error().where.line == 0);
  CHECK(missing.error().format().rfind("error[scenario.io] /nonexistent/dir/x.json: file not found", 0) == 0);

  auto dir = load_scenario(COLLSCOPE_SOURCE_DIR);
  REQUIRE_FALSE(dir.ok());
  CHECK(dir.error().id == "scenario.io");
  CHECK(dir.error().message == "path is a directory, not a scenario file");

  auto dev = load_scenario("/dev/null");
  REQUIRE_FALSE(dev.ok());
  CHECK(dev.error().id == "scenario.io");
  CHECK(dev.error().message == "path is a character device, not a regular file");
}

TEST_CASE("scenario error: scenario.parse carries the file") {
  Error e = parse_error("{\n  \"version\": 1,\n  \"ranks\": 4\n  \"program\": []\n}", "lessons/a.json");
  CHECK(e.id == "scenario.parse");
  CHECK(e.format() ==
        "error[scenario.parse] lessons/a.json:4:3: expected ',' or '}' after an object member, got '\"'\n"
        "  help: add a comma between members");
}

TEST_CASE("scenario error: scenario.duplicate_key") {
  Error e = parse_error(with_call("{\"op\": \"allreduce\", \"buffer\": \"x\", \"buffer\": \"x\"}"));
  CHECK(e.id == "scenario.duplicate_key");
  CHECK(e.message == "duplicate key \"buffer\" (first at line 8)");
  check_where(e, 8, 50, "/program/0/buffer");
}

TEST_CASE("scenario error: scenario.too_deep") {
  std::string title = std::string(70, '[') + std::string(70, ']');
  Error e = parse_error("{\"version\": 1, \"title\": " + title + "}");
  CHECK(e.id == "scenario.too_deep");
  CHECK(e.where.col == 25 + 63);
}

TEST_CASE("scenario error: scenario.unknown_key") {
  // The example of docs/ARCHITECTURE.md, "Errors": a misspelt key in the fourth program entry.
  const std::string text = R"({
  "version": 1,
  "ranks": 4,
  "buffers": {"x": {"count": 8}, "y": {"count": 32}},
  "program": [
    {"op": "allreduce", "buffer": "x"},
    {"op": "broadcast", "buffer": "x", "root": 1},
    {"op": "allgather", "send": "x", "recv": "y"},
    {"op": "reduce", "buffer": "x",
     "rot": 0}
  ]
})";
  Error e = parse_error(text, "scenarios/x.json");
  CHECK(e.id == "scenario.unknown_key");
  CHECK(e.message == "unknown key \"rot\" (did you mean \"root\"?)");
  CHECK(e.hint ==
        "valid keys for reduce: op, buffer, send, recv, count, algorithm, reduce_op, root, caption, group, body, "
        "ranks, request");
  check_where(e, 10, 6, "/program/3");
  CHECK(e.format() ==
        "error[scenario.unknown_key] scenarios/x.json:10:6 /program/3: unknown key \"rot\" (did you mean \"root\"?)\n"
        "  help: valid keys for reduce: op, buffer, send, recv, count, algorithm, reduce_op, root, caption, group, "
        "body, ranks, request");

  // Nothing close: no guess, the valid keys in the hint.
  Error top = parse_error("{\"version\": 1, \"colour\": \"red\", \"ranks\": 2, \"program\": []}");
  CHECK(top.id == "scenario.unknown_key");
  CHECK(top.message == "unknown key \"colour\"");
  CHECK(top.hint ==
        "valid keys at the top of a scenario: version, title, description, ranks, dtype, buffers, groups, program, "
        "expect, faults, quiz, view, compare");
  check_where(top, 1, 16, "");

  Error rank = parse_error("{\"version\": 1, \"rank\": 2, \"program\": []}");
  CHECK(rank.message == "unknown key \"rank\" (did you mean \"ranks\"?)");

  // A call key that does not belong to this collective.
  Error root = parse_error(with_call("{\"op\": \"allreduce\", \"buffer\": \"x\", \"root\": 0}"));
  CHECK(root.id == "scenario.unknown_key");
  CHECK(root.message == "key \"root\" does not apply to allreduce");
  CHECK(root.hint == "remove it: only broadcast, reduce, scatter and gather have a root");
  check_where(root, 8, 50, "/program/0");

  // Names from the file are quoted with escapes, so a message stays on one line.
  Error odd = parse_error("{\"version\": 1, \"a\\nb\\u0001\\\"\": 2, \"ranks\": 2, \"program\": []}");
  CHECK(odd.message == "unknown key \"a\\nb\\u0001\\\"\"");
  Error long_key = parse_error("{\"version\": 1, \"" + std::string(100, 'k') + "\": 2, \"ranks\": 2, \"program\": []}");
  CHECK(long_key.message == "unknown key \"" + std::string(48, 'k') + "...\"");

  Error in_buffer = parse_error(with_call("{\"op\": \"barrier\"}", ",\n    \"y\": {\"cuont\": 3}"));
  CHECK(in_buffer.message == "unknown key \"cuont\" (did you mean \"count\"?)");
  CHECK(in_buffer.where.pointer == "/buffers/y");
}

TEST_CASE("scenario error: scenario.wrong_type") {
  Error e = parse_error("{\"version\": 1, \"ranks\": \"4\", \"program\": []}");
  CHECK(e.id == "scenario.wrong_type");
  CHECK(e.message == "ranks must be an integer, got string \"4\"");
  CHECK(e.hint == "write it like \"ranks\": 4");
  check_where(e, 1, 16, "/ranks");

  CHECK(parse_error("{\"version\": 1, \"ranks\": 2.5, \"program\": []}").message ==
        "ranks must be an integer, got number 2.5");
  CHECK(parse_error("[1, 2]").message == "scenario must be a JSON object, got array");
  Error entry = parse_error(with_call("\"allreduce\""));
  CHECK(entry.message == "program entry must be an object, got string \"allreduce\"");
  check_where(entry, 8, 15, "/program/0");
  Error caption = parse_error(with_call("{\"op\": \"barrier\", \"caption\": 3}"));
  CHECK(caption.message == "caption must be a string, got number 3");
  CHECK(caption.where.pointer == "/program/0/caption");
  // Whole numbers written as 4.0 or 1e1 are integers.
  CHECK(parse_scenario("{\"version\": 1, \"ranks\": 4.0, \"program\": []}", "x.json").ok());
}

TEST_CASE("scenario error: scenario.missing_key") {
  Error op = parse_error(with_call("{\"buffer\": \"x\"}"));
  CHECK(op.id == "scenario.missing_key");
  CHECK(op.message == "program entry is missing \"op\"");
  CHECK(op.hint.rfind("add \"op\" with one of: broadcast, reduce, allreduce", 0) == 0);
  check_where(op, 8, 15, "/program/0");

  Error ranks = parse_error("{\n  \"version\": 1,\n  \"program\": []\n}");
  CHECK(ranks.message == "scenario is missing \"ranks\"");
  check_where(ranks, 1, 1, "");
  CHECK(ranks.format() ==
        "error[scenario.missing_key] x.json:1:1: scenario is missing \"ranks\"\n"
        "  help: add \"ranks\": 4 (the number of ranks)");

  CHECK(parse_error("{\"ranks\": 4, \"program\": []}").message == "scenario is missing \"version\"");
  CHECK(parse_error("{\"version\": 1, \"ranks\": 4}").message == "scenario is missing \"program\"");
  Error count = parse_error(with_call("{\"op\": \"barrier\"}", ",\n    \"y\": {\"init\": \"rank\"}"));
  CHECK(count.message == "buffer \"y\" is missing \"count\"");
  check_where(count, 7, 5, "/buffers/y");
}

TEST_CASE("scenario error: scenario.out_of_range") {
  Error zero = parse_error("{\"version\": 1, \"ranks\": 0, \"program\": []}");
  CHECK(zero.id == "scenario.out_of_range");
  CHECK(zero.message ==
        "ranks 0 is out of range 1..4096 (a run takes up to 1024; collscope predict prices up to 4096 "
        "on a topology)");
  check_where(zero, 1, 16, "/ranks");
  CHECK(parse_error("{\"version\": 1, \"ranks\": 4097, \"program\": []}")
            .message.rfind("ranks 4097 is out of range 1..4096", 0) == 0);
  CHECK(parse_error("{\"version\": 1, \"ranks\": 99999999999999999999999, \"program\": []}")
            .message.rfind("ranks 99999999999999999999999 is out of range 1..4096", 0) == 0);
  // 1025 to 4096 ranks are read, and lowered only for pricing: a run refuses them at "ranks".
  auto wide = parse_scenario(
      "{\"version\": 1,\n \"ranks\": 1025, \"buffers\": {\"x\": {\"count\": 4}},\n"
      " \"program\": [{\"op\": \"allreduce\", \"buffer\": \"x\", \"algorithm\": \"ring\"}]}",
      "wide.json");
  REQUIRE(wide.ok());
  auto run = lower_scenario(*wide);
  REQUIRE_FALSE(run.ok());
  CHECK(run.error().id == "scenario.out_of_range");
  CHECK(run.error().message == "ranks 1025 is out of range 1..1024");
  CHECK(run.error().hint.find("collscope predict") != std::string::npos);
  check_where(run.error(), 2, 2, "/ranks");
  CHECK(run.error().where.file == "wide.json");
  LowerOptions priced;
  priced.price_only = true;
  auto s = lower_scenario(*wide, priced);
  REQUIRE(s.ok());
  CHECK(s->ranks == 1025);
  CHECK(s->steps.size() == 2 * 1024);

  // root outside the world, at the "root" key.
  Error root = parse_error(with_call("{\"op\": \"broadcast\", \"buffer\": \"x\", \"root\": 4}"));
  CHECK(root.message == "root 4 is out of range 0..3 (ranks is 4)");
  CHECK(root.hint == "choose a root rank between 0 and 3");
  check_where(root, 8, 50, "/program/0/root");
  CHECK(parse_error(with_call("{\"op\": \"broadcast\", \"buffer\": \"x\", \"root\": -1}")).message ==
        "root -1 is out of range 0..3 (ranks is 4)");

  // Counts: negative, huge, wrong number of entries.
  Error neg = parse_error(with_call("{\"op\": \"allreduce\", \"buffer\": \"x\", \"count\": -2}"));
  CHECK(neg.message == "count -2 is negative");
  CHECK(neg.where.pointer == "/program/0/count");
  CHECK(parse_error(with_call("{\"op\": \"allreduce\", \"buffer\": \"x\", \"count\": 1e20}")).message ==
        "count 1e20 is larger than any buffer can hold (4294967296 elements)");
  Error counts = parse_error(with_call("{\"op\": \"barrier\"}", ",\n    \"y\": {\"counts\": [1, 2, 3]}"));
  CHECK(counts.message == "counts has 3 entries, but ranks is 4");
  check_where(counts, 7, 11, "/buffers/y/counts");
  Error elem = parse_error(with_call("{\"op\": \"barrier\"}", ",\n    \"y\": {\"counts\": [1, 2, -3, 4]}"));
  CHECK(elem.message == "count -3 is negative");
  check_where(elem, 7, 28, "/buffers/y/counts/2");

  // Values of the wrong shape.
  Error rows =
      parse_error(with_call("{\"op\": \"barrier\"}", ",\n    \"y\": {\"count\": 2, \"init\": {\"values\": [[1, 2]]}}"));
  CHECK(rows.message == "values has 1 rows, but ranks is 4");
  CHECK(rows.where.pointer == "/buffers/y/init/values");
  Error row = parse_error(with_call(
      "{\"op\": \"barrier\"}", ",\n    \"y\": {\"count\": 2, \"init\": {\"values\": [[1, 2], [3], [5, 6], [7, 8]]}}"));
  CHECK(row.message == "values row 1 has 1 numbers, but buffer \"y\" holds 2 on rank 1");
  CHECK(row.hint == "give rank 1 exactly 2 numbers");
  check_where(row, 7, 51, "/buffers/y/init/values/1");

  // Byte limits, checked before anything is allocated.
  Error big = parse_error(with_call("{\"op\": \"barrier\"}", ",\n    \"y\": {\"count\": 2000000000}"));
  CHECK(big.message ==
        "buffer \"y\" on rank 0 would take 7.5 GiB (2000000000 x float32), over the limit of 4.0 GiB per buffer");
  CHECK(big.where.pointer == "/buffers/y/count");
  Error total = parse_error(R"({"version": 1, "ranks": 4, "buffers": {
    "a": {"count": 1000000000}, "b": {"count": 1000000000}}, "program": []})");
  CHECK(total.message == "buffers take 29.8 GiB over all ranks, over the limit of 16.0 GiB");
  CHECK(total.where.pointer == "/buffers/b");

  // Initial values must fit the dtype.
  Error fit = parse_error(R"({"version": 1, "ranks": 4, "dtype": "int8",
    "buffers": {"x": {"count": 8, "init": "rank_index"}}, "program": []})");
  CHECK(fit.message == "init \"rank_index\" reaches 207 on rank 2, more than int8 can hold (127)");
  CHECK(fit.where.pointer == "/buffers/x/init");
  Error val = parse_error(R"({"version": 1, "ranks": 1, "dtype": "uint8",
    "buffers": {"x": {"init": {"values": [[1, 300]]}}}, "program": []})");
  CHECK(val.message == "value 300 does not fit in uint8 (0..255)");
  CHECK(val.where.pointer == "/buffers/x/init/values/0/1");
  Error rnd = parse_error(R"({"version": 1, "ranks": 1,
    "buffers": {"x": {"count": 2, "init": {"random": {"seed": 1, "min": 5, "max": 2}}}}, "program": []})");
  CHECK(rnd.message == "random min 5 is larger than max 2");
}

TEST_CASE("scenario error: scenario.version") {
  Error e = parse_error("{\"version\": 2, \"ranks\": 4, \"program\": []}");
  CHECK(e.id == "scenario.version");
  CHECK(e.message == "unsupported scenario version 2");
  check_where(e, 1, 2, "/version");
}

TEST_CASE("scenario error: scenario.unknown_dtype") {
  Error e = parse_error("{\"version\": 1, \"ranks\": 4, \"dtype\": \"float\", \"program\": []}");
  CHECK(e.id == "scenario.unknown_dtype");
  CHECK(e.message == "unknown dtype \"float\" (did you mean \"float32\"?)");
  CHECK(e.hint == "valid dtypes: int8, uint8, int32, int64, float16, bfloat16, float32, float64");
  check_where(e, 1, 28, "/dtype");
  CHECK(parse_error("{\"version\": 1, \"ranks\": 4, \"dtype\": \"complex\", \"program\": []}").message ==
        "unknown dtype \"complex\"");
}

TEST_CASE("scenario error: scenario.unknown_reduce_op") {
  Error e = parse_error(with_call("{\"op\": \"allreduce\", \"buffer\": \"x\", \"reduce_op\": \"add\"}"));
  CHECK(e.id == "scenario.unknown_reduce_op");
  CHECK(e.message == "unknown reduce_op \"add\" (did you mean \"sum\"?)");
  CHECK(e.hint == "valid reduce ops: sum, prod, min, max, avg");
  check_where(e, 8, 50, "/program/0/reduce_op");
}

TEST_CASE("scenario error: scenario.unknown_op") {
  Error e = parse_error(with_call("{\"op\": \"allreduc\", \"buffer\": \"x\"}"));
  CHECK(e.id == "scenario.unknown_op");
  CHECK(e.message == "unknown op \"allreduc\" (did you mean \"allreduce\"?)");
  CHECK(e.hint ==
        "valid ops: broadcast, reduce, allreduce, scatter, gather, allgather, reduce_scatter, alltoall, alltoallv, "
        "barrier, send, "
        "recv, isend, irecv, wait, compute, copy, accumulate, repeat, step");
  check_where(e, 8, 16, "/program/0/op");

  CHECK(parse_error(with_call("{\"op\": \"sendd\", \"buffer\": \"x\"}")).message ==
        "unknown op \"sendd\" (did you mean \"send\"?)");
  CHECK(parse_error(with_call("{\"op\": \"all-gather\"}")).message ==
        "unknown op \"all-gather\" (did you mean \"allgather\"?)");
}

TEST_CASE("scenario error: scenario.unknown_buffer") {
  Error e = parse_error(with_call("{\"op\": \"allgather\", \"send\": \"x\", \"recv\": \"tabel\"}"));
  CHECK(e.id == "scenario.unknown_buffer");
  CHECK(e.message == "unknown buffer \"tabel\" (did you mean \"table\"?)");
  CHECK(e.hint == "declared buffers: \"x\", \"table\"; or declare \"tabel\" under \"buffers\"");
  check_where(e, 8, 48, "/program/0/recv");
}

TEST_CASE("scenario error: scenario.unknown_algorithm") {
  Error e = parse_error(with_call("{\"op\": \"allreduce\", \"buffer\": \"x\", \"algorithm\": \"rign\"}"));
  CHECK(e.id == "scenario.unknown_algorithm");
  CHECK(e.message == "unknown algorithm \"rign\" for allreduce (did you mean \"ring\"?)");
  // Every registered algorithm is named, then the native one and custom.
  std::string names;
  for (const auto& n : algorithm_names(Collective::allreduce)) names += ", " + n;
  CHECK(e.hint == "valid algorithms for allreduce: auto" + names +
                      ", nccl (--backend nccl), mpi (--backend mpi), or custom with a \"body\"");
  CHECK(e.hint.find("auto, flat, tree, ring,") != std::string::npos);
  check_where(e, 8, 50, "/program/0/algorithm");
}

TEST_CASE("scenario error: scenario.buffer_too_small") {
  // In-place all-gather of 4 elements per rank needs 16 elements; x holds 8.
  Error e = parse_error(with_call("{\"op\": \"allgather\", \"buffer\": \"x\", \"count\": 4}"));
  CHECK(e.id == "scenario.buffer_too_small");
  CHECK(e.message == "buffer \"x\" is too small for allgather on rank 0: needs 16 elements, has 8");
  CHECK(e.hint == "give \"x\" at least 16 elements on rank 0, or lower \"count\"");
  check_where(e, 8, 35, "/program/0/buffer");

  // Scatter from root 1: only rank 0 holds the big table.
  Error s = parse_error(with_call("{\"op\": \"scatter\", \"send\": \"table\", \"recv\": \"x\", \"root\": 1}"));
  CHECK(s.message == "send buffer \"table\" is too small for scatter on rank 1: needs 32 elements, has 0");
  CHECK(s.where.pointer == "/program/0/send");

  // Derived count: an in-place all-gather needs at least one element per rank.
  Error d = parse_error(with_call("{\"op\": \"allgather\", \"buffer\": \"s\"}", ",\n    \"s\": {\"count\": 3}"));
  CHECK(d.message == "buffer \"s\" is too small for allgather on rank 0: needs at least 4 elements, has 3");
}

TEST_CASE("scenario error: scenario.in_place_unsupported") {
  Error e = parse_error(with_call("{\"op\": \"alltoall\", \"buffer\": \"x\"}"));
  CHECK(e.id == "scenario.in_place_unsupported");
  CHECK(e.message == "alltoall cannot run in place (\"buffer\": \"x\")");
  CHECK(e.hint == "give separate \"send\" and \"recv\" buffers");
  check_where(e, 8, 34, "/program/0/buffer");
}

TEST_CASE("scenario error: scenario.bad_call") {
  Error both = parse_error(with_call("{\"op\": \"allreduce\", \"buffer\": \"x\", \"send\": \"x\"}"));
  CHECK(both.id == "scenario.bad_call");
  CHECK(both.message == "allreduce names both \"buffer\" and \"send\"");
  check_where(both, 8, 35, "/program/0/buffer");
  Error none = parse_error(with_call("{\"op\": \"allreduce\"}"));
  CHECK(none.message == "allreduce names no buffer");
  check_where(none, 8, 15, "/program/0");
  Error half = parse_error(with_call("{\"op\": \"allreduce\", \"send\": \"x\"}"));
  CHECK(half.message == "allreduce has \"send\" but no \"recv\"");
  Error same = parse_error(with_call("{\"op\": \"allreduce\", \"send\": \"x\", \"recv\": \"x\"}"));
  CHECK(same.message == "\"send\" and \"recv\" both name buffer \"x\"");
  CHECK(same.hint == "use \"buffer\": \"x\" for an in-place call");
  Error barrier = parse_error(with_call("{\"op\": \"barrier\", \"buffer\": \"x\"}"));
  CHECK(barrier.message == "barrier takes no buffers, but \"buffer\" is given");
}

TEST_CASE("scenario error: scenario.unknown_init, conflicting_keys and bad_name") {
  Error init = parse_error(with_call("{\"op\": \"barrier\"}", ",\n    \"y\": {\"count\": 2, \"init\": \"ranks\"}"));
  CHECK(init.id == "scenario.unknown_init");
  CHECK(init.message == "unknown init \"ranks\" (did you mean \"rank\"?)");
  check_where(init, 7, 23, "/buffers/y/init");

  Error both =
      parse_error(with_call("{\"op\": \"barrier\"}", ",\n    \"y\": {\"count\": 2, \"counts\": [1, 1, 1, 1]}"));
  CHECK(both.id == "scenario.conflicting_keys");
  CHECK(both.message == "buffer \"y\" has both \"count\" and \"counts\"");

  Error name = parse_error(with_call("{\"op\": \"barrier\"}", ",\n    \"~y\": {\"count\": 2}"));
  CHECK(name.id == "scenario.bad_name");
  CHECK(name.message == "buffer name \"~y\" is not allowed");
}

TEST_CASE("scenario error: lowering a scenario built in code checks the same things") {
  Scenario s;
  s.ranks = 2;
  s.buffers.push_back(BufferSpec{"a", {4, 4}, {}, {}});
  ProgramOp op;
  op.op = "allreduce";
  op.buffer = "b";
  s.program.push_back(op);
  auto r = lower_scenario(s);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().id == "scenario.unknown_buffer");
  CHECK(r.error().where.pointer == "/program/0");
  CHECK(r.error().format() ==
        "error[scenario.unknown_buffer] /program/0: unknown buffer \"b\"\n"
        "  help: declared buffers: \"a\"; or declare \"b\" under \"buffers\"");

  s.program[0].buffer = "a";
  s.program[0].algorithm = "nope";
  auto alg = lower_scenario(s);
  REQUIRE_FALSE(alg.ok());
  CHECK(alg.error().id == "scenario.unknown_algorithm");

  s.program[0].algorithm = "ring";
  s.buffers[0].count = {4};
  auto shape = lower_scenario(s);
  REQUIRE_FALSE(shape.ok());
  CHECK(shape.error().message == "buffer \"a\" has counts for 1 ranks, but ranks is 2");
}

// ---------------------------------------------------------------------------
// Valid scenarios

TEST_CASE("scenario: every init kind") {
  Scenario s = parse_ok(R"({
  "version": 1, "ranks": 3, "dtype": "int32",
  "buffers": {
    "z": {"count": 4},
    "r": {"count": 4, "init": "rank"},
    "i": {"count": 4, "init": "index"},
    "ri": {"count": 4, "init": "rank_index"},
    "rnd": {"count": 64, "init": {"random": {"seed": 7, "min": -3, "max": 5}}},
    "v": {"init": {"values": [[1, 2], [3], [4.0, -5, 6]]}}
  },
  "program": []
})");
  REQUIRE(s.buffers.size() == 6);
  CHECK(s.dtype == DType::int32);
  CHECK(initial_value(s.buffers[0], 2, 3) == 0);
  CHECK(initial_value(s.buffers[1], 2, 3) == 2);
  CHECK(initial_value(s.buffers[2], 2, 3) == 3);
  CHECK(initial_value(s.buffers[3], 2, 3) == 203);
  const BufferSpec& rnd = s.buffers[4];
  CHECK(rnd.init.seed == 7);
  std::set<double> seen;
  for (std::int32_t r = 0; r < 3; ++r)
    for (std::uint64_t i = 0; i < 64; ++i) {
      const double x = initial_value(rnd, r, i);
      CHECK(x >= -3);
      CHECK(x <= 5);
      CHECK(x == std::floor(x));
      seen.insert(x);
    }
  CHECK(seen.size() == 9);  // every value of the range shows up
  // Deterministic, and independent of the order elements are asked for.
  CHECK(initial_value(rnd, 2, 63) == initial_value(rnd, 2, 63));
  BufferSpec other = rnd;
  other.init.seed = 8;
  int differ = 0;
  for (std::uint64_t i = 0; i < 64; ++i) differ += initial_value(rnd, 1, i) != initial_value(other, 1, i);
  CHECK(differ > 20);
  // Explicit values give the counts when "count" is absent.
  const BufferSpec& v = s.buffers[5];
  CHECK(v.count == std::vector<std::uint64_t>{2, 1, 3});
  CHECK(initial_value(v, 2, 1) == -5);
  CHECK(initial_value(v, 0, 1) == 2);
  // Full-width random ranges do not overflow.
  BufferSpec wide;
  wide.init.kind = InitKind::random;
  wide.init.min = INT64_MIN;
  wide.init.max = INT64_MAX;
  CHECK(std::isfinite(initial_value(wide, 0, 0)));
}

TEST_CASE("scenario: defaults") {
  Scenario s = parse_ok(R"({"version": 1, "ranks": 2, "buffers": {"x": {"count": 3}},
                            "program": [{"op": "allreduce", "buffer": "x"}]})");
  CHECK(s.dtype == DType::float32);
  CHECK(s.file == "x.json");
  CHECK(s.buffers[0].init.kind == InitKind::zeros);
  CHECK(s.buffers[0].count == std::vector<std::uint64_t>{3, 3});
  const ProgramOp& op = s.program[0];
  CHECK(op.coll == Collective::allreduce);
  CHECK(op.algorithm == "auto");
  CHECK(op.reduce_op == ReduceOp::sum);
  CHECK_FALSE(op.count.has_value());
  CHECK(op.where.pointer == "/program/0");
  CHECK(op.field_where.at("buffer").pointer == "/program/0/buffer");
  CHECK(op.field_where.at("buffer").line == 2);
}

TEST_CASE("scenario: count derivation follows NCCL's meaning of count") {
  Scenario s = parse_ok(R"({
  "version": 1, "ranks": 4,
  "buffers": {
    "v8": {"count": 8},
    "v32": {"count": 32},
    "w32": {"count": 32},
    "root_table": {"counts": [32, 8, 8, 8]},
    "uneven": {"counts": [8, 6, 8, 8]},
    "gather_out": {"counts": [0, 0, 40, 0]},
    "odd": {"count": 10}
  },
  "program": [
    {"op": "allreduce", "buffer": "v8"},
    {"op": "allreduce", "buffer": "uneven"},
    {"op": "allreduce", "send": "v8", "recv": "v32"},
    {"op": "broadcast", "send": "v32", "recv": "v8", "root": 2},
    {"op": "reduce", "send": "v8", "recv": "v32", "root": 3},
    {"op": "allgather", "buffer": "v32"},
    {"op": "allgather", "send": "v8", "recv": "v32"},
    {"op": "gather", "send": "v8", "recv": "gather_out", "root": 2},
    {"op": "reduce_scatter", "buffer": "v32"},
    {"op": "reduce_scatter", "send": "v32", "recv": "v8"},
    {"op": "scatter", "send": "root_table", "recv": "v8"},
    {"op": "scatter", "buffer": "root_table"},
    {"op": "alltoall", "send": "v32", "recv": "w32"},
    {"op": "alltoall", "send": "odd", "recv": "w32"},
    {"op": "allreduce", "buffer": "v32", "count": 5},
    {"op": "barrier"}
  ]
})");
  Schedule sch = lower_ok(s);
  REQUIRE(sch.calls.size() == 16);
  const std::uint64_t want[] = {8, 6, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 2, 5, 0};
  for (std::size_t i = 0; i < 16; ++i) {
    CAPTURE(i);
    CHECK(sch.calls[i].args.count == want[i]);
    CHECK(sch.calls[i].program_index == static_cast<std::int32_t>(i));
  }
  // The explicit count stays in the scenario; derived ones are not written back.
  CHECK(s.program[14].count == 5u);
  CHECK_FALSE(s.program[0].count.has_value());
}

TEST_CASE("scenario: lowering builds the schedule's buffers and calls") {
  Scenario s = parse_ok(R"({
  "version": 1, "ranks": 4, "dtype": "int32",
  "buffers": {"x": {"count": 8, "init": "rank"}, "y": {"count": 32}},
  "program": [
    {"op": "allreduce", "buffer": "x", "algorithm": "ring", "reduce_op": "max", "caption": "max everywhere"},
    {"op": "allgather", "send": "x", "recv": "y", "algorithm": "bruck"},
    {"op": "broadcast", "buffer": "x", "root": 3},
    {"op": "barrier", "algorithm": "dissemination"}
  ]
})");
  Schedule sch = lower_ok(s);
  CHECK(sch.ranks == 4);
  CHECK(sch.dtype == DType::int32);
  REQUIRE(sch.buffers.size() >= 2);
  CHECK(sch.buffers[0].name == "x");
  CHECK(sch.buffers[0].count == std::vector<std::uint64_t>(4, 8));
  CHECK_FALSE(sch.buffers[0].scratch);
  CHECK(sch.buffers[1].name == "y");
  REQUIRE(sch.calls.size() == 4);

  const Call& ar = sch.calls[0];
  CHECK(ar.algorithm == "ring");
  CHECK_FALSE(ar.auto_picked);
  CHECK(ar.caption == "max everywhere");
  CHECK(ar.args.coll == Collective::allreduce);
  CHECK(ar.args.in_place);
  CHECK(ar.args.in_buf == 0);
  CHECK(ar.args.out_buf == 0);
  CHECK(ar.args.op == ReduceOp::max);
  CHECK(ar.args.dtype == DType::int32);
  CHECK(ar.args.ranks == 4);
  CHECK(ar.args.world_rank.empty());

  const Call& ag = sch.calls[1];
  CHECK(ag.algorithm == "bruck");
  CHECK_FALSE(ag.args.in_place);
  CHECK(ag.args.in_buf == 0);
  CHECK(ag.args.out_buf == 1);
  CHECK(ag.args.count == 8);

  const Call& bc = sch.calls[2];
  CHECK(bc.auto_picked);
  CHECK(bc.args.root == 3);
  CHECK_FALSE(bc.algorithm.empty());

  const Call& bar = sch.calls[3];
  CHECK(bar.algorithm == "dissemination");
  CHECK(bar.args.coll == Collective::barrier);
  CHECK(bar.args.in_buf == -1);
}

TEST_CASE("scenario: a custom algorithm with an empty body survives the round trip") {
  // Found by fuzzing: the writer left out an empty "body", and the reader then asked for one.
  Scenario a = parse_ok(R"({"version": 1, "ranks": 2, "buffers": {"x": {"count": 4}},
    "program": [{"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": []}]})");
  REQUIRE(a.program.size() == 1);
  CHECK(a.program[0].body.empty());
  const std::string out = to_json(a);
  CHECK(out.find("\"body\": []") != std::string::npos);
  auto b = parse_scenario(out, "x.json");
  if (!b) FAIL_CHECK(b.error().format());
  REQUIRE(b.ok());
  REQUIRE(b->program.size() == 1);
  CHECK(b->program[0].algorithm == "custom");
  CHECK(b->program[0].body.empty());
  CHECK(to_json(*b) == out);
}

TEST_CASE("scenario: to_json round trip") {
  const std::string text = R"({
  "version": 1,
  "title": "Round trip \"quoted\" \u00e9",
  "description": "Everything the format has.\nTwo lines.",
  "ranks": 4,
  "dtype": "float64",
  "buffers": {
    "x": {"count": 8, "init": "rank"},
    "y": {"count": 32, "init": "index"},
    "z": {"count": 8, "init": "rank_index"},
    "table": {"counts": [32, 0, 0, 0], "init": {"random": {"seed": 18446744073709551615, "min": -4, "max": 9}}},
    "v": {"init": {"values": [[1.5, -2], [0.1], [1e300], [3, 4, 5]]}},
    "a/b": {"count": 1}
  },
  "program": [
    {"op": "allreduce", "buffer": "x", "algorithm": "ring", "reduce_op": "avg", "caption": "average"},
    {"op": "scatter", "send": "table", "recv": "x", "root": 0, "count": 8},
    {"op": "gather", "send": "x", "recv": "y", "root": 0},
    {"op": "reduce", "buffer": "x", "root": 2, "reduce_op": "prod"},
    {"op": "reduce_scatter", "send": "y", "recv": "x"},
    {"op": "alltoall", "send": "y", "recv": "y2", "algorithm": "bruck"},
    {"op": "barrier", "caption": "wait for everyone"}
  ]
})";
  // "y2" is declared after the fact to check buffer order is kept too.
  std::string with_y2 = text;
  with_y2.replace(with_y2.find("\"a/b\""), 0, "\"y2\": {\"count\": 32},\n    ");
  Scenario a = parse_ok(with_y2);
  const std::string out = to_json(a);
  auto b_r = parse_scenario(out, "x.json");
  if (!b_r) FAIL_CHECK(b_r.error().format());
  REQUIRE(b_r.ok());
  const Scenario& b = *b_r;
  CHECK(b.version == a.version);
  CHECK(b.title == a.title);
  CHECK(b.description == a.description);
  CHECK(b.ranks == a.ranks);
  CHECK(b.dtype == a.dtype);
  REQUIRE(b.buffers.size() == a.buffers.size());
  for (std::size_t i = 0; i < a.buffers.size(); ++i) {
    CAPTURE(a.buffers[i].name);
    CHECK(b.buffers[i].name == a.buffers[i].name);
    CHECK(b.buffers[i].count == a.buffers[i].count);
    CHECK(b.buffers[i].init.kind == a.buffers[i].init.kind);
    CHECK(b.buffers[i].init.seed == a.buffers[i].init.seed);
    CHECK(b.buffers[i].init.min == a.buffers[i].init.min);
    CHECK(b.buffers[i].init.max == a.buffers[i].init.max);
    CHECK(b.buffers[i].init.values == a.buffers[i].init.values);
  }
  REQUIRE(b.program.size() == a.program.size());
  for (std::size_t i = 0; i < a.program.size(); ++i) {
    CAPTURE(i);
    const ProgramOp& x = a.program[i];
    const ProgramOp& y = b.program[i];
    CHECK(y.op == x.op);
    CHECK(y.coll == x.coll);
    CHECK(y.buffer == x.buffer);
    CHECK(y.send == x.send);
    CHECK(y.recv == x.recv);
    CHECK(y.count == x.count);
    CHECK(y.algorithm == x.algorithm);
    CHECK(y.reduce_op == x.reduce_op);
    CHECK(y.root == x.root);
    CHECK(y.caption == x.caption);
  }
  // Writing again gives the same text.
  CHECK(to_json(b) == out);
  // Small things stay on one line.
  CHECK(out.find("\"x\": {\"count\": 8, \"init\": \"rank\"}") != std::string::npos);
}

TEST_CASE("scenario: damaged files fail cleanly, with one-line messages") {
  const std::string good = R"({
  "version": 1, "title": "t\u00e9", "ranks": 4, "dtype": "int32",
  "buffers": {"x": {"count": 8, "init": "rank"}, "t": {"counts": [32, 0, 0, 0], "init": {"values": [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31],
    [], [], []]}}},
  "program": [{"op": "scatter", "send": "t", "recv": "x", "root": 0, "count": 8, "caption": "deal"},
              {"op": "allreduce", "buffer": "x", "algorithm": "ring", "reduce_op": "max"}]
})";
  REQUIRE(parse_scenario(good, "x.json").ok());
  auto one_line = [](const Error& e) {
    CHECK(e.id.rfind("scenario.", 0) == 0);
    CHECK(e.message.find('\n') == std::string::npos);
    CHECK(e.hint.find('\n') == std::string::npos);
    CHECK_FALSE(e.message.empty());
  };
  // Every strict prefix is broken JSON.
  for (std::size_t n = 0; n < good.size(); ++n) {
    auto r = parse_scenario(good.substr(0, n), "x.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == "scenario.parse");
    CHECK(r.error().where.line >= 1);
    one_line(r.error());
  }
  // Single-byte damage anywhere: never a crash, always a clean result.
  int errors = 0;
  for (std::size_t i = 0; i < good.size(); ++i)
    for (char c : {'"', '}', ']', ',', '9', '-', 'x', '\xFF', '\0'}) {
      std::string bad = good;
      bad[i] = c;
      auto r = parse_scenario(bad, "x.json");
      if (r.ok()) {
        CHECK(lower_scenario(*r).ok());
        continue;
      }
      ++errors;
      one_line(r.error());
    }
  CHECK(errors > 0);
}

TEST_CASE("scenario: oversized text is refused before parsing") {
  std::string text =
      "{\"version\": 1, \"ranks\": 1, \"title\": \"" + std::string(5u << 20, 'a') + "\", \"program\": []}";
  Error e = parse_error(text);
  CHECK(e.id == "scenario.out_of_range");
  CHECK(e.message == "scenario is too large (5.0 MiB, the limit is 4.0 MiB)");
}

// ---------------------------------------------------------------------------
// The lessons

TEST_CASE("scenario lessons: every scenarios/*.json loads and lowers") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(COLLSCOPE_SOURCE_DIR) / "scenarios";
  REQUIRE(fs::is_directory(dir));
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 10);
  std::set<Collective> covered;
  for (const auto& f : files) {
    CAPTURE(f.string());
    if (f.string().find("deadlock") != std::string::npos) continue;  // fails on purpose (test_lessons.cpp)
    auto s = load_scenario(f.string());
    if (!s) FAIL_CHECK(s.error().format());
    REQUIRE(s.ok());
    CHECK_FALSE(s->title.empty());
    CHECK_FALSE(s->description.empty());
    CHECK_FALSE(s->program.empty());
    for (const auto& op : s->program) {
      CHECK_FALSE(op.caption.empty());
      if (op.coll) covered.insert(*op.coll);
    }
    auto sch = lower_scenario(*s);
    if (!sch) FAIL_CHECK(sch.error().format());
    CHECK(sch.ok());
    // The writer keeps every lesson intact.
    auto again = parse_scenario(to_json(*s), f.string());
    if (!again) FAIL_CHECK(again.error().format());
    CHECK(again.ok());
  }
  CHECK(covered.size() == std::size(kAllCollectives));
  CHECK(fs::exists(dir / "00-allreduce-ring.json"));
}
