// Every lesson in scenarios/ runs and verifies, in both execution modes, and
// teaches: a title, a description, a caption on every call and every step.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "collscope/run.h"
#include "collscope/scenario.h"
#include "collscope/verify.h"
#include "ir/deps.h"

using namespace collscope;

namespace {

std::vector<std::string> lessons() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios"))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("lessons: every lesson runs and verifies in fast and observable mode") {
  const auto files = lessons();
  REQUIRE(files.size() >= 24);
  std::set<Collective> covered;
  std::set<std::string> ops;
  for (const auto& file : files) {
    CAPTURE(file);
    if (file.find("deadlock") != std::string::npos) continue;  // the next test
    auto s = load_scenario(file);
    REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
    CHECK_FALSE(s->title.empty());
    CHECK(s->description.size() > 40);
    auto sched = lower_scenario(*s);
    REQUIRE_MESSAGE(sched.ok(), (sched.ok() ? "" : sched.error().format()));
    for (const auto& c : sched->calls) {
      if (c.kind == CallKind::program) continue;
      CHECK_FALSE(c.caption.empty());
      covered.insert(c.args.coll);
    }
    for (const auto& op : sched->ops) ops.insert(op.op);
    for (const auto& st : sched->steps) CHECK_FALSE(st.caption.empty());
    auto init = [&](std::int32_t b, std::int32_t r, std::uint64_t i) {
      return static_cast<std::size_t>(b) < s->buffers.size()
                 ? initial_value(s->buffers[static_cast<std::size_t>(b)], r, i)
                 : 0.0;
    };
    RunOptions fast;
    RunOptions obs;
    obs.mode = RunMode::observable;
    auto a = execute(*sched, init, fast);
    auto b = execute(*sched, init, obs);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK_MESSAGE(a->verified(), a->numeric.message() << (a->symbolic.ok() ? "" : a->symbolic.error().format()));
    CHECK(b->verified());
    CHECK(a->result == b->result);
  }
  // At least one lesson per collective.
  for (Collective c : kAllCollectives) CHECK_MESSAGE(covered.count(c) == 1, "no lesson for " << name_of(c));
  // ... and for every point-to-point and local op.
  for (const char* op : {"send", "recv", "isend", "irecv", "wait", "compute", "copy", "accumulate"})
    CHECK_MESSAGE(ops.count(op) == 1, "no lesson uses " << op);
}

TEST_CASE("lessons: the deadlock lesson fails exactly as it is meant to") {
  int found = 0;
  for (const auto& file : lessons()) {
    if (file.find("deadlock") == std::string::npos) continue;
    ++found;
    CAPTURE(file);
    auto s = load_scenario(file);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().id == "program.deadlock");
    CHECK(s.error().message ==
          "deadlock: rank 0 waits in recv from rank 1 (op 0) while rank 1 waits in recv from rank 0 (op 0)");
    CHECK(s.error().where.line > 0);
    CHECK(s.error().where.pointer == "/program/0");
    CHECK(s.error().exit == ExitCode::bad_input);
  }
  CHECK(found == 1);
}

TEST_CASE("lessons: every lesson survives the round trip through to_json") {
  for (const auto& file : lessons()) {
    if (file.find("deadlock") != std::string::npos) continue;
    CAPTURE(file);
    auto a = load_scenario(file);
    REQUIRE(a.ok());
    const std::string once = to_json(*a);
    auto b = parse_scenario(once, "again.json");
    REQUIRE_MESSAGE(b.ok(), (b.ok() ? "" : b.error().format()));
    CHECK(to_json(*b) == once);
    auto sa = lower_scenario(*a);
    auto sb = lower_scenario(*b);
    REQUIRE(sa.ok());
    REQUIRE(sb.ok());
    REQUIRE(sa->steps.size() == sb->steps.size());
    for (std::size_t k = 0; k < sa->steps.size(); ++k) {
      const auto& x = sa->steps[k].transfers;
      const auto& y = sb->steps[k].transfers;
      REQUIRE(x.size() == y.size());
      for (std::size_t t = 0; t < x.size(); ++t) {
        CHECK(x[t].src.rank == y[t].src.rank);
        CHECK(x[t].dst.offset == y[t].dst.offset);
        CHECK(x[t].count == y[t].count);
        CHECK(x[t].action == y[t].action);
      }
    }
  }
}

TEST_CASE(
    "lessons: DDP overlap and FSDP prefetch start collectives with a request, compute meanwhile, and say what must "
    "hold") {
  for (const char* name : {"25-ddp-overlap.json", "26-fsdp-prefetch.json"}) {
    CAPTURE(name);
    auto s = load_scenario(std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/" + name);
    REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
    auto sched = lower_scenario(*s);
    REQUIRE(sched.ok());
    CHECK(verify_symbolic(*sched).ok());
    CHECK(verdict_scope(*sched).find("expectations on ") != std::string::npos);
    // Some collective returns at once, and a later compute span of the same rank does
    // not wait for the lanes that move its data: they overlap.
    const auto deps = dataflow::compute_deps(*sched);
    const std::int32_t R = sched->ranks;
    bool async = false, overlaps = false;
    for (const auto& op : sched->ops) {
      if (op.rank != 0 || !(op.spans_steps && op.order == OpOrder::nonblocking)) continue;
      async = true;
      for (const auto& later : sched->ops) {
        if (later.rank != 0 || later.op != "compute" || later.first_step <= op.first_step ||
            later.first_step > op.last_step + 1 || later.first_step < 0)
          continue;
        bool waits = false;
        for (const auto& d : deps[static_cast<std::size_t>(R)][static_cast<std::size_t>(later.first_step)])
          waits = waits || (d.rank < R && d.step >= op.first_step);
        overlaps = overlaps || !waits;
      }
    }
    CHECK(async);
    CHECK(overlaps);
  }
}
