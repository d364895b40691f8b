// How a job becomes a scenario (job_scenario.cpp): the builder every part shares.
//
// Every rank's calls, in the order it made them, become the program:
//   - a collective that every member of its group made (matched by group and sequence
//     number) is one program entry on that group, with the sizes, dtype, op and root
//     the files give;
//   - send and recv are entries of their rank ("ranks": [r]); an asynchronous one
//     (isend, irecv) is followed by the wait that completed it, where it happened;
//   - the time a rank spent between two calls is a compute span of that duration.
//
// Compute spans run on a rank's second thread (fast mode), so what makes the replay
// wait as the job did are the buffers a span writes: every call uses a slot buffer
// x<s>, and the span before a call writes that call's slot, so the call waits for it;
// the span after a blocking call writes the slot that call used, so it waits for the
// call to end. A call that returned at once (async_op, isend) keeps its slot until its
// wait, and the spans in between write other slots: that is the job's overlap of
// computation with communication, and the timeline shows it.
//
//   rank 0:  [compute 300 us] -> allreduce x0 (async) -> [compute 500 us, x1] -> allreduce x1 -> wait x0
//                                 `--- runs beside the compute ---'
//
// The builder's parts, one file each:
//   job_scenario.cpp       the whole: element type and notes, each rank's events, the walk
//                          of the ranks together, the buffers and the file; job_scenario()
//   scenario_calls.cpp     one collective on its members, one send, recv or wait on its rank
//   scenario_spans.cpp     slot buffers and the compute spans that make calls wait
//   scenario_lines.cpp     program entries: ranks' lines merged into shared ones, captions
//   scenario_channels.cpp  an all-reduce on NCCL's rings, as a custom body
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collscope/job.h"
#include "collscope/result.h"
#include "collscope/types.h"

namespace collscope::job {

using json = nlohmann::ordered_json;

inline constexpr std::uint32_t kMaxComputeUs = 60'000'000;
// Above this many compute entries, spans are rounded unless the user says otherwise.
inline constexpr std::int64_t kExactComputeEntries = 20000;
// Above this the scenario stops giving calls NCCL's channels (each costs a body).
inline constexpr std::size_t kChannelBudgetBytes = 3u << 20;

// --- words (scenario_lines.cpp) ---------------------------------------------------------
// Captions show "{expr}" as a value (docs/ARCHITECTURE.md, "Programs"); the job's own text (file
// names such as rank{0..3}.json, call sites) keeps its braces as written.
std::string literal_braces(const std::string& t);
std::string file_name(const std::string& p);
// "rank{0..3}.json" when the files differ only in their rank's number.
std::string files_label(const Job& job, const std::vector<std::int32_t>& ranks);
std::string source_word(JobFormat f);          // "trace", "dump", "log"
std::string safe_name(const std::string& id);  // a group's name in the scenario: "pg_1"
// A gap's microseconds for a compute span, to `digits` significant digits (0: exact).
std::uint32_t round_digits(double us, int digits);

// An alltoallv's counts: [i][j] = elements group rank i sends to group rank j.
using Table = std::vector<std::vector<std::uint64_t>>;

struct Ev {
  bool wait = false;
  std::size_t call = 0;
  double begin = kNoTime, end = kNoTime;
};

struct RankState {
  std::vector<Ev> events;
  std::size_t pos = 0;
  std::set<int> busy;        // slots of calls still in flight (or reserved for one)
  std::vector<int> pending;  // slots whose completion the next compute span must follow
  bool unconsumed = false;   // a compute span no later call waits for yet
  double last_end = kNoTime;
  std::map<std::size_t, int> slot_of;  // call -> its slot while in flight
  std::map<std::size_t, std::string> request_of;
  std::int64_t blocked_key = -1;
};

// A program entry of one rank, waiting to be written: entries of several ranks that
// differ only in their rank (and a peer at the same distance) become one entry.
struct RankLine {
  std::int32_t rank = -1;
  json entry;                      // without "ranks", the peer and the caption
  std::string key;                 // what must agree for lines to merge
  std::int32_t peer = -1;          // send/recv: the peer's world rank
  const char* peer_key = nullptr;  // "to" or "from"
  const JobCall* call = nullptr;   // what the caption describes
};

class ScenarioBuilder {
 public:
  ScenarioBuilder(const Job& job, const ImportOptions& opt, bool p2p_nonblocking, int digits)
      : job_(job), opt_(opt), p2p_nonblocking_(p2p_nonblocking), digits_(digits) {}

  Result<ImportedScenario> build();

 private:
  const Job& job_;
  const ImportOptions& opt_;
  const bool p2p_nonblocking_;
  const int digits_;

