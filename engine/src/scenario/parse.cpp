// JSON text -> validated Scenario (format version 1, see scenario.h).
//
// The JSON reader gives a tree in which every key and value knows its line,
// column and JSON Pointer; this file walks that tree and checks the scenario's
// shape: keys, types, ranges, names. Each check fails with one Error that says
// what is wrong, where, and what to do. Checks run in a fixed order (version,
// keys, ranks, dtype, buffers, program), so a file with several mistakes always
// reports the same one first.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "collscope/scenario.h"
#include "scenario/json.h"
#include "scenario/resolve.h"
#include "scenario/suggest.h"

namespace collscope {
namespace {

using json::literal;
using json::Member;
using json::quote;
using json::Value;
using scenario::closest;
using scenario::join;

struct Failure {
  Error error;
};

const std::vector<std::string> kTopKeys = {"version", "title", "description", "ranks", "dtype", "buffers", "program"};
const std::vector<std::string> kBufferKeys = {"count", "counts", "init"};
const std::vector<std::string> kInitObjectKeys = {"random", "values"};
const std::vector<std::string> kRandomKeys = {"seed", "min", "max"};
const std::vector<std::string> kCallKeys = {"op",        "buffer",    "send", "recv",   "count",
                                            "algorithm", "reduce_op", "root", "caption"};

// Names people often type for a dtype or an operator, used only to suggest the real one.
const std::unordered_map<std::string, std::string> kDTypeAliases = {
    {"float", "float32"}, {"single", "float32"}, {"fp32", "float32"}, {"f32", "float32"},  {"double", "float64"},
    {"fp64", "float64"},  {"f64", "float64"},    {"half", "float16"}, {"fp16", "float16"}, {"f16", "float16"},
    {"bf16", "bfloat16"}, {"int", "int32"},      {"i32", "int32"},    {"long", "int64"},   {"i64", "int64"},
    {"char", "int8"},     {"i8", "int8"},        {"byte", "uint8"},   {"uchar", "uint8"},  {"u8", "uint8"}};
const std::unordered_map<std::string, std::string> kOpAliases = {
    {"add", "sum"}, {"plus", "sum"}, {"+", "sum"},       {"mul", "prod"},    {"product", "prod"}, {"times", "prod"},
    {"*", "prod"},  {"mean", "avg"}, {"average", "avg"}, {"minimum", "min"}, {"maximum", "max"}};

std::optional<std::string> suggest(const std::string& word, const std::vector<std::string>& valid,
                                   const std::unordered_map<std::string, std::string>& aliases = {}) {
  if (auto it = aliases.find(word); it != aliases.end()) return it->second;
  return closest(word, valid);
}

template <class E, std::size_t N>
std::vector<std::string> names_of(const E (&all)[N]) {
  std::vector<std::string> v;
  for (E e : all) v.emplace_back(name_of(e));
  return v;
}

// The values a dtype can hold, for checking initial values before they are converted.
struct DTypeRange {
  double lo, hi;
  bool whole;  // integer dtype: values must be whole numbers
};

DTypeRange range_of(DType t) {
  switch (t) {
    case DType::int8: return {-128, 127, true};
    case DType::uint8: return {0, 255, true};
    case DType::int32: return {-2147483648.0, 2147483647.0, true};
    case DType::int64: return {-9223372036854775808.0, 9223372036854775807.0, true};
    case DType::float16: return {-65504, 65504, false};
    case DType::bfloat16: return {-3.3895313892515355e38, 3.3895313892515355e38, false};
    case DType::float32: return {-3.4028234663852886e38, 3.4028234663852886e38, false};
    case DType::float64: return {-1.7976931348623157e308, 1.7976931348623157e308, false};
  }
  return {0, 0, false};
}

std::string number_text(double v) {
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string range_text(DType t) {
  const auto r = range_of(t);
  return number_text(r.lo) + ".." + number_text(r.hi);
}

class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  Scenario read(const Value& doc) {
    Scenario s;
    s.file = file_;
    if (!doc.is_object())
      fail("scenario.wrong_type", "scenario must be a JSON object, got " + json::describe(doc),
           "a scenario file is one object: {\"version\": 1, \"ranks\": 4, ...}", at(doc));

    // The version first: a newer file may use keys this version does not know.
    const Member* version = doc.find("version");
    if (!version) fail("scenario.missing_key", "scenario is missing \"version\"", "add \"version\": 1", at(doc));
    const auto v = integer(version->value, at(*version), "version", "\"version\": 1");
    if (v.negative || v.uvalue != 1)
      fail("scenario.version", "unsupported scenario version " + literal(version->value),
           "this collscope reads version 1 files; write \"version\": 1", at(*version));
    s.version = 1;

    check_keys(doc, kTopKeys, "at the top of a scenario");
    if (const Member* m = doc.find("title")) s.title = text_of(*m, "\"title\": \"All-reduce on a ring\"");
    if (const Member* m = doc.find("description")) s.description = text_of(*m, "\"description\": \"Four ranks ...\"");

    const Member* ranks = doc.find("ranks");
    if (!ranks)
      fail("scenario.missing_key", "scenario is missing \"ranks\"", "add \"ranks\": 4 (the number of ranks)", at(doc));
    const auto r = integer(ranks->value, at(*ranks), "ranks", "\"ranks\": 4");
    if (r.negative || r.uvalue < 1 || r.uvalue > static_cast<std::uint64_t>(kMaxRanks))
      throw Failure{scenario::ranks_range_error(literal(ranks->value), at(*ranks))};
    s.ranks = static_cast<std::int32_t>(r.uvalue);
    ranks_ = s.ranks;

    if (const Member* m = doc.find("dtype")) {
      const std::string name = text_of(*m, "\"dtype\": \"float32\"");
      auto t = parse_dtype(name);
      if (!t) {
        const auto valid = names_of(kAllDTypes);
        std::string msg = "unknown dtype " + quote(name);
        if (auto c = suggest(name, valid, kDTypeAliases)) msg += " (did you mean \"" + *c + "\"?)";
        fail("scenario.unknown_dtype", msg, "valid dtypes: " + join(valid), at(*m));
      }
      s.dtype = *t;
    }
    dtype_ = s.dtype;

    if (const Member* m = doc.find("buffers")) read_buffers(*m, s);

    const Member* program = doc.find("program");
    if (!program)
      fail("scenario.missing_key", "scenario is missing \"program\"",
           "add \"program\": [{\"op\": \"allreduce\", \"buffer\": \"x\"}]", at(doc));
    if (!program->value.is_array())
      wrong_type("program", "an array of calls", program->value, at(*program),
                 "\"program\": [{\"op\": \"allreduce\", \"buffer\": \"x\"}]");
    scenario::CallResolver resolver(s);
    for (std::size_t i = 0; i < program->value.items.size(); ++i) {
      ProgramOp op = read_call(program->value.items[i]);
      if (auto a = resolver.resolve(op, static_cast<std::int32_t>(i)); !a) throw Failure{a.error()};
      s.program.push_back(std::move(op));
    }
    return s;
  }

 private:
  const std::string& file_;
  std::int32_t ranks_ = 1;
  DType dtype_ = DType::float32;

  Location at(const Value& v) const { return {file_, v.line, v.col, v.pointer}; }
  Location at(const Member& m) const { return {file_, m.line, m.col, m.value.pointer}; }

  [[noreturn]] void fail(std::string id, std::string message, std::string hint, Location where) const {
    throw Failure{make_error(std::move(id), std::move(message), std::move(hint), std::move(where))};
  }

  [[noreturn]] void wrong_type(const std::string& what, const std::string& expected, const Value& v, Location where,
                               const std::string& example) const {
    fail("scenario.wrong_type", what + " must be " + expected + ", got " + json::describe(v),
         "write it like " + example, std::move(where));
  }

  // Rejects any key of `obj` outside `valid`, suggesting the closest valid one.
  void check_keys(const Value& obj, const std::vector<std::string>& valid, const std::string& place) const {
    for (const auto& m : obj.members) {
      if (std::find(valid.begin(), valid.end(), m.key) != valid.end()) continue;
      std::string msg = "unknown key " + quote(m.key);
      if (auto c = closest(m.key, valid)) msg += " (did you mean \"" + *c + "\"?)";
      fail("scenario.unknown_key", msg, "valid keys " + place + ": " + join(valid),
           Location{file_, m.line, m.col, obj.pointer});
    }
  }

  std::string text_of(const Member& m, const std::string& example) const {
    if (!m.value.is_string()) wrong_type(m.key, "a string", m.value, at(m), example);
    return m.value.text;
  }

  // A number that is a whole number fitting 64 bits (signed or unsigned).
  json::IntegerValue integer(const Value& v, const Location& where, const std::string& what,
                             const std::string& example) const {
    if (!v.is_number()) wrong_type(what, "an integer", v, where, example);
    auto i = json::to_integer(v);
    if (i.status == json::IntegerValue::Status::not_integer) wrong_type(what, "an integer", v, where, example);
    return i;
  }

  // A count of elements: 0 or more, and at most kMaxCountElements.
  std::uint64_t count(const Value& v, const Location& where, const std::string& what,
                      const std::string& example) const {
    const auto i = integer(v, where, what, example);
    if (i.status == json::IntegerValue::Status::too_small || (i.status == json::IntegerValue::Status::ok && i.negative))
      fail("scenario.out_of_range", what + " " + literal(v) + " is negative",
           "a count is a number of elements, 0 or more", where);
    if (i.status == json::IntegerValue::Status::too_large || i.uvalue > scenario::kMaxCountElements)
      throw Failure{scenario::count_too_large_error(literal(v), where)};
    return i.uvalue;
  }

  // --- buffers --------------------------------------------------------------------

  void read_buffers(const Member& buffers, Scenario& s) {
    if (!buffers.value.is_object())
      wrong_type("buffers", "an object of named buffers", buffers.value, at(buffers),
                 "\"buffers\": {\"x\": {\"count\": 8, \"init\": \"rank\"}}");
    for (const auto& m : buffers.value.members) s.buffers.push_back(read_buffer(m));
    // The total over all buffers and ranks, reported at the buffer that crosses the limit.
    if (auto over = scenario::first_over_total(s); over >= 0)
      throw Failure{scenario::total_bytes_error(scenario::total_bytes(s),
                                                at(buffers.value.members[static_cast<std::size_t>(over)]))};
  }

  BufferSpec read_buffer(const Member& m) {
    BufferSpec b;
    b.name = m.key;
    b.where = at(m);
    if (b.name.empty() || b.name[0] == '~')
      fail("scenario.bad_name", "buffer name " + quote(b.name) + " is not allowed",
           "name buffers with a non-empty name that does not start with '~' (reserved for scratch buffers)", at(m));
    const Value& v = m.value;
    if (!v.is_object())
      wrong_type("buffer " + quote(b.name), "an object", v, at(m),
                 quote(b.name) + ": {\"count\": 8, \"init\": \"rank\"}");
    check_keys(v, kBufferKeys, "in a buffer");

    const Member* count_m = v.find("count");
    const Member* counts_m = v.find("counts");
    const Member* init_m = v.find("init");
    if (count_m && counts_m)
      fail("scenario.conflicting_keys", "buffer " + quote(b.name) + " has both \"count\" and \"counts\"",
           "keep \"count\" for the same size on every rank, or \"counts\" for one size per rank", at(*counts_m));

    // Element counts per rank, each checked against the per-buffer byte limit.
    auto check_bytes = [&](std::uint64_t n, std::int32_t rank, const Location& where) {
      if (n > kMaxBufferBytes / size_of(dtype_))
        throw Failure{scenario::buffer_bytes_error(b.name, rank, n, dtype_, where)};
    };
    if (count_m) {
      const std::uint64_t n = count(count_m->value, at(*count_m), "count", "\"count\": 8");
      check_bytes(n, 0, at(*count_m));
      b.count.assign(static_cast<std::size_t>(ranks_), n);
    } else if (counts_m) {
      const Value& arr = counts_m->value;
      if (!arr.is_array())
        wrong_type("counts", "an array with one count per rank", arr, at(*counts_m), "\"counts\": [16, 0, 0, 0]");
      if (arr.items.size() != static_cast<std::size_t>(ranks_))
        fail("scenario.out_of_range",
             "counts has " + std::to_string(arr.items.size()) + " entries, but ranks is " + std::to_string(ranks_),
             "give one count per rank (" + std::to_string(ranks_) + " numbers)", at(*counts_m));
      for (std::size_t r = 0; r < arr.items.size(); ++r) {
        const std::uint64_t n = count(arr.items[r], at(arr.items[r]), "count", "\"counts\": [16, 0, 0, 0]");
        check_bytes(n, static_cast<std::int32_t>(r), at(arr.items[r]));
        b.count.push_back(n);
      }
    }

    if (init_m) b.init = read_init(*init_m);

    if (b.count.empty()) {
      // Without a count, explicit values give the size: one row per rank.
      if (b.init.kind != InitKind::values)
        fail("scenario.missing_key", "buffer " + quote(b.name) + " is missing \"count\"",
             "add \"count\": 8 (elements on every rank) or \"counts\": [...] (one per rank)", at(m));
      const Value& rows = init_m->value.find("values")->value;
      check_rows(rows, b);
      for (std::size_t r = 0; r < b.init.values.size(); ++r) {
        check_bytes(b.init.values[r].size(), static_cast<std::int32_t>(r), at(rows.items[r]));
        b.count.push_back(b.init.values[r].size());
      }
    } else if (b.init.kind == InitKind::values) {
      const Value& rows = init_m->value.find("values")->value;
      check_rows(rows, b);
      for (std::size_t r = 0; r < b.count.size(); ++r)
        if (b.init.values[r].size() != b.count[r])
          fail("scenario.out_of_range",
               "values row " + std::to_string(r) + " has " + std::to_string(b.init.values[r].size()) +
                   " numbers, but buffer " + quote(b.name) + " holds " + std::to_string(b.count[r]) + " on rank " +
                   std::to_string(r),
               "give rank " + std::to_string(r) + " exactly " + std::to_string(b.count[r]) + " numbers",
               at(rows.items[r]));
    }

    if (init_m) check_init_fits(b, *init_m);
    return b;
  }

  void check_rows(const Value& rows, const BufferSpec& b) const {
    if (rows.items.size() != static_cast<std::size_t>(ranks_))
      fail("scenario.out_of_range",
           "values has " + std::to_string(rows.items.size()) + " rows, but ranks is " + std::to_string(ranks_),
           "give one row of numbers per rank for buffer " + quote(b.name), at(rows));
  }

  BufferInit read_init(const Member& m) const {
    BufferInit init;
    const Value& v = m.value;
    const std::vector<std::string> simple = {"zeros", "rank", "index", "rank_index"};
    const std::string init_hint =
        "valid inits: \"zeros\", \"rank\", \"index\", \"rank_index\", {\"random\": {\"seed\": 1, \"min\": 0, "
        "\"max\": 9}}, {\"values\": [[...], ...]}";
    if (v.is_string()) {
      if (v.text == "zeros")
        init.kind = InitKind::zeros;
      else if (v.text == "rank")
        init.kind = InitKind::rank;
      else if (v.text == "index")
        init.kind = InitKind::index;
      else if (v.text == "rank_index")
        init.kind = InitKind::rank_index;
      else if (v.text == "random")
        fail("scenario.wrong_type", "init \"random\" must be an object with its settings",
             "write it like \"init\": {\"random\": {\"seed\": 1, \"min\": 0, \"max\": 9}}", at(m));
      else if (v.text == "values")
        fail("scenario.wrong_type", "init \"values\" must be an object with the values",
             "write it like \"init\": {\"values\": [[1, 2], [3, 4]]} (one row per rank)", at(m));
      else {
        std::string msg = "unknown init " + quote(v.text);
        if (auto c = closest(v.text, {"zeros", "rank", "index", "rank_index", "random", "values"}))
          msg += " (did you mean \"" + *c + "\"?)";
        fail("scenario.unknown_init", msg, init_hint, at(m));
      }
      return init;
    }
    if (!v.is_object()) wrong_type("init", "a string or an object", v, at(m), "\"init\": \"rank\"");
    check_keys(v, kInitObjectKeys, "in an init object");
    const Member* random = v.find("random");
    const Member* values = v.find("values");
    if (random && values)
      fail("scenario.conflicting_keys", "init has both \"random\" and \"values\"", "keep one of them", at(*values));
    if (!random && !values)
      fail("scenario.missing_key", "init object is missing \"random\" or \"values\"", init_hint, at(v));

    if (random) {
      init.kind = InitKind::random;
      const Value& r = random->value;
      if (!r.is_object())
        wrong_type("random", "an object", r, at(*random), "\"random\": {\"seed\": 1, \"min\": 0, \"max\": 9}");
      check_keys(r, kRandomKeys, "in random");
      if (const Member* s = r.find("seed")) {
        const auto i = integer(s->value, at(*s), "seed", "\"seed\": 1");
        if (i.status == json::IntegerValue::Status::too_small ||
            (i.status == json::IntegerValue::Status::ok && i.negative))
          fail("scenario.out_of_range", "seed " + literal(s->value) + " is negative", "use a seed of 0 or more",
               at(*s));
        if (i.status == json::IntegerValue::Status::too_large)
          fail("scenario.out_of_range", "seed " + literal(s->value) + " does not fit in 64 bits",
               "use a seed from 0 to 18446744073709551615", at(*s));
        init.seed = i.uvalue;
      }
      auto bound = [&](const char* key, std::int64_t& out) {
        const Member* b = r.find(key);
        if (!b) return;
        const auto i = integer(b->value, at(*b), key, std::string("\"") + key + "\": 9");
        if (i.status != json::IntegerValue::Status::ok ||
            (!i.negative && i.uvalue > static_cast<std::uint64_t>(INT64_MAX)))
          fail("scenario.out_of_range", std::string(key) + " " + literal(b->value) + " does not fit in 64 bits",
               "use a bound between -9223372036854775808 and 9223372036854775807", at(*b));
        out = i.value;
      };
      bound("min", init.min);
      bound("max", init.max);
      if (init.min > init.max) {
        const Member* where = r.find("min") ? r.find("min") : r.find("max");
        fail("scenario.out_of_range",
             "random min " + std::to_string(init.min) + " is larger than max " + std::to_string(init.max),
             "make min <= max (defaults: min 0, max 9)", at(*where));
      }
      return init;
    }

    init.kind = InitKind::values;
    const Value& rows = values->value;
    if (!rows.is_array())
      wrong_type("values", "an array with one row per rank", rows, at(*values), "\"values\": [[1, 2], [3, 4]]");
    for (const auto& row : rows.items) {
      if (!row.is_array()) wrong_type("values row", "an array of numbers", row, at(row), "[1, 2, 3]");
      std::vector<double> out;
      out.reserve(row.items.size());
      for (const auto& x : row.items) {
        if (!x.is_number()) wrong_type("value", "a number", x, at(x), "3");
        if (std::isinf(x.number))
          fail("scenario.out_of_range", "value " + literal(x) + " is too large for any dtype", "use a smaller number",
               at(x));
        out.push_back(x.number);
      }
      init.values.push_back(std::move(out));
    }
    return init;
  }

  // Initial values must be representable in the dtype (an int8 cannot start at 300).
  void check_init_fits(const BufferSpec& b, const Member& init_m) const {
    const DTypeRange range = range_of(dtype_);
    const std::string dt(name_of(dtype_));
    const std::string fix = "use a wider dtype, or a smaller buffer or init";
    auto too_big = [&](const std::string& what, double reach, std::int32_t rank) {
      fail("scenario.out_of_range",
           "init \"" + what + "\" reaches " + number_text(reach) + " on rank " + std::to_string(rank) + ", more than " +
               dt + " can hold (" + number_text(range.hi) + ")",
           fix, at(init_m));
    };
    switch (b.init.kind) {
      case InitKind::zeros: return;
      case InitKind::rank:
        if (ranks_ - 1 > range.hi) too_big("rank", ranks_ - 1, ranks_ - 1);
        return;
      case InitKind::index:
      case InitKind::rank_index: {
        const bool with_rank = b.init.kind == InitKind::rank_index;
        for (std::int32_t r = 0; r < ranks_; ++r) {
          const std::uint64_t n = b.count[static_cast<std::size_t>(r)];
          if (n == 0) continue;
          const double reach = (with_rank ? 100.0 * r : 0.0) + static_cast<double>(n - 1);
          if (reach > range.hi) too_big(with_rank ? "rank_index" : "index", reach, r);
        }
        return;
      }
      case InitKind::random:
        if (static_cast<double>(b.init.min) < range.lo || static_cast<double>(b.init.max) > range.hi)
          fail("scenario.out_of_range",
               "random range " + std::to_string(b.init.min) + ".." + std::to_string(b.init.max) + " does not fit in " +
                   dt + " (" + range_text(dtype_) + ")",
               "choose min and max inside " + range_text(dtype_) + ", or a wider dtype", at(init_m));
        return;
      case InitKind::values: {
        const Value& rows = init_m.value.find("values")->value;
        for (std::size_t r = 0; r < b.init.values.size(); ++r)
          for (std::size_t i = 0; i < b.init.values[r].size(); ++i) {
            const double x = b.init.values[r][i];
            const Value& v = rows.items[r].items[i];
            if (range.whole && x != std::floor(x))
              fail("scenario.wrong_type", "value must be a whole number for dtype " + dt + ", got number " + literal(v),
                   "use whole numbers, or a floating dtype such as float32", at(v));
            if (x < range.lo || x > range.hi)
              fail("scenario.out_of_range",
                   "value " + literal(v) + " does not fit in " + dt + " (" + range_text(dtype_) + ")",
                   "use values inside " + range_text(dtype_) + ", or a wider dtype", at(v));
          }
        return;
      }
    }
  }

  // --- program --------------------------------------------------------------------

  ProgramOp read_call(const Value& v) const {
    ProgramOp op;
    op.where = at(v);
    if (!v.is_object())
      wrong_type("program entry", "an object", v, at(v), "{\"op\": \"allreduce\", \"buffer\": \"x\"}");
    const auto colls = names_of(kAllCollectives);
    const Member* op_m = v.find("op");
    if (!op_m)
      fail("scenario.missing_key", "program entry is missing \"op\"", "add \"op\" with one of: " + join(colls), at(v));
    op.op = text_of(*op_m, "\"op\": \"allreduce\"");
    op.coll = parse_collective(op.op);
    if (!op.coll) throw Failure{scenario::unknown_op_error(op.op, at(*op_m))};
    const Collective c = *op.coll;
    const std::string cname(name_of(c));

    // Keys that exist for calls but not for this collective are refused too, so
    // that nothing the user wrote is silently ignored.
    std::vector<std::string> valid;
    for (const auto& k : kCallKeys) {
      if (k == "root" && !has_root(c)) continue;
      if (k == "reduce_op" && !is_reducing(c)) continue;
      if (k == "count" && c == Collective::barrier) continue;
      valid.push_back(k);
    }
    for (const auto& m : v.members) {
      if (std::find(valid.begin(), valid.end(), m.key) != valid.end()) continue;
      if (std::find(kCallKeys.begin(), kCallKeys.end(), m.key) != kCallKeys.end()) {
        std::string why = m.key == "root"        ? "only broadcast, reduce, scatter and gather have a root"
                          : m.key == "reduce_op" ? "only reduce, allreduce and reduce_scatter combine values"
                                                 : "a barrier moves no data";
        fail("scenario.unknown_key", "key " + quote(m.key) + " does not apply to " + cname, "remove it: " + why,
             Location{file_, m.line, m.col, v.pointer});
      }
    }
    check_keys(v, valid, "for " + cname);

    for (const auto& m : v.members) op.field_where[m.key] = at(m);
    if (const Member* m = v.find("buffer")) op.buffer = text_of(*m, "\"buffer\": \"x\"");
    if (const Member* m = v.find("send")) op.send = text_of(*m, "\"send\": \"x\"");
    if (const Member* m = v.find("recv")) op.recv = text_of(*m, "\"recv\": \"y\"");
    if (const Member* m = v.find("count")) op.count = count(m->value, at(*m), "count", "\"count\": 8");
    if (const Member* m = v.find("algorithm")) op.algorithm = text_of(*m, "\"algorithm\": \"ring\"");
    if (const Member* m = v.find("caption")) op.caption = text_of(*m, "\"caption\": \"every rank ends with the sum\"");
    if (const Member* m = v.find("reduce_op")) {
      const std::string name = text_of(*m, "\"reduce_op\": \"sum\"");
      auto o = parse_reduce_op(name);
      if (!o) {
        const auto ops = names_of(kAllReduceOps);
        std::string msg = "unknown reduce_op " + quote(name);
        if (auto s = suggest(name, ops, kOpAliases)) msg += " (did you mean \"" + *s + "\"?)";
        fail("scenario.unknown_reduce_op", msg, "valid reduce ops: " + join(ops), at(*m));
      }
      op.reduce_op = *o;
    }
    if (const Member* m = v.find("root")) {
      const auto i = integer(m->value, at(*m), "root", "\"root\": 0");
      if (i.status != json::IntegerValue::Status::ok || i.negative || i.uvalue >= static_cast<std::uint64_t>(ranks_))
        throw Failure{scenario::root_range_error(literal(m->value), ranks_, at(*m))};
      op.root = static_cast<std::int32_t>(i.uvalue);
    }
    return op;
  }
};

}  // namespace

Result<Scenario> parse_scenario(const std::string& text, const std::string& file_name) {
  if (text.size() > scenario::kMaxScenarioBytes)
    return make_error("scenario.out_of_range",
                      "scenario is too large (" + scenario::human_bytes(text.size()) + ", the limit is " +
                          scenario::human_bytes(scenario::kMaxScenarioBytes) + ")",
                      "large buffers take {\"random\": ...} or \"index\" inits rather than long lists of values",
                      Location{file_name, 0, 0, ""});
  auto doc = json::parse(text, file_name);
  if (!doc) return doc.error();
  try {
    return Reader(file_name).read(*doc);
  } catch (Failure& f) {
    return std::move(f.error);
  }
}

}  // namespace collscope
