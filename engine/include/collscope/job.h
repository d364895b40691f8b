// Jobs from outside (DESIGN §11): the communication of a real PyTorch or NCCL run,
// read back from the files it left behind, checked, and turned into a scenario.
//
//   files ──read──► Job (per rank: its calls in order) ──┬─► analyze_job: desyncs, missing ranks,
//                                                       │   hung calls, the straggler
//                                                       └─► job_scenario: a scenario that runs,
//                                                           verifies and predicts like a lesson
//
// The files, one per rank or a folder of them, in any of these formats:
//   profiler          PyTorch profiler (Kineto) traces: Chrome JSON whose collective
//                     events carry "Collective name", "In msg nelems", "Out msg nelems",
//                     "dtype", "Group size", "Process Group Name", "Process Group Ranks",
//                     "Rank" and "Seq" (newer PyTorch)
//   profiler_legacy   older PyTorch's traces (torch 1.13, as Debian ships it): a bare
//                     JSON list of events named gloo:all_reduce, gloo:send, c10d::... with
//                     sizes only under "Input Dims" when they were recorded at all
//   flight_recorder   Flight Recorder dumps in JSON (entries with collective_seq_id,
//                     p2p_seq_id, profiling_name, input_sizes, input_dtypes, state,
//                     time_created_ns, durations, plus pg_config), and the files
//                     `collscope record` writes in the same format
//   nccl_log          NCCL_DEBUG=INFO logs: rings and trees per channel, and the
//                     per-call lines NCCL_DEBUG_SUBSYS=COLL prints
// Errors (exit 2, with file:line:col and a JSON Pointer where there is JSON):
//   import.io              missing, unreadable, not a regular file, too large
//   import.unknown_format  a file in none of these formats
//   import.parse           not valid JSON
//   import.bad_field       a field of the wrong type or out of range
//   import.no_calls        no file with calls in it
//   import.mixed_formats   call files of different formats given together
//   import.ranks           two files for one rank, a rank outside the world
//   import.sources_disagree  the second source (--sizes) names other calls
//   import.no_splits       an uneven all-to-all whose files do not say its split sizes
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collscope/result.h"
#include "collscope/types.h"

namespace collscope {

enum class JobFormat : std::uint8_t { profiler, profiler_legacy, flight_recorder, nccl_log };
const char* name_of(JobFormat f);
// "4 Flight Recorder dumps", "1 NCCL log", "2 PyTorch profiler traces (older format)".
std::string files_noun(JobFormat f, std::size_t n);

inline constexpr double kNoTime = std::numeric_limits<double>::quiet_NaN();
inline bool has_time(double t) { return !std::isnan(t); }

// One call one rank made, as its file recorded it.
struct JobCall {
  std::int32_t rank = -1;  // world rank
  std::string name;        // as written: "nccl:all_reduce", "gloo:send", "AllReduce"
  // What collscope calls it: a collective's name ("allreduce", "broadcast", ...,
  // "alltoallv" for an all-to-all whose blocks differ per peer), "send" or "recv"; ""
  // for calls collscope cannot replay (coalesced groups, ...).
  std::string kind;
  bool p2p = false;
  std::string group;       // the process group (communicator) it ran on
  std::int64_t seq = -1;   // its sequence number in that group (-1: not recorded)
  std::int32_t peer = -1;  // send/recv: the peer's world rank (-1: not recorded)
  std::int32_t root = -1;  // broadcast/reduce/scatter/gather: the root's world rank (-1: not recorded)
  // NCCL's count: elements per rank (allreduce, broadcast, reduce, send, recv), per
  // rank's input (allgather, gather), per rank's output (reduce_scatter, scatter), per
  // peer block (alltoall); for alltoallv, every element the rank sends. Empty when the
  // file has no sizes.
  std::optional<std::uint64_t> count;
  // alltoallv (all_to_all_single with split sizes, all_to_all with tensors of different
  // sizes): the elements this rank sends to and receives from each member of the group,
  // in group-rank order. Empty for the other calls, and for an alltoallv whose file
  // does not say how it was split (a Flight Recorder dump of all_to_all_single).
  std::vector<std::uint64_t> send_counts, recv_counts;
  std::string sizes;              // the sizes as written, for messages ("[[1024, 1024]]")
  std::string dtype;              // as written ("Float", "float32", "ncclFloat32")
  std::optional<DType> dt;        // collscope's element type of the same size and kind
  std::uint32_t dtype_bytes = 0;  // element size, 0 when unknown
  std::string reduce_op;          // "sum", ...; "" when not recorded
  bool async_op = false;          // returned at once; completed at a wait
  bool async_known = false;       // the file says whether it was (a recording does; traces and dumps do not)
  std::string state;              // "completed", "started", "scheduled"; "" when not recorded
  // Times in microseconds on the rank's clock (kNoTime: not recorded):
  double t_issue = kNoTime, t_return = kNoTime;         // the call entered and returned
  double t_start = kNoTime, t_end = kNoTime;            // the communication began and ended
  double t_wait_begin = kNoTime, t_wait_end = kNoTime;  // async: the wait that completed it
  std::string file;                                     // where it was read
  std::string where;                                    // "/entries/41", "line 1203", "event 77"
  std::string site;                                     // the program line that made it ("train.py:42"), when recorded

