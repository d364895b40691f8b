// libFuzzer harness: scenario text -> parse_scenario -> lower_scenario -> verify_symbolic,
// with a round-trip property.
//
// Whatever the bytes, parsing must return (a scenario or one well-formed error) without
// crashing, hanging or tripping ASan/UBSan. For a scenario that parses:
//   - to_json(s) must parse again, to a scenario that writes back to the same text;
//   - lowering both must give the same result: the same error id, or the same steps.
// Lowering and the symbolic check are skipped for scenarios that are legitimately
// large (many ranks or elements): they are correct but slow, and the fuzzer would
// report them as timeouts. Parsing also unrolls and matches programs (up to a million
// ops, a few seconds without sanitizers, minutes with them), so programs that repeat
// more than kFuzzMaxTimes times, or run point-to-point ops on more than kFuzzMaxRanks
// ranks, are only read as JSON. Everything else, whatever the bytes, is parsed.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "collscope/scenario.h"
#include "collscope/schedule.h"
#include "collscope/verify.h"
#include "scenario/expr.h"
#include "scenario/json.h"

namespace {

using namespace collscope;

// Bounds for lowering inside the harness (not limits of collscope itself).
constexpr std::int32_t kFuzzMaxRanks = 64;
constexpr std::uint64_t kFuzzMaxElements = 1u << 16;  // over all buffers and ranks
constexpr std::uint64_t kFuzzMaxTransfers = 200'000;
constexpr std::int64_t kFuzzMaxTimes = 256;

// What the document asks for, read from its JSON before the scenario reader runs.
struct Size {
  std::int64_t ranks = 0, times = 0;
  bool program = false;  // point-to-point, local or structural ops, groups or custom bodies
};

std::int64_t integer_of(const json::Value& v) {
  if (v.is_number()) {
    const auto i = json::to_integer(v);
    return i.status == json::IntegerValue::Status::ok && !i.negative ? i.value : INT64_MAX;
  }
  if (v.is_string()) {
    auto e = scenario::Expression::parse(v.text);
    if (!e || !e->is_constant()) return 0;  // depends on rank or size: bounded by ranks
    auto x = e->eval({});
    return x ? *x : 0;
  }
  return 0;
}

void measure(const json::Value& v, Size& size) {
  for (const auto& m : v.members) {
    if (m.key == "ranks" && v.pointer.empty()) size.ranks = integer_of(m.value);
    if (m.key == "times") size.times = std::max(size.times, integer_of(m.value));
    if (m.key == "body" || m.key == "group" || m.key == "groups") size.program = true;
    if (m.key == "op" && m.value.is_string() && !parse_collective(m.value.text)) size.program = true;
    measure(m.value, size);
  }
  for (const auto& item : v.items) measure(item, size);
}

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "collscope fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void check_error(const Error& e) {
  if (e.id.empty() || e.message.empty()) fail("an error without id or message", e.format());
  if (e.id.find('.') == std::string::npos) fail("an error id without a namespace", e.format());
  if (e.format().rfind("error[" + e.id + "]", 0) != 0) fail("a badly formatted error", e.format());
}

bool small_enough(const Scenario& s) {
  if (s.ranks > kFuzzMaxRanks) return false;
  std::uint64_t elements = 0;
  for (const auto& b : s.buffers)
    for (auto c : b.count) {
      elements += c;
      if (elements > kFuzzMaxElements) return false;
    }
  return true;
}

bool same_transfer(const Transfer& a, const Transfer& b) {
  return a.src.rank == b.src.rank && a.src.buf == b.src.buf && a.src.offset == b.src.offset &&
         a.dst.rank == b.dst.rank && a.dst.buf == b.dst.buf && a.dst.offset == b.dst.offset && a.count == b.count &&
         a.action == b.action && a.divisor == b.divisor && a.duration_us == b.duration_us && a.label == b.label;
}

void check_same_steps(const Schedule& a, const Schedule& b, const std::string& text) {
  if (a.steps.size() != b.steps.size() || a.calls.size() != b.calls.size() || a.buffers.size() != b.buffers.size())
    fail("the written-back scenario lowers to a different schedule", text);
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    const Step& x = a.steps[i];
    const Step& y = b.steps[i];
    if (x.call != y.call || x.phase != y.phase || x.caption != y.caption || x.transfers.size() != y.transfers.size())
      fail("the written-back scenario lowers to a different step", text);
    for (std::size_t t = 0; t < x.transfers.size(); ++t)
      if (!same_transfer(x.transfers[t], y.transfers[t]))
        fail("the written-back scenario lowers to a different transfer", text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (auto doc = json::parse(text, "fuzz.json")) {
    Size asked;
    measure(*doc, asked);
    if (asked.times > kFuzzMaxTimes || (asked.program && asked.ranks > kFuzzMaxRanks)) return 0;
  }
  auto s = parse_scenario(text, "fuzz.json");
  if (!s) {
    check_error(s.error());
    return 0;
  }

  // Round trip: what collscope writes, it reads back to the same scenario.
  const std::string written = to_json(*s);
  auto again = parse_scenario(written, "fuzz.json");
  if (!again) fail("a written-back scenario does not parse", again.error().format() + "\n" + written);
  if (to_json(*again) != written)
    fail("a written-back scenario reads back differently", written + "\n" + to_json(*again));

  if (!small_enough(*s)) return 0;
  auto lowered = lower_scenario(*s);
  auto lowered_again = lower_scenario(*again);
  if (lowered.ok() != lowered_again.ok()) fail("lowering differs after the round trip", written);
  if (!lowered) {
    check_error(lowered.error());
    if (lowered.error().id != lowered_again.error().id) fail("lowering errors differ after the round trip", written);
    return 0;
  }
  check_same_steps(*lowered, *lowered_again, written);
  if (lowered->total_transfers() > kFuzzMaxTransfers) return 0;
  if (auto st = verify_symbolic(*lowered); !st) check_error(st.error());
  return 0;
}
