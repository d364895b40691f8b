// The flight record: every rank's last ops and where each rank stood, like NCCL's
// flight recorder and PyTorch's TORCH_NCCL_TRACE_BUFFER_SIZE dumps.
//
// Every run keeps, per rank, a bounded ring of its last ops (a collective call, or one
// op of a program: send, recv, wait, compute, ...), each with its sequence number and
// state:
//   scheduled  the rank reached the op (it may be waiting for its peers' data)
//   started    the rank began its own part of the op
//   completed  the rank finished its part of the op
// When a run is aborted (a rank crashed, or nothing moved within the timeout) the
// record is written as JSON; `collscope analyze FILE` reads it back and says what went
// wrong: which rank never joined which op, or which ops differ between ranks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collscope/result.h"
#include "collscope/types.h"

namespace collscope {

enum class FlightState : std::uint8_t { scheduled, started, completed };
const char* name_of(FlightState s);

// One op as one rank saw it.
struct FlightOp {
  std::int64_t seq = 0;     // per rank: the op's position in the rank's program (its call for collectives)
  std::int32_t call = -1;   // the Schedule call the op belongs to (the same on every rank)
  bool collective = false;  // a collective call: every member must call the same one
  std::string op;           // "allreduce", "send", "compute", ...
  std::string text;         // "allreduce x (ring)", "send x[0..4) to rank 1"
  std::string pointer;      // the program entry ("/program/3"), "" when none
  std::string buffer;       // the buffer it reads or writes ("send -> recv" out of place)
  std::uint64_t count = 0;  // elements (NCCL's count for a collective)
  DType dtype = DType::float32;
  std::int32_t root = -1;             // -1: the collective has no root
  std::string reduce_op;              // "" when it does not reduce
  std::vector<std::int32_t> members;  // world ranks of its group; empty = every rank
  std::int32_t first_step = -1, last_step = -1;
  FlightState state = FlightState::scheduled;
  double scheduled_us = -1, started_us = -1, completed_us = -1;  // -1 = not yet
};

struct FlightRank {
  std::int32_t rank = 0;
  // "finished", "idle", "running", "waiting", "hung", "crashed".
  std::string state = "idle";
  std::int32_t step = -1;         // the step it was in (or the last it finished)
  std::int32_t waiting_for = -1;  // the rank it was waiting for, -1 = none
  std::uint64_t dropped = 0;      // older ops that no longer fit the ring
  std::vector<FlightOp> ops;      // oldest first
};

struct FlightRecord {
  int version = 1;
  std::string backend;
  std::string mode;        // "fast" or "observable"
  std::string reason;      // the error that aborted the run; "" for a run that completed
  std::int32_t world = 0;  // ranks
  std::int32_t steps = 0;  // steps of the schedule
  double timeout_s = 0;
  std::int32_t capacity = 0;      // ops kept per rank
  std::vector<FlightRank> ranks;  // one per rank; empty = no record kept
};

std::string flight_record_json(const FlightRecord& r);
// Written atomically (a temporary file, then rename): never half a record.
Status write_flight_record(const std::string& path, const FlightRecord& r);
// Largest flight record read back (1024 ranks with 64 program ops each take about 30 MiB).
inline constexpr std::uint64_t kMaxFlightRecordBytes = 64ull << 20;
// Errors: analyze.io, analyze.parse, analyze.bad_record (exit 2), with the place. Every
// number is checked against its type and the world (at most kMaxRanks ranks, each
// listed once; ranks, roots, members and waiting_for inside it; steps inside the schedule).
Result<FlightRecord> parse_flight_record(const std::string& text, const std::string& file);
Result<FlightRecord> load_flight_record(const std::string& path);

// What a record shows. Problems first, in a fixed order:
//   analyze.desync        ranks called different collectives (op, count, dtype, root) as the same op
//   analyze.missing_rank  some members of a collective never joined it
//   analyze.incomplete    an op that started but never completed
//   analyze.rank_failed   a rank that crashed or hung, from the ranks' states
//   analyze.aborted       the run was aborted (the reason it gives)
struct FlightFinding {
  std::string id;
  std::string message;
};
std::vector<FlightFinding> analyze_flight_record(const FlightRecord& r);

}  // namespace collscope