  // The interval the rank spent in this call (before any wait).
  double begin() const;
  double end() const;
};

// A process group as the files describe it.
struct JobGroup {
  std::string id;                   // "0", "1", a hash
  std::string desc;                 // "default_pg", ...
  std::vector<std::int32_t> ranks;  // world ranks, in group-rank order
  bool world = false;               // the default group
};

struct JobRank {
  std::int32_t rank = -1;
  bool present = false;  // a file was given for this rank
  std::string file;
  std::vector<JobCall> calls;                               // in the order the rank made them
  std::map<std::string, std::vector<std::int32_t>> groups;  // the groups as this rank's file lists them
  std::string clock;  // what its times are relative to ("epoch", "profiler start", "")
};

// The channels NCCL built for a communicator: each a ring of world ranks, and each
// rank's place in the channel's tree.
struct JobChannels {
  std::string comm;                              // NCCL's communicator id, or "comm of N ranks #k"
  std::string group;                             // the job's group it belongs to ("" if unknown)
  std::vector<std::int32_t> members;             // world ranks, in communicator-rank order
  std::vector<std::vector<std::int32_t>> rings;  // per channel: world ranks in ring order
  // per channel, per member (communicator rank): {up, down0, down1, down2} in world ranks, -1 = none
  std::vector<std::vector<std::vector<std::int32_t>>> trees;
  std::string file;
};

struct Job {
  JobFormat format = JobFormat::flight_recorder;
  std::int32_t world = 0;
  std::vector<JobRank> ranks;              // index = world rank
  std::map<std::string, JobGroup> groups;  // by id
  std::vector<JobChannels> channels;
  std::vector<std::string> files;  // every file read, in order
  std::vector<std::string> notes;  // what the files lack and what import assumed
  bool sizes_known = true;         // every call has its count
  bool clocks_comparable = false;  // the ranks' times share one clock (epoch)
  std::string sizes_from;          // the second source, when one gave the sizes
};

// Reads files (or folders of them) into a job. `size_sources` is a second source of
// the same program (Flight Recorder dumps, `collscope record` output) for what the
// first lacks: sizes, dtypes, peers and groups are taken from it call by call.
Result<Job> load_job(const std::vector<std::string>& paths, const std::vector<std::string>& size_sources = {});

// Whether a file looks like one of the formats above (for `collscope analyze`, which
// also reads collscope's own flight records). Reads at most the start of the file.
bool is_job_file(const std::string& path);

// --- checking: like torchfrtrace -------------------------------------------------------

struct JobFinding {
  // analyze.desync, analyze.missing_rank, analyze.incomplete, analyze.straggler,
  // analyze.split_mismatch (an alltoallv's send and receive counts disagree), ...
  std::string id;
  std::string message;  // plain words with the ranks and sequence numbers named
};

struct JobStraggler {
  std::int32_t rank = -1;
  std::int64_t last_at = 0, calls = 0;  // arrived last at this many of the calls it joined
  double mean_wait_us = 0, max_wait_us = 0;
  std::string max_call;  // "seq 17 of group 0 (nccl:all_reduce)"
};

struct JobAnalysis {
  std::vector<JobFinding> findings;  // problems, in a fixed order
  std::vector<std::string> facts;    // what was checked, for the report
  std::optional<JobStraggler> straggler;
  std::int64_t calls = 0, matched = 0;
};

struct AnalyzeOptions {
  double straggler_ms = 1.0;  // a rank the others waited for longer than this (median) is reported
};
JobAnalysis analyze_job(const Job& job, const AnalyzeOptions& options = {});

// --- replaying ---------------------------------------------------------------------

struct ImportOptions {
  std::uint64_t scale_down = 1;  // divide every element count by this
  // Significant digits of the compute spans' durations: 0 exact, -1 exact unless the
  // program would have more than 20000 compute entries or exceed 4 MiB (then rounded
  // to 3, then 2 digits, which lets the ranks' spans between two calls share entries).
  int compute_digits = -1;
  std::string source_label;  // how captions name the files ("" = from the job)
};

struct ImportedScenario {
  std::string json;  // the scenario, format version 1
  std::int32_t ranks = 0;
  std::int64_t calls = 0, collectives = 0, p2p = 0, compute_spans = 0, groups = 0;
  std::int64_t custom_channels = 0;  // calls that run on the log's channels
  std::int64_t compute_entries = 0;  // program entries for the compute spans (several ranks each)
  std::vector<std::string> notes;    // said in the scenario's description too
};

// The scenario a job's communication becomes. Errors: import.inconsistent (the ranks
// disagree: `collscope analyze` says how), import.too_large (over the scenario limits),
// import.no_splits (an alltoallv whose per-peer counts no file gives).
Result<ImportedScenario> job_scenario(const Job& job, const ImportOptions& options = {});

// Writes it (atomically: readers see no file or the whole one). Errors: import.io.
Status write_imported_scenario(const std::string& path, const ImportedScenario& s);

}  // namespace collscope
