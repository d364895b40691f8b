// Reading a scenario's "groups" and "program" (see scenario.h and program/lower.h).
#pragma once

#include <string>
#include <vector>

#include "collscope/scenario.h"
#include "scenario/reader_base.h"

namespace collscope::scenario {

class ProgramReader : public ReaderBase {
 public:
  ProgramReader(const std::string& file, std::int32_t ranks) : ReaderBase(file), ranks_(ranks) {}

  std::vector<GroupSpec> read_groups(const Member& m) const;
  // `s` holds the world, the buffers and the groups read so far.
  std::vector<ProgramOp> read_program(const Member& m, const Scenario& s);
  // "expect": what must hold at the end (scenario.h; read_expect.cpp).
  std::vector<ExpectSpec> read_expect(const Member& m, const Scenario& s);

 private:
  std::int32_t ranks_;
  const Scenario* s_ = nullptr;

  // Names an expression may use here: rank, size and the enclosing repeats' variables.
  using Scope = std::vector<std::string>;

  ProgramOp read_op(const Value& v, Scope& scope, bool in_custom) const;
  void read_collective(const Value& v, ProgramOp& op, Scope& scope, bool in_custom) const;
  void read_p2p(const Value& v, ProgramOp& op, const Scope& scope) const;
  void read_local(const Value& v, ProgramOp& op, const Scope& scope) const;
  void read_compute(const Value& v, ProgramOp& op, const Scope& scope) const;
  void read_wait(const Value& v, ProgramOp& op) const;
  void read_repeat(const Value& v, ProgramOp& op, Scope& scope, bool in_custom) const;
  void read_step(const Value& v, ProgramOp& op, const Scope& scope) const;
  // read_expect.cpp
  void read_holds(const Member& holds, ExpectSpec& e, Scope& scope, const Scenario& s) const;

  std::string expression(const Member& m, const Scope& scope, const std::string& example) const;
  // A label or caption: its expressions in braces ("F{mb}") may use the names in scope.
  void check_text(const Member& m, const Scope& scope) const;
  RankSelector rank_selector(const Member& m, const Scope& scope) const;
  SliceSpec slice(const Member& m, const Scope& scope, bool with_rank) const;
  ReduceOp reduce_op(const Member& m) const;
  // alltoallv's "counts" and offsets: an expression in rank, peer and size, or a table.
  PeerTable peer_table(const Member& m, const Scope& scope) const;
  std::string buffer_name(const Member& m) const;
  std::string request_name(const Value& v, const Location& where) const;
};

// The op names a program accepts besides the collectives.
const std::vector<std::string>& program_op_names();

}  // namespace collscope::scenario