  DType dtype_ = DType::float32;
  std::uint32_t esize_ = 4;
  std::string reduce_op_;  // the reduction most calls name ("" when none does)
  std::vector<RankState> st_;
  std::vector<std::string> program_;
  std::size_t program_bytes_ = 0;
  std::vector<std::uint64_t> xcount_, ycount_;
  bool work_used_ = false;
  std::map<std::string, std::string> gname_;
  std::set<std::string> notes_;
  std::vector<std::string> note_order_;
  ImportedScenario out_;
  // Per-rank lines not yet written, in layers: a rank's k-th line since the last shared
  // entry is in layer k, so that each rank's lines keep their order.
  std::vector<std::vector<RankLine>> batch_;
  std::map<std::int32_t, std::size_t> batch_depth_;

  // Collectives matched across members: key -> (members that reached it).
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> key_id_;
  std::vector<std::pair<std::string, std::int64_t>> keys_;
  std::map<std::int64_t, std::set<std::int32_t>> arrived_;
  std::map<std::int64_t, int> split_slot_;  // collectives written per member (a cycle between groups)
  // alltoallv calls by (group, seq): the elements group rank i sends to j, as replayed.
  std::map<std::pair<std::string, std::int64_t>, Table> tables_;

  const JobCall& call(std::int32_t r, std::size_t i) const { return job_.ranks[static_cast<std::size_t>(r)].calls[i]; }
  const JobGroup& group(const std::string& id) const { return job_.groups.at(id); }
  std::int32_t group_size(const std::string& id) const { return static_cast<std::int32_t>(group(id).ranks.size()); }
  bool is_async(const JobCall& c) const { return c.async_op || (p2p_nonblocking_ && c.p2p); }

  // --- the whole (job_scenario.cpp) ----------------------------------------------------
  void choose_dtype();  // and the notes every scenario of the job carries
  void name_groups();
  Status rank_events(std::int32_t r);  // its calls in order, and the waits where they happened
  void walk();                         // every rank's events, a collective once its members are there
  Result<json> buffers();              // ... within the scenario's limits
  std::string file_text(const json& buffers);

  // --- calls (scenario_calls.cpp) ------------------------------------------------------
  Status build_tables();
  bool shared_key(std::int32_t r, const Ev& e, std::int64_t& id);
  void emit_collective(std::int64_t key_id, const std::vector<std::int32_t>& who, bool split);
  void emit_rank_event(std::int32_t r);

  // --- slots and compute spans (scenario_spans.cpp) -------------------------------------
  std::uint64_t elems(const JobCall& c) { return c.kind == "barrier" ? 0 : elems_of(c, c.count.value_or(1)); }
  // `n` of the call's elements in the replay's type, scaled down (0 stays 0).
  std::uint64_t elems_of(const JobCall& c, std::uint64_t n);
  // A slot free on every one of `ranks`: one of `prefer` if possible, else the lowest.
  // A call that stays in flight avoids the slots a later compute span must wait on
  // (`pending`), which it could then not write.
  int slot_free_on(const std::vector<std::int32_t>& ranks, const std::vector<int>& prefer, bool avoid_pending);
  static std::string slot_name(int s) { return "x" + std::to_string(s); }
  double gap(const RankState& s, const Ev& e) const;
  static void advance_clock(RankState& s, const Ev& e);
  // The compute span before a call that will use `slot` (-1: the call has no buffer).
  void compute_before_call(std::int32_t r, const Ev& e, int slot);
  // A span that no call reads (before a wait or a barrier).
  void compute_alone(std::int32_t r, std::uint32_t us);
  void after_call(std::int32_t r, std::size_t ci, int slot, bool async);
  void use_slot(int slot, const JobCall& c, std::uint64_t n);
  // An alltoallv: group rank g sends its row of the table and receives its column.
  void use_slot(int slot, const Table& t, std::size_t g);
  void grow_slot(int slot, std::uint64_t x, std::uint64_t y);

  // --- program entries (scenario_lines.cpp) --------------------------------------------
  void note(const std::string& n);
  void emit(const json& entry);
  void add_line(RankLine line);
  void add_compute(std::int32_t r, std::uint32_t us, std::string writes);
  void flush_lines();
  // An alltoallv's table in the job's words: "blocks of 0 to 128 B Float, 1.5 KiB in all".
  std::string table_text(const JobCall& c, const Table& t);
  std::string size_text(const JobCall& c);
  std::string caption_of(const JobCall& c, const std::vector<std::int32_t>& who, const std::string& peer_text = "",
                         const std::string& size_given = "");

  // --- NCCL's channels (scenario_channels.cpp) -----------------------------------------
  std::optional<json> channel_body(const JobCall& c, std::uint64_t n, const std::string& buf);
};

}  // namespace collscope::job
