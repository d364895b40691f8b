// Keeping a flight record while a backend runs (collscope/flight_record.h), shared by
// every backend: which ops each rank has, a bounded ring per lane, and the words that
// name where a rank stood ("step 5 (seq 1: allreduce x, program op 0)").
//
// A lane is one thread (or stream) of a rank: the cpu backend has one per rank, plus one
// per rank for compute spans. Each lane writes only its own ring, at op boundaries
// (a few stores per op, nothing per transfer), so recording costs nothing measurable;
// the record is read only while no lane runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collscope/flight_record.h"
#include "collscope/schedule.h"
#include "trace/ranks_text.h"

namespace collscope::flight {

// One op of one rank, as the schedule describes it.
struct PlannedOp {
  std::int64_t seq = 0;
  std::int32_t call = -1;
  std::int32_t record = -1;  // index into Schedule::ops, -1 for a collective-only schedule
  std::int32_t first_step = 0, last_step = 0;
  bool compute = false;  // a compute span: kept by the rank's compute lane
};

// Every rank's ops in order: the calls it is a member of (collective-only schedules),
// or its program's op records that span at least one step.
std::vector<std::vector<PlannedOp>> planned_ops(const Schedule& s);

// The FlightOp (without its state and times) of a planned op of `rank`.
FlightOp describe(const Schedule& s, std::int32_t rank, const PlannedOp& p);

// "step 5 (seq 1: allreduce x, program op 0)": where `rank` stood at `step`.
std::string position_text(const Schedule& s, const std::vector<std::vector<PlannedOp>>& ops, std::int32_t rank,
                          std::int32_t step);

// The words of a backend's failure message (cpu, cuda and mpi say it alike):
// "; ranks 0 and 1 are waiting for it" ("" for none), and "1 s", "0.05 s".
std::string waiting_for_it(const std::vector<std::int32_t>& ranks);
std::string seconds_text(double s);

class Recorder {
 public:
  // lanes: lanes per rank x ranks (lane l belongs to rank l % ranks; lanes >= ranks are
  // compute lanes). capacity: ops kept per lane.
  Recorder(const Schedule& s, std::int32_t lanes, std::int32_t capacity);

  // Called by the lane's own thread around its part of step k:
  void reach(std::int32_t lane, std::int32_t step, double t_us);  // before waiting for peers
  void begin(std::int32_t lane, std::int32_t step, double t_us);  // about to execute
  void end(std::int32_t lane, std::int32_t step, double t_us);    // executed

  // Per-rank ops, oldest first (both lanes merged). Only while no lane runs.
  std::vector<FlightRank> ranks() const;
  const std::vector<std::vector<PlannedOp>>& ops() const { return planned_; }

 private:
  struct Slot {
    std::int32_t op = -1;  // index into the lane's ops
    std::int64_t seq = -1;
    FlightState state = FlightState::scheduled;
    double t[3] = {-1, -1, -1};
  };
  struct alignas(64) Lane {         // one cache line apart: each lane's thread writes its own
    std::vector<std::int32_t> ops;  // indices into planned_[rank], by first step
    std::size_t next = 0;           // the next op to reach
    std::int32_t last_step = -1;    // to notice a new iteration
    std::int64_t iteration = 0;
    std::vector<std::int32_t> open;  // ring slots of ops reached but not completed
    std::vector<Slot> ring;
    std::uint64_t written = 0;  // slots ever written
  };

  const Schedule& s_;
  std::vector<std::vector<PlannedOp>> planned_;
  std::vector<Lane> lanes_;
  std::int32_t capacity_;
};

}  // namespace collscope::flight
