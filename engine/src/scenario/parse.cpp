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
#include "scenario/read_program.h"
#include "scenario/read_quiz.h"
#include "scenario/reader_base.h"
#include "scenario/resolve.h"
#include "scenario/suggest.h"

namespace collscope {
namespace {

using json::literal;
using json::Member;
using json::quote;
using json::Value;
using scenario::closest;
using scenario::Failure;
using scenario::join;
using scenario::kDTypeAliases;
using scenario::names_of;
using scenario::suggest;

const std::vector<std::string> kTopKeys = {"version", "title",  "description", "ranks", "dtype", "buffers", "groups",
                                           "program", "expect", "faults",      "quiz",  "view",  "compare"};
const std::vector<std::string> kFaultKeys = {"rank", "step", "kind", "ms"};
const std::vector<std::string> kFaultKinds = {"delay", "corrupt", "crash", "hang"};
const std::vector<std::string> kBufferKeys = {"count", "counts", "init", "scratch"};
const std::vector<std::string> kInitObjectKeys = {"random", "values"};
const std::vector<std::string> kRandomKeys = {"seed", "min", "max"};

// The values a dtype can hold, for checking initial values before they are converted.
struct DTypeRange {
  double lo, hi;
  bool whole;  // integer dtype: values must be whole numbers
};

DTypeRange range_of(DType t) {
  switch (t) {
    case DType::int8:
      return {-128, 127, true};
    case DType::uint8:
      return {0, 255, true};
    case DType::int32:
      return {-2147483648.0, 2147483647.0, true};
    case DType::int64:
      return {-9223372036854775808.0, 9223372036854775807.0, true};
    case DType::float16:
      return {-65504, 65504, false};
    case DType::bfloat16:
      return {-3.3895313892515355e38, 3.3895313892515355e38, false};
    case DType::float32:
      return {-3.4028234663852886e38, 3.4028234663852886e38, false};
    case DType::float64:
      return {-1.7976931348623157e308, 1.7976931348623157e308, false};
  }
  return {0, 0, false};
}

std::string number_text(double v) {
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string range_text(DType t) {
  const auto r = range_of(t);
  return number_text(r.lo) + ".." + number_text(r.hi);
}

class Reader : public scenario::ReaderBase {
 public:
  explicit Reader(const std::string& file) : ReaderBase(file) {}

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
    if (r.negative || r.uvalue < 1 || r.uvalue > static_cast<std::uint64_t>(kMaxPricedRanks))
      throw Failure{scenario::ranks_range_error(literal(ranks->value), at(*ranks), kMaxPricedRanks)};
    s.ranks = static_cast<std::int32_t>(r.uvalue);
    s.ranks_where = at(*ranks);
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

    scenario::ProgramReader programs(file_, s.ranks);
    if (const Member* m = doc.find("groups")) s.groups = programs.read_groups(*m);
    const Member* program = doc.find("program");
    if (!program)
      fail("scenario.missing_key", "scenario is missing \"program\"",
           "add \"program\": [{\"op\": \"allreduce\", \"buffer\": \"x\"}]", at(doc));
    s.program = programs.read_program(*program, s);
    if (const Member* m = doc.find("expect")) s.expect = programs.read_expect(*m, s);
    if (const Member* m = doc.find("faults")) read_faults(*m, s);
    if (const Member* m = doc.find("quiz")) s.quiz = scenario::read_quiz(file_, *m, s);
    if (const Member* m = doc.find("view")) s.view = read_view(*m);
    // What only lowering can tell (buffer sizes, roots, matching messages) is checked
    // here too, so that a file that parses also lowers: as predict lowers it, up to
    // kMaxPricedRanks; a run refuses more than kMaxRanks when it lowers the file itself.
    LowerOptions check;
    check.price_only = true;
    if (scenario::is_collectives_only(s)) {
      scenario::CallResolver resolver(s);
      for (std::size_t i = 0; i < s.program.size(); ++i)
        if (auto a = resolver.resolve(s.program[i], static_cast<std::int32_t>(i)); !a) throw Failure{a.error()};
      if (!s.expect.empty())
        if (auto lowered = lower_scenario(s, check); !lowered) throw Failure{lowered.error()};
    } else if (auto lowered = lower_scenario(s, check); !lowered) {
      throw Failure{lowered.error()};
    }
    // A quiz's steps and elements are checked on the schedule the lesson lowers to.
    if (!s.quiz.empty()) {
      auto lowered = lower_scenario(s, check);
      if (!lowered) throw Failure{lowered.error()};
      if (auto st = scenario::check_quiz(s, *lowered); !st) throw Failure{st.error()};
    }
    if (const Member* m = doc.find("compare")) read_compare(*m, s);
    return s;
  }

 private:
  std::int32_t ranks_ = 1;
  DType dtype_ = DType::float32;

  // --- view -----------------------------------------------------------------------

  // "view": "matrix": how the window's canvas shows the lesson.
  CanvasView read_view(const Member& m) const {
    const std::string name = text_of(m, "\"view\": \"matrix\"");
    std::vector<std::string> views;
    for (const auto& [text, view] : kCanvasViews) views.emplace_back(text);
    for (const auto& [text, view] : kCanvasViews)
      if (text == name) return view;
    std::string msg = "unknown view " + quote(name);
    if (auto c = closest(name, views)) msg += " (did you mean \"" + *c + "\"?)";
    fail("scenario.unknown_view", msg, "valid views: " + join(views) + " (leave it out to let the window choose)",
         at(m));
  }

  // "compare": "tree": the second algorithm the window runs the lesson's calls with.
  void read_compare(const Member& m, Scenario& s) const {
    s.compare = text_of(m, "\"compare\": \"tree\"");
    s.compare_where = at(m);
    auto other = compare_scenario(s, s.compare, s.compare_where);
    if (!other) throw Failure{other.error()};
    if (auto lowered = lower_scenario(*other); !lowered) {
      Error e = lowered.error();
      e.message = "with \"compare\": " + json::quote(s.compare) + ": " + e.message;
      e.where = s.compare_where;
      throw Failure{e};
    }
  }

  // --- faults ---------------------------------------------------------------------

  void read_faults(const Member& faults, Scenario& s) {
    const std::string example = "\"faults\": [{\"rank\": 1, \"step\": 2, \"kind\": \"delay\", \"ms\": 50}]";
    if (!faults.value.is_array()) wrong_type("faults", "an array of faults", faults.value, at(faults), example);
    for (const Value& v : faults.value.items) {
      if (!v.is_object())
        wrong_type("a fault", "an object", v, at(v), "{\"rank\": 1, \"step\": 2, \"kind\": \"hang\"}");
      check_keys(v, kFaultKeys, "in a fault");
      Fault f;
      const Member* rank = v.find("rank");
      if (!rank)
        fail("scenario.missing_key", "fault is missing \"rank\"", "add \"rank\": 1 (the rank that fails)", at(v));
      const auto r = integer(rank->value, at(*rank), "rank", "\"rank\": 1");
      if (r.negative || r.uvalue >= static_cast<std::uint64_t>(s.ranks))
        fail("scenario.out_of_range",
             "fault rank " + literal(rank->value) + " is out of range 0.." + std::to_string(s.ranks - 1),
             "name a rank of the world, 0 to " + std::to_string(s.ranks - 1), at(*rank));
      f.rank = static_cast<std::int32_t>(r.uvalue);
      const Member* step = v.find("step");
      if (!step)
        fail("scenario.missing_key", "fault is missing \"step\"",
             "add \"step\": 2 (`collscope run --explain` lists the steps)", at(v));
      const auto k = integer(step->value, at(*step), "step", "\"step\": 2");
      if (k.negative || k.uvalue > 100'000'000)
        fail("scenario.out_of_range", "fault step " + literal(step->value) + " is out of range",
             "give a step of the schedule, 0 or more (`collscope run --explain` lists them)", at(*step));
      f.step = static_cast<std::int32_t>(k.uvalue);
      const Member* kind = v.find("kind");
      if (!kind)
        fail("scenario.missing_key", "fault is missing \"kind\"", "add \"kind\": one of " + join(kFaultKinds), at(v));
      const std::string name = text_of(*kind, "\"kind\": \"hang\"");
      auto parsed = parse_fault_kind(name);
      if (!parsed) {
        std::string msg = "unknown fault kind " + quote(name);
        if (auto c = closest(name, kFaultKinds)) msg += " (did you mean \"" + *c + "\"?)";
        fail("scenario.unknown_fault", msg, "valid kinds: " + join(kFaultKinds), at(*kind));
      }
      f.kind = *parsed;
      const Member* ms = v.find("ms");
      if (f.kind == Fault::Kind::delay) {
        if (!ms)
          fail("scenario.missing_key", "a delay fault is missing \"ms\"",
               "add \"ms\": 50 (milliseconds the rank stalls)", at(v));
        const auto d = integer(ms->value, at(*ms), "ms", "\"ms\": 50");
        if (d.negative || d.uvalue > 60000)
          fail("scenario.out_of_range", "delay " + literal(ms->value) + " ms is out of range 0..60000",
               "stall a rank for at most a minute", at(*ms));
        f.ms = static_cast<std::int32_t>(d.uvalue);
      } else if (ms) {
        fail("scenario.unknown_key", "\"ms\" only applies to a delay fault, not " + quote(name), "remove \"ms\"",
             at(*ms));
      }
      s.faults.push_back(f);
      s.fault_where.push_back(at(v));
    }
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
    if (const Member* sc = v.find("scratch")) {
      if (!sc->value.is_boolean()) wrong_type("scratch", "true or false", sc->value, at(*sc), "\"scratch\": true");
      b.scratch = sc->value.boolean;
      if (b.scratch && init_m)
        fail("scenario.conflicting_keys", "scratch buffer " + quote(b.name) + " has an \"init\"",
             "scratch space starts as zeros and is not an input; remove \"init\" or \"scratch\"", at(*init_m));
    }

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
      if (v.text == "zeros") init.kind = InitKind::zeros;
      else if (v.text == "rank") init.kind = InitKind::rank;
      else if (v.text == "index") init.kind = InitKind::index;
      else if (v.text == "rank_index") init.kind = InitKind::rank_index;
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
      case InitKind::zeros:
        return;
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
};

}  // namespace

std::string_view name_of(CanvasView v) {
  for (const auto& [name, view] : kCanvasViews)
    if (view == v) return name;
  return "automatic";
}

Result<Scenario> parse_scenario(const std::string& text, const std::string& file_name) {
  if (text.size() > scenario::kMaxScenarioBytes)
    return make_error(
        "scenario.out_of_range",
        "scenario is too large (" + scenario::human_bytes_pair(text.size(), scenario::kMaxScenarioBytes).first +
            ", the limit is " + scenario::human_bytes_pair(text.size(), scenario::kMaxScenarioBytes).second + ")",
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
