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

TEST_CASE("lessons: ring attention computes on the block it holds while the blocks move on") {
  auto s = load_scenario(std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/28-ring-attention.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
  auto sched = lower_scenario(*s);
  REQUIRE(sched.ok());
  CHECK(verify_symbolic(*sched).ok());
  CHECK(verdict_scope(*sched) == "expectations on out and kv");
  const std::int32_t R = sched->ranks;
  const auto deps = dataflow::compute_deps(*sched);
  // Every rank: its attention spans share steps with its messages and do not wait for them.
  for (std::int32_t r = 0; r < R; ++r) {
    int overlapped = 0, spans = 0;
    for (std::size_t k = 0; k < sched->steps.size(); ++k) {
      bool computes = false, messages = false;
      for (const auto& t : sched->steps[k].transfers) {
        if (t.action == Action::compute && t.dst.rank == r) computes = true;
        if (t.action != Action::compute && t.src.rank != t.dst.rank && (t.src.rank == r || t.dst.rank == r))
          messages = true;
      }
      spans += computes;
      if (!computes || !messages) continue;
      bool waits = false;
      for (const auto& d : deps[static_cast<std::size_t>(R + r)][k])
        waits = waits || (d.rank < R && d.step >= static_cast<std::int32_t>(k));
      overlapped += !waits;
    }
    CHECK(spans == R);           // attention with every block, its own included
    CHECK(overlapped == R - 1);  // all but the last overlap the ring's messages
  }
}

TEST_CASE("lessons: 1F1B warms up, alternates forward and backward, cools down, and keeps few activations") {
  auto s = load_scenario(std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/29-pipeline-1f1b.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
  auto sched = lower_scenario(*s);
  REQUIRE(sched.ok());
  CHECK(verify_symbolic(*sched).ok());
  const std::int32_t R = sched->ranks;
  const int micro_batches = 4;
  for (std::int32_t r = 0; r < R; ++r) {
    CAPTURE(r);
    // The rank's passes in program order: 'F' or 'B'.
    std::string passes;
    for (const auto& op : sched->ops)
      if (op.rank == r && op.op == "compute") passes += op.text.find("\"F") != std::string::npos ? 'F' : 'B';
    const int warm_up = std::min(R - 1 - r, micro_batches);
    const int steady = micro_batches - warm_up;
    std::string want(static_cast<std::size_t>(warm_up), 'F');
    for (int i = 0; i < steady; ++i) want += "FB";
    want += std::string(static_cast<std::size_t>(warm_up), 'B');
    CHECK(passes == want);
    // Activations alive (forward done, backward not yet): at most size - rank.
    int alive = 0, most = 0;
    for (char c : passes) most = std::max(most, alive += c == 'F' ? 1 : -1);
    CHECK(most == std::min(R - r, micro_batches));
  }
  // The last stage starts its first backward before the first stage has run its last forward.
  std::int32_t first_backward = -1, last_forward = -1;
  for (const auto& op : sched->ops) {
    if (op.rank == R - 1 && op.text.find("\"B0\"") != std::string::npos) first_backward = op.first_step;
    if (op.rank == 0 && op.text.find("\"F3\"") != std::string::npos) last_forward = op.first_step;
  }
  REQUIRE(first_backward >= 0);
  CHECK(first_backward < last_forward);
}
