// The matcher: per-rank programs -> steps, with MPI's matching rules (program.h).
//
//   round k:  every rank runs ahead until it must wait
//               isend/irecv     post the message, go on
//               send/recv       post the message, wait until it has moved
//               wait            wait until the named requests' messages have moved
//               compute, copy,  take this step (one per rank and step), go on next round
//               accumulate
//               collective      arrive, wait until every member has arrived and it ran
//             messages matched so far move in step k (both ends posted)
//             then collectives whose members have all arrived run, in their own steps
//             (the parts of one call on a split group side by side, in shared steps)
//   nothing moved and nobody can go on: a deadlock (or a message that never matches)
//
// One class, in five files by what each part does:
//   match.cpp           the rounds, and one rank's walk through its ops
//   match_messages.cpp  messages (posting, pairing, moving) and races on pending buffers
//   match_steps.cpp     steps and calls: a round's transfers, collectives, written steps,
//                       custom algorithms
//   match_parts.cpp     the parts of a split group's call, side by side
//   match_stuck.cpp     the end: unmatched messages, unwaited requests, deadlocks
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "program/program.h"

namespace collscope::program::matching {

struct Message {
  std::int32_t src = 0, dst = 0;
  std::int32_t send = -1, recv = -1;  // instance index on src / dst
  bool moved = false;
};

// A pending non-blocking op: an isend/irecv's message, or a collective called with a
// request. `touches` are the slices it reads (false) or writes (true) until its wait.
struct Request {
  std::string name;
  std::int32_t inst = -1;  // the op's instance
  std::int32_t msg = -1;   // isend/irecv
  std::int32_t sync = -1;  // a collective
  std::vector<std::pair<Region, bool>> touches;
};

struct RankState {
  std::size_t pc = 0;
  std::int32_t posted = -1;                      // message of the blocking send/recv at pc, once posted
  bool arrived = false;                          // at the sync at pc
  bool reached = false;                          // the op at pc has been reached (its record started)
  std::vector<Request> pending;                  // requests not waited for yet
  std::map<std::string, std::string> completed;  // request name -> the wait that completed it
};

// One part of a split group's call while the parts are folded together (match_parts.cpp):
// the steps, records and calls lowering it made.
struct PartSteps {
  std::int32_t sync = -1;
  std::int32_t begin = 0, end = 0;  // its steps as lowered alone
  std::size_t first_record = 0, end_record = 0;
  std::size_t first_call = 0, end_call = 0;
};

// What a part's own step said, before its step is shared.
struct Words {
  std::string caption, phase;
};

// What one op of a rank did this round.
enum class Progress : std::uint8_t {
  blocked,    // it cannot complete yet: the rank waits
  took_step,  // a local op took the rank's place in this round's step: the rank stops
  completed,  // it completed: the rank goes on with its next op
};

class Matcher {
 public:
  Matcher(const Expansion& x, Target& t);
  Status run();

 private:
  const Expansion& x_;
  Target& t_;
  Schedule& s_;
  std::vector<RankState> st_;
  std::vector<Message> msgs_;
  std::map<std::pair<std::int32_t, std::int32_t>, std::deque<std::int32_t>> open_sends_, open_recvs_;
  std::vector<std::int32_t> ready_;  // matched messages that have not moved
  std::vector<std::int32_t> arrived_;
  std::set<std::int32_t> complete_;                  // syncs every member reached, not emitted yet
  std::vector<const Instance*> instance_of_record_;  // record -> its instance, see instance_of
  std::size_t counted_steps_ = 0;                    // steps whose transfers are in transfers_
  std::uint64_t transfers_ = 0;
  std::vector<char> done_;
  std::vector<std::vector<std::int32_t>> arrivals_;  // per sync: the members' records
  std::vector<char> busy_;
  std::optional<ReduceOp> step_op_;
  Step cur_;
  std::vector<std::int32_t> cur_records_;  // per transfer of cur_: the records that own it
  std::vector<std::int32_t> cur_owner_;    // per entry of cur_records_: its transfer
  std::int32_t program_call_ = -1;
  bool last_has_reduce_ = false;  // the program call program_call_ has an accumulate
  std::int32_t inner_calls_ = 0;  // collectives lowered inside the custom call so far

  const Instance& inst(std::int32_t r, std::size_t i) const { return x_.ranks[static_cast<std::size_t>(r)][i]; }
  OpRecord& record(const Instance& in) { return s_.ops[static_cast<std::size_t>(in.record)]; }
  std::int32_t step_now() const { return static_cast<std::int32_t>(s_.steps.size()); }
  Location where(const Instance& in, const std::string& key = "") const;
  std::string who(std::int32_t r, const Instance& in) const;
  std::string record_text(const Instance& in) const;

  // One rank (match.cpp).
  Result<bool> advance(std::int32_t r);
  Result<Progress> message_op(std::int32_t r, const Instance& in, bool& did);
  Result<Progress> wait_op(std::int32_t r, const Instance& in, OpRecord& rec);
  Result<Progress> local_op(std::int32_t r, const Instance& in, OpRecord& rec);
  Result<Progress> sync_op(std::int32_t r, const Instance& in, bool& did);
  Transfer local_transfer(std::int32_t r, const Instance& in);
  bool finished(const Request& q) const;
  Result<bool> emit_complete();

  // Messages and races (match_messages.cpp).
  Status check_race(std::int32_t r, const Instance& in, const Region& reg, bool write) const;
  Status check_reuse(std::int32_t r, const Instance& in) const;
  std::vector<std::pair<Region, bool>> sync_touches(std::int32_t r, const Instance& in) const;
  Status check_sync_race(std::int32_t r, const Instance& in) const;
  Result<std::int32_t> post(std::int32_t r, std::size_t i);
  Status check_pair(const Message& m) const;
  void move_ready();

  // Steps and calls (match_steps.cpp).
  void add_transfer(const Transfer& t, std::initializer_list<std::int32_t> records);
  std::int32_t label_id(const std::string& label);
  std::int32_t program_call(std::optional<ReduceOp> op);
  void push_step(Step st);
  void flush();
  const Instance* instance_of(std::int32_t record);
  Status emit_sync(std::int32_t y);
  Status check_size(Location where);
  Location sy_where(const Sync& sy, const std::string& key = "") const;
  static std::int32_t program_index(const std::string& pointer);
  Status emit_written_step(const Sync& sy);
  Status emit_inner(const Sync& sy, const CollArgs& args, std::int32_t index);
  Status emit_custom(std::int32_t y, const CollArgs& args, std::int32_t index);

  // The parts of a split group's call, side by side (match_parts.cpp).
  Status emit_parts(const std::vector<std::int32_t>& syncs);
  void fold_parts(std::int32_t base, const std::vector<PartSteps>& parts);
  void describe_shared(const std::vector<PartSteps>& parts, const std::vector<std::size_t>& present,
                       const std::vector<Words>& words, Step& to) const;

  // The end (match_stuck.cpp).
  Status at_end() const;
  std::int32_t absent_member(std::int32_t sync) const;
  Status stuck() const;
};

}  // namespace collscope::program::matching
