// Programs for tests: a scenario around a few ops, lowered, run and read back.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "collscope/run.h"
#include "collscope/scenario.h"

namespace collscope::testing {

// A scenario around a program: `buffers` and `program` are JSON text; `extra` adds
// top-level keys (", \"groups\": {...}").
inline std::string program_text(int ranks, const std::string& buffers, const std::string& program,
                                const std::string& extra = "", const std::string& dtype = "int32") {
  return R"({"version": 1, "title": "t", "ranks": )" + std::to_string(ranks) + R"(, "dtype": ")" + dtype +
         R"(", "buffers": {)" + buffers + "}" + extra + R"(, "program": [)" + program + "]}";
}

inline Scenario parse_ok(const std::string& text) {
  auto s = parse_scenario(text, "p.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
  return *s;
}

inline Schedule lower_program_ok(const std::string& text) {
  const Scenario s = parse_ok(text);
  auto sched = lower_scenario(s);
  REQUIRE_MESSAGE(sched.ok(), (sched.ok() ? "" : sched.error().format()));
  return *sched;
}

inline Error parse_fails(const std::string& text) {
  auto s = parse_scenario(text, "p.json");
  REQUIRE_FALSE(s.ok());
  return s.error();
}

inline InitFn init_of(const Scenario& sc) {
  return [sc](std::int32_t b, std::int32_t r, std::uint64_t i) {
    return static_cast<std::size_t>(b) < sc.buffers.size()
               ? initial_value(sc.buffers[static_cast<std::size_t>(b)], r, i)
               : 0.0;
  };
}

struct ProgramRun {
  Scenario scenario;
  Schedule schedule;
  RunOutcome outcome;
};

inline ProgramRun run_program(const std::string& text, RunMode mode = RunMode::fast) {
  ProgramRun p;
  p.scenario = parse_ok(text);
  auto sched = lower_scenario(p.scenario);
  REQUIRE_MESSAGE(sched.ok(), (sched.ok() ? "" : sched.error().format()));
  p.schedule = std::move(*sched);
  RunOptions o;
  o.mode = mode;
  o.snapshot_budget = 0;
  auto out = execute(p.schedule, init_of(p.scenario), o);
  REQUIRE_MESSAGE(out.ok(), (out.ok() ? "" : out.error().format()));
  p.outcome = std::move(*out);
  return p;
}

// Element i of buffer `buf` on `rank` after the run, for an int32 scenario.
inline std::int32_t int_at(const RunOutcome& o, std::int32_t buf, std::int32_t rank, std::size_t i) {
  std::int32_t v = 0;
  std::memcpy(&v, o.result[static_cast<std::size_t>(buf)][static_cast<std::size_t>(rank)].data() + i * 4, 4);
  return v;
}

inline std::string verdict_text(const RunOutcome& o) {
  return o.numeric.message() + (o.symbolic.ok() ? "" : o.symbolic.error().format());
}

}  // namespace collscope::testing
