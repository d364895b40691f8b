// Reading a lesson's "quiz" (scenario.h, QuizSpec) and checking it against the schedule
// the lesson lowers to (steps, ranks, elements).
#pragma once

#include <vector>

#include "collscope/scenario.h"
#include "scenario/reader_base.h"

namespace collscope::scenario {

// `s` holds the world and the buffers. Throws a Failure with the entry's JSON Pointer.
std::vector<QuizSpec> read_quiz(const std::string& file, const json::Member& m, const Scenario& s);

// What only the schedule can tell: the step exists, and a value question's element is
// inside the buffer it asks about (scenario.out_of_range at the entry's key otherwise).
Status check_quiz(const Scenario& s, const Schedule& schedule);

}  // namespace collscope::scenario
