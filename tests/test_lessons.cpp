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
  REQUIRE(files.size() >= 9);
  std::set<Collective> covered;
  for (const auto& file : files) {
    CAPTURE(file);
    auto s = load_scenario(file);
    REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
    CHECK_FALSE(s->title.empty());
    CHECK(s->description.size() > 40);
    auto sched = lower_scenario(*s);
    REQUIRE_MESSAGE(sched.ok(), (sched.ok() ? "" : sched.error().format()));
    for (const auto& c : sched->calls) {
      CHECK_FALSE(c.caption.empty());
      covered.insert(c.args.coll);
    }
    for (const auto& st : sched->steps) CHECK_FALSE(st.caption.empty());
    auto init = [&](std::int32_t b, std::int32_t r, std::uint64_t i) {
      return static_cast<std::size_t>(b) < s->buffers.size() ? initial_value(s->buffers[static_cast<std::size_t>(b)], r, i)
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
}
