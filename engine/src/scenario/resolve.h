// Checks one program call against the scenario's world and buffers and turns it
// into the engine's CollArgs. Used twice: by parse_scenario, so that `validate`
// catches every mistake with its exact location, and by lower_scenario, so that
// scenarios built in code (from CLI flags, by the GUI) get the same checks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "collscope/result.h"
#include "collscope/scenario.h"
#include "scenario/expr.h"

namespace collscope::scenario {

// Largest element count a buffer (or a call's count) can have: a 1-byte dtype at
// kMaxBufferBytes. Keeps count * ranks far from overflowing 64 bits.
inline constexpr std::uint64_t kMaxCountElements = kMaxBufferBytes;

// Largest scenario text accepted. Every JSON value costs a few hundred bytes in the
// located tree, so this bounds memory and time on hostile input (about 2 million
// values at most); real lessons are a few kilobytes.
inline constexpr std::uint64_t kMaxScenarioBytes = 4ull << 20;

// Largest schedule a scenario may lower to, in transfers over all steps (a transfer
// takes about 50 bytes; four ring all-reduces on 1024 ranks take 8 million). Bounds
// the memory and time of lowering, whatever the program repeats.
inline constexpr std::uint64_t kMaxTransfers = 8'000'000;
// The same for a file of collective calls that is priced, never run (LowerOptions::
// price_only): a 4096-rank all-to-all by Bruck lowers to 50 million transfers.
inline constexpr std::uint64_t kMaxPricedTransfers = 64'000'000;
Error too_many_transfers_error(Location where, std::uint64_t limit = kMaxTransfers);

// True when the program is a list of blocking collective calls on every rank (no
// point-to-point or local ops, groups, requests or custom algorithms): it lowers call
// by call, without matching.
bool is_collectives_only(const Scenario& s);

// Messages shared by the parser and the lowering, so both say the same thing.
Error unknown_op_error(const std::string& op, Location where);
Error root_range_error(const std::string& root_text, std::int32_t ranks, Location where);
Error count_too_large_error(const std::string& count_text, Location where);
Error buffer_bytes_error(const std::string& name, std::int32_t rank, std::uint64_t count, DType t, Location where);
Error total_bytes_error(std::uint64_t total, Location where);
// `max`: kMaxRanks for a schedule that runs, kMaxPricedRanks for one that is only priced.
Error ranks_range_error(const std::string& ranks_text, Location where, std::int32_t max = kMaxRanks);

// Bytes of all buffers over all ranks (saturating), and the index of the first
// buffer at which the running total passes kMaxTotalBytes (-1 when it never does).
std::uint64_t total_bytes(const Scenario& s);
std::int32_t first_over_total(const Scenario& s);

// "8 bytes", "3.0 KiB", "4.0 GiB"
std::string human_bytes(std::uint64_t bytes);
// Two sizes a message compares (a size and its limit), as human_bytes; when rounding
// would make them read the same ("4.0 MiB, the limit is 4.0 MiB") the first becomes
// its exact byte count and the second its exact count with the rounded size after it.
std::pair<std::string, std::string> human_bytes_pair(std::uint64_t bytes, std::uint64_t other);

// An error found on the schedule names a JSON Pointer into the program but no line:
// gives it the file, line and column of the program entry the pointer names (or of
// the nearest entry that contains it), keeping the pointer.
Error placed_in_file(Error e, const Scenario& s);

// Checks what lower_scenario needs of a scenario that did not come from a file:
// rank count, one count per rank, unique names, byte limits, shape of explicit values.
// `byte_limits`: false for a schedule priced on a topology and never run.
Status check_world(const Scenario& s, std::int32_t max_ranks = kMaxRanks, bool byte_limits = true);

class CallResolver {
 public:
  explicit CallResolver(const Scenario& s);
  // Buffer ids in the result are positions in s.buffers. `members` (world ranks in
  // group order) runs the call on a group; empty = every rank. `env`: the values of the
  // enclosing repeats' variables, for alltoallv's "counts" and offsets.
  Result<CollArgs> resolve(const ProgramOp& op, std::int32_t index, const std::vector<std::int32_t>& members = {},
                           const Env& env = {}) const;

 private:
  Location where(const ProgramOp& op, std::int32_t index, const std::string& key) const;
  // alltoallv: the per-peer counts and offsets of a call on n ranks.
  Status resolve_peers(const ProgramOp& op, std::int32_t index, std::int32_t n, const Env& env, CollArgs& a) const;
  // The steps of resolve(), in order, on one call (Site, resolve.cpp).
  struct Site;
  Status check_algorithm(const Site& site, Collective c) const;
  Result<std::int32_t> lookup_buffer(const Site& site, const std::string& name, const char* key) const;
  Status resolve_buffers(const Site& site, CollArgs& a) const;
  Status resolve_count(const Site& site, const Env& env, CollArgs& a) const;
  Status check_fits(const Site& site, const CollArgs& a) const;
  // The JSON Pointer of a program entry that has none: "/program/<index>".
  const Scenario& s_;
  std::unordered_map<std::string, std::int32_t> by_name_;
};

}  // namespace collscope::scenario
