// A scenario's expectations (Schedule::expect) checked twice, like every run: on the
// contribution sets of the whole program (which inputs each element holds at the end),
// and on the values a backend left. They compose with the per-call checks: those judge
// each collective against its own postcondition and definition, these judge the end
// state against what the scenario says it must be, whatever steps led there (a
// program of point-to-point messages has no other definition). Also: what a verdict
// covered, in words, for the reports and the window.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "collscope/algorithms.h"
#include "collscope/elementwise.h"
#include "collscope/verify.h"
#include "kernels/host_kernels.h"

namespace collscope {

namespace {

// "0", "0..3", "0, 4 and 6"
std::string ranks_text(const std::vector<std::int32_t>& ranks) {
  if (ranks.size() == 1) return std::to_string(ranks[0]);
  bool contiguous = ranks.size() > 2;
  for (std::size_t i = 1; i < ranks.size(); ++i) contiguous = contiguous && ranks[i] == ranks[i - 1] + 1;
  if (contiguous) return std::to_string(ranks.front()) + ".." + std::to_string(ranks.back());
  std::string t;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    t += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
  return t;
}

std::string element(const Schedule& s, std::int32_t buf, std::uint64_t index) {
  return s.buffers[static_cast<std::size_t>(buf)].name + "[" + std::to_string(index) + "]";
}

// "rank 2's x[3]", "x[3] from ranks 0..3"
std::string term_text(const Schedule& s, std::int32_t buf, std::uint64_t index,
                      const std::vector<std::int32_t>& ranks) {
  if (ranks.size() == 1) return "rank " + std::to_string(ranks[0]) + "'s " + element(s, buf, index);
  return element(s, buf, index) + " from ranks " + ranks_text(ranks);
}

std::string wanted_text(const Schedule& s, const Expectation& x, std::uint64_t i) {
  const std::uint64_t base = x.from_offset + i;
  if (x.kind == Expectation::Kind::copy) return term_text(s, x.from_buf, base, {x.from_rank});
  const std::string over = x.over.size() == static_cast<std::size_t>(s.ranks) ? "every rank"
                           : x.over.size() == 1                               ? "rank " + ranks_text(x.over)
                                                                              : "ranks " + ranks_text(x.over);
  const std::string what = x.op == ReduceOp::sum   ? "the sum"
                           : x.op == ReduceOp::avg ? "the average"
                                                   : "the " + std::string(name_of(x.op));
  return what + " over " + over + " of " + element(s, x.from_buf, base);
}

std::string held_text(const Schedule& s, const HeldRun& h) {
  if (!h.initialised) return "uninitialised scratch data";
  std::string t;
  for (std::size_t k = 0; k < h.terms.size(); ++k)
    t += (k ? " and " : "") + term_text(s, h.terms[k].buf, h.terms[k].index, h.terms[k].ranks);
  if (h.terms.empty()) t = "nothing";
  if (!h.exact) t += ", with an input counted twice or combined after an average";
  else if (h.divisions) t += ", divided " + std::to_string(h.divisions) + " time(s) for an average";
  return t;
}

Location where_of(const Schedule& s, const Expectation& x) {
  if (static_cast<std::size_t>(x.spec) < s.expect_where.size()) return s.expect_where[static_cast<std::size_t>(x.spec)];
  return Location{"", 0, 0, "/expect/" + std::to_string(x.spec)};
}

template <class T>
T load(const std::vector<std::uint8_t>& v, std::uint64_t i) {
  T x{};
  if ((i + 1) * sizeof(T) <= v.size()) std::memcpy(&x, v.data() + i * sizeof(T), sizeof(T));
  return x;
}

std::int32_t last_writer(const Schedule& s, std::int32_t rank, std::int32_t buf, std::uint64_t index) {
  for (auto k = static_cast<std::int32_t>(s.steps.size()) - 1; k >= 0; --k)
    for (const auto& t : s.steps[static_cast<std::size_t>(k)].transfers)
      if (t.count && t.action != Action::compute && t.dst.rank == rank && t.dst.buf == buf && index >= t.dst.offset &&
          index < t.dst.offset + t.count)
        return k;
  return -1;
}

}  // namespace

Status check_expectations_symbolic(const Schedule& s) {
  if (s.expect.empty()) return ok_status();
  // A library's own collective has no steps to follow: only the numeric side judges it.
  if (uses_native(s)) return ok_status();
  SymbolicState state(s, SymbolicState::WholeProgram{});
  while (!state.done())
    if (auto st = state.advance(); !st) return st;
  for (const Expectation& x : s.expect) {
    if (x.kind == Expectation::Kind::values) continue;  // values: the numeric side
    std::vector<std::int32_t> want_ranks =
        x.kind == Expectation::Kind::copy ? std::vector<std::int32_t>{x.from_rank} : x.over;
    const std::uint32_t want_divisions = x.kind == Expectation::Kind::reduction && x.op == ReduceOp::avg ? 1 : 0;
    for (const HeldRun& h : state.held(x.rank, x.buf, x.offset, x.count)) {
      const bool ok = h.initialised && h.exact && h.divisions == want_divisions && h.terms.size() == 1 &&
                      h.terms[0].buf == x.from_buf && h.terms[0].index == x.from_offset + h.start &&
                      h.terms[0].ranks == want_ranks;
      if (ok) continue;
      const std::string at = "rank " + std::to_string(x.rank) + " " + element(s, x.buf, x.offset + h.start);
      const std::string when = h.last_step >= 0 ? " (last written in step " + std::to_string(h.last_step) + ")"
                                                : std::string(" (never written)");
      const Location where = where_of(s, x);
      return make_error("verify.expectation",
                        at + " should hold " + wanted_text(s, x, h.start) + ", but it holds " + held_text(s, h) + when,
                        "the program does not do what " +
                            (where.pointer.empty() ? std::string("\"expect\"") : where.pointer) +
                            " says: check the steps that write this element",
                        where);
    }
  }
  return ok_status();
}

NumericReport check_expectations_numeric(const Schedule& s, const HostMemory& got, const HostMemory& inputs) {
  NumericReport rep;
  const bool floating = is_floating(s.dtype);
  const double eps = std::ldexp(1.0, 1 - precision_bits(s.dtype));
  const double limit = std::ldexp(1.0, precision_bits(s.dtype));
  kernels::with_type(s.dtype, [&]<class T>() {
    for (const Expectation& x : s.expect) {
      if (static_cast<std::size_t>(x.buf) >= got.size() ||
          static_cast<std::size_t>(x.rank) >= got[static_cast<std::size_t>(x.buf)].size())
        continue;
      const auto& g = got[static_cast<std::size_t>(x.buf)][static_cast<std::size_t>(x.rank)];
      for (std::uint64_t i = 0; i < x.count; ++i) {
        const std::uint64_t at = x.offset + i;
        const double gv = to_double(load<T>(g, at));
        double wv = 0, tol = 0;
        if (x.kind == Expectation::Kind::values) {
          wv = to_double(from_double<T>(x.values[i]));
          if (floating) tol = 4 * eps * std::max(1.0, std::fabs(wv));
        } else if (x.kind == Expectation::Kind::copy) {
          wv = to_double(load<T>(inputs[static_cast<std::size_t>(x.from_buf)][static_cast<std::size_t>(x.from_rank)],
                                 x.from_offset + i));
        } else {
          const OpKind k = kernels::op_kind(x.op);
          T acc{};
          bool integral = true;
          double mag = 0, prod_mag = 1;
          for (std::size_t q = 0; q < x.over.size(); ++q) {
            const T v = load<T>(inputs[static_cast<std::size_t>(x.from_buf)][static_cast<std::size_t>(x.over[q])],
                                x.from_offset + i);
            acc = q == 0 ? v : combine<T>(k, acc, v);
            const double d = to_double(v);
            integral = integral && std::isfinite(d) && d == std::nearbyint(d);
            mag += std::fabs(d);
            prod_mag *= std::fabs(d);
          }
          if (x.op == ReduceOp::avg) acc = divide<T>(acc, static_cast<std::uint32_t>(x.over.size()));
          wv = to_double(acc);
          // Another order of the reduction may round differently, as in the reference.
          if (floating && x.over.size() > 1 && (k == OpKind::sum || k == OpKind::prod)) {
            const double m = k == OpKind::sum ? mag : prod_mag;
            if (!(integral && m <= limit)) tol = static_cast<double>(x.over.size()) * eps * m;
            if (x.op == ReduceOp::avg)
              tol = tol / static_cast<double>(x.over.size()) + (tol > 0 ? eps * std::fabs(wv) : 0);
          }
        }
        ++rep.checked;
        const bool ok = gv == wv || (std::isnan(gv) && std::isnan(wv)) || std::fabs(gv - wv) <= tol;
        if (ok) continue;
        if (rep.wrong == 0) {
          rep.rank = x.rank;
          rep.buf = x.buf;
          rep.buffer_name = s.buffers[static_cast<std::size_t>(x.buf)].name;
          rep.index = at;
          rep.expected = wv;
          rep.got = gv;
          rep.last_step = last_writer(s, x.rank, x.buf, at);
        }
        ++rep.wrong;
      }
    }
  });
  return rep;
}

std::string verdict_scope(const Schedule& s) {
  // Collective calls by program entry: the parts of a split are one call of the program.
  struct Entry {
    std::string name;
    std::int32_t index = 0;
    std::int32_t parts = 0;
    bool native = false;  // the library's own collective: only its values are checked
  };
  std::vector<Entry> calls;
  bool program_steps = false;
  for (const Call& c : s.calls) {
    if (c.num_steps <= 0) continue;
    if (c.kind == CallKind::program) {
      program_steps = true;
      continue;
    }
    const std::string name(name_of(c.args.coll));
    const bool native = s.steps[static_cast<std::size_t>(c.first_step)].native;
    auto it = std::find_if(calls.begin(), calls.end(),
                           [&](const Entry& e) { return e.name == name && e.index == c.program_index; });
    if (it == calls.end()) calls.push_back({name, c.program_index, 1, native});
    else ++it->parts;
  }
  std::vector<std::string> parts;
  if (calls.size() > 4) {
    parts.push_back("postconditions of " + std::to_string(calls.size()) + " collective calls");
  } else {
    for (const Entry& e : calls)
      parts.push_back((e.native ? "definition of " : "postcondition of ") + e.name + " (call " +
                      std::to_string(e.index) + (e.parts > 1 ? ", " + std::to_string(e.parts) + " parts" : "") +
                      (e.native ? ", values only" : "") + ")");
  }
  if (!s.expect.empty()) {
    std::vector<std::string> names;
    for (const Expectation& x : s.expect) {
      const std::string& n = s.buffers[static_cast<std::size_t>(x.buf)].name;
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
    std::string t = "expectations on ";
    for (std::size_t i = 0; i < names.size(); ++i)
      t += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    parts.push_back(t);
  } else if (calls.empty()) {
    return "no expectation: the run only matched its schedule";
  } else if (program_steps) {
    parts.push_back("no expectation on the point-to-point steps: they only matched their schedule");
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out;
}

}  // namespace collscope
