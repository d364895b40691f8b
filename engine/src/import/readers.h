// The readers of each format a job's files come in (collscope/job.h), and the names
// they share. Each reader takes one file's text and returns what that file says about
// its rank; load_job.cpp puts the ranks together.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collscope/job.h"

namespace collscope::job {

// What one file says.
struct RankFile {
  JobFormat format = JobFormat::flight_recorder;
  std::int32_t rank = -1;   // -1: the file does not say (the name or the order decides)
  std::int32_t world = -1;  // -1: the file does not say
  std::vector<JobCall> calls;
  std::map<std::string, JobGroup> groups;
  std::string clock;  // "epoch", "profiler start", ""
  bool sizes = true;  // the file records sizes
  bool peers = true;  // ... and the peers of point-to-point calls
  std::vector<std::string> notes;
};

// An NCCL log may hold several processes' lines (one file, or one per process).
struct NcclLog {
  std::vector<RankFile> ranks;  // per process with calls or init lines, rank = its world rank
  std::vector<JobChannels> channels;
  std::vector<std::string> notes;
  bool has_calls = false;
};

// Limits on what is read: a trace or dump beyond this is refused, never loaded.
inline constexpr std::uint64_t kMaxJobFileBytes = 2ull << 30;  // 2 GiB per file
inline constexpr std::size_t kMaxJobFiles = 4096;

// The whole file, bounded: only regular files, at most `max_bytes`. Errors: import.io.
// (One helper, so that it can go through the engine's shared reader once there is one.)
Result<std::string> read_job_file(const std::string& path, std::uint64_t max_bytes = kMaxJobFileBytes);

// Which format a file's text is in; nullopt for none. `collscope_record` is set when
// the text is collscope's own flight record (not a job file).
std::optional<JobFormat> detect_format(std::string_view text, bool* collscope_record = nullptr);

Result<RankFile> read_flight_recorder(std::string_view text, const std::string& file);
Result<RankFile> read_profiler(std::string_view text, const std::string& file);
Result<NcclLog> read_nccl_log(std::string_view text, const std::string& file);

// --- names --------------------------------------------------------------------------

// "nccl:all_reduce", "all_reduce", "allreduce", "AllReduce", "c10d::allreduce_",
// "_allgather_base", "reduce_scatter_tensor_coalesced" -> "allreduce", "allgather", ...;
// "send"/"recv" for point-to-point; "" for what collscope cannot replay.
std::string kind_of(std::string_view name);
bool is_p2p_kind(std::string_view kind);

// Element types as PyTorch ("Float", "torch.float32", "float"), NCCL ("ncclFloat32",
// or its number in a log line) and collscope ("float32") write them.
struct DTypeInfo {
  std::optional<DType> dt;  // collscope's type of that size and kind (int16 -> none)
  std::uint32_t bytes = 0;  // 0: unknown
};
DTypeInfo dtype_info(std::string_view name);
DTypeInfo nccl_dtype(int number);
std::string nccl_reduce_op(int number);  // "sum", ... or "" for others

// NCCL's count of a call from the sizes of its tensors: elements per rank for most,
// per input for all-gather and gather, per output for reduce-scatter and scatter, per
// peer block for all-to-all. `group_size` is needed for all-to-all.
std::uint64_t count_from_numels(std::string_view kind, std::uint64_t in_numel, std::uint64_t out_numel,
                                std::int32_t group_size);

// An all-to-all's blocks, once its group's size is known. `send` and `recv` are the
// elements per peer as the file gives them (empty: not given, the tensor is split
// evenly, as PyTorch does without split sizes); `in_numel` and `out_numel` the whole
// tensors. Equal blocks leave an alltoall of one block; others make the call an
// alltoallv with its JobCall::send_counts and recv_counts, or, when the file cannot
// say (one tensor each, of sizes that cannot be split evenly), an alltoallv without
// them. Returns "" or what is wrong (a list that is not one number per member).
std::string settle_alltoall(JobCall& c, std::int32_t group_size, std::vector<std::uint64_t> send,
                            std::vector<std::uint64_t> recv, std::uint64_t in_numel, std::uint64_t out_numel);
// The same call in two sources: the same kind, an all-to-all even or not.
bool same_kind(std::string_view a, std::string_view b);
// "[3, 1, 2]" (the profiler writes split sizes as text); nullopt when it is not such a
// list or was cut short ("[3, 1, ...]").
std::optional<std::vector<std::uint64_t>> parse_count_list(std::string_view text);

// "[0, 1, 2, 3]" (PyTorch writes group ranks as text); nullopt when it is not such a
// list or was cut short ("[0, 1, ..., 63]").
std::optional<std::vector<std::int32_t>> parse_rank_list(std::string_view text);

// The number at the end of a file name's stem ("rank3.json", "nccl_trace_rank_12"), or -1.
std::int32_t rank_from_name(const std::string& path);

// "64 MiB"
std::string human_size(double bytes);

// A set of ranks in words, sorted, runs of three or more as a range: "rank 3",
// "ranks 0, 1", "ranks 0-3, 7", "no rank".
std::string rank_ranges(std::vector<std::int32_t> r);

}  // namespace collscope::job
