// A job becomes a scenario: the whole of it (the builder and its parts: scenario_builder.h).
//
// build() chooses the element type and the notes, gives every rank its events (its calls,
// and the waits of asynchronous ones where they happened), walks the ranks together so
// that a collective is written once every member has reached it, and writes the buffers
// and the file. job_scenario() tries the plain replay first, then one with non-blocking
// send and recv if blocking ones deadlock, and with rounded compute spans if the file
// would be too large.
#include <algorithm>
#include <map>
#include <set>

#include "collscope/collective.h"
#include "collscope/scenario.h"
#include "import/readers.h"
#include "import/scenario_builder.h"
#include "scenario/resolve.h"
#include "trace/atomic_file.h"

namespace collscope {

namespace job {

void ScenarioBuilder::choose_dtype() {
  // The scenario's element type: the one most calls use.
  std::map<DType, std::int64_t> dtypes;
  std::int64_t unsupported = 0;
  for (const auto& jr : job_.ranks)
    for (const auto& c : jr.calls) {
      if (c.kind.empty()) ++unsupported;
      if (c.dt) ++dtypes[*c.dt];
      if (!c.reduce_op.empty() && (reduce_op_.empty() || c.reduce_op < reduce_op_)) reduce_op_ = c.reduce_op;
    }
  if (!dtypes.empty()) {
    dtype_ = std::max_element(dtypes.begin(), dtypes.end(), [](const auto& a, const auto& b) {
               return a.second < b.second;
             })->first;
  } else {
    note("the files name no dtypes; float32 is taken");
  }
  esize_ = static_cast<std::uint32_t>(size_of(dtype_));
  if (unsupported)
    note(std::to_string(unsupported) +
         " calls collscope cannot replay (coalesced groups of calls, object collectives) "
         "were left out");
  for (const auto& n : job_.notes) note(n);
  if (p2p_nonblocking_)
    note(
        "the files do not say whether send and recv were blocking; as blocking calls they deadlock, so they run "
        "as isend and irecv, waited before the rank's next other call");
  if (digits_)
    note("compute spans are rounded to " + std::to_string(digits_) +
         " significant digits (--compute-digits), so that "
         "the ranks' spans between two calls share program entries: the scenario stays within 4 MiB and quick to plan");
  if (opt_.scale_down > 1)
    note("every element count is divided by " + std::to_string(opt_.scale_down) +
         " (--scale-down) so that the replay fits this machine; the captions give the job's own sizes");
}

void ScenarioBuilder::name_groups() {
  std::set<std::string> used_names;
  for (const auto& [id, g] : job_.groups) {
    if (g.world) continue;
    std::string name = safe_name(id);
    while (used_names.count(name)) name += "_";
    used_names.insert(name);
    gname_[id] = name;
  }
}

// Where each asynchronous call's wait goes: before the first later call that began after
// the wait did; point-to-point run as non-blocking, before the rank's next call that is
// not a send or recv; a call never waited for, at the end.
Status ScenarioBuilder::rank_events(std::int32_t r) {
  const JobRank& jr = job_.ranks[static_cast<std::size_t>(r)];
  auto& evs = st_[static_cast<std::size_t>(r)].events;
  std::vector<std::size_t> calls;
  for (std::size_t i = 0; i < jr.calls.size(); ++i) {
    const JobCall& c = jr.calls[i];
    if (c.kind.empty()) continue;
    if (c.p2p && c.peer < 0)
      return make_error("import.no_peers",
                        "rank " + std::to_string(r) + "'s " + c.name + " (" + c.where + ") does not say its peer",
                        "give --sizes with a recording of the same program (`collscope record`), which names them",
                        Location{jr.file, 0, 0, c.where.rfind('/', 0) == 0 ? c.where : std::string()});
    if (!c.p2p && (!job_.groups.count(c.group) || job_.groups.at(c.group).ranks.empty()))
      return make_error(
          "import.inconsistent",
          "rank " + std::to_string(r) + "'s " + c.name + " is on group " + c.group + ", whose members no file lists",
          "give the files that describe the process groups (pg_config)", Location{jr.file, 0, 0, ""});
    calls.push_back(i);
  }
  // Where each asynchronous call's wait goes: before the first later call that began
  // after the wait did; point-to-point run as non-blocking, before the rank's next
  // call that is not a send or recv; a call never waited for, at the end.
  const std::size_t nc = calls.size();
  std::vector<std::vector<std::pair<double, std::size_t>>> waits_before(nc + 1);
  for (std::size_t idx = 0; idx < nc; ++idx) {
    const JobCall& c = jr.calls[calls[idx]];
    if (!is_async(c)) continue;
    std::size_t j = nc;
    if (has_time(c.t_wait_begin)) {
      j = idx + 1;
      while (j < nc && !(has_time(jr.calls[calls[j]].begin()) && jr.calls[calls[j]].begin() > c.t_wait_begin)) ++j;
    } else if (p2p_nonblocking_ && c.p2p && !c.async_op) {
      j = idx + 1;
      while (j < nc && jr.calls[calls[j]].p2p) ++j;
    }
    waits_before[j].emplace_back(has_time(c.t_wait_begin) ? c.t_wait_begin : 0.0, calls[idx]);
  }
  for (std::size_t j = 0; j <= nc; ++j) {
    auto& w = waits_before[j];
    std::stable_sort(w.begin(), w.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [t, i] : w) {
      const JobCall& c = jr.calls[i];
      evs.push_back({true, i, c.t_wait_begin, c.t_wait_end});
    }
    if (j < nc) {
      const JobCall& c = jr.calls[calls[j]];
      evs.push_back({false, calls[j], c.begin(), c.end()});
    }
  }
  return ok_status();
}

void ScenarioBuilder::walk() {
  const std::int32_t world = job_.world;
  // Walk the ranks together: per-rank events as they come, a collective once every
  // member has reached it.
  std::int64_t remaining = 0;
  for (const auto& s : st_) remaining += static_cast<std::int64_t>(s.events.size());
  while (remaining > 0) {
    bool progress = false;
    for (std::int32_t r = 0; r < world; ++r) {
      RankState& s = st_[static_cast<std::size_t>(r)];
      while (s.pos < s.events.size()) {
        if (s.blocked_key >= 0) {
          const std::int64_t id = s.blocked_key;
          if (!split_slot_.count(id)) break;
          arrived_[id].erase(r);  // its call is written per member now: this member's turn
          emit_collective(id, {r}, true);
          --remaining;
          progress = true;
          continue;
        }
        std::int64_t id = -1;
        if (shared_key(r, s.events[s.pos], id)) {
          if (split_slot_.count(id)) {  // written per member already: this member's turn
            emit_collective(id, {r}, true);
            --remaining;
            progress = true;
            continue;
          }
          s.blocked_key = id;
          arrived_[id].insert(r);
          const auto& members = group(keys_[static_cast<std::size_t>(id)].first).ranks;
          if (arrived_[id].size() == members.size()) {
            emit_collective(id, members, false);
            remaining -= static_cast<std::int64_t>(members.size());
            arrived_.erase(id);
            progress = true;
          }
          break;
        }
        emit_rank_event(r);
        --remaining;
        progress = true;
      }
    }
    if (!progress) {
      // Ranks wait for each other's collectives in a cycle (possible with asynchronous
      // calls on several groups): the lowest blocked rank writes its call on its own.
      for (std::int32_t r = 0; r < world; ++r) {
        RankState& s = st_[static_cast<std::size_t>(r)];
        if (s.blocked_key < 0) continue;
        const std::int64_t id = s.blocked_key;
        arrived_[id].erase(r);
        s.blocked_key = -1;
        emit_collective(id, {r}, true);
        --remaining;
        progress = true;
        break;
      }
      if (!progress) break;
    }
  }
  flush_lines();
}

Result<json> ScenarioBuilder::buffers() {
  const std::int32_t world = job_.world;
  // Buffers, and the limits a scenario has.
  json buffers = json::object();
  const BufferInit init = default_init(
      dtype_, reduce_op_.empty() ? ReduceOp::sum : parse_reduce_op(reduce_op_).value_or(ReduceOp::sum), world);
  std::uint64_t per_rank = 0;
  for (std::size_t s = 0; s < xcount_.size(); ++s) {
    const std::uint64_t x = std::max<std::uint64_t>(xcount_[s], 1);
    buffers[slot_name(static_cast<int>(s))] = {
        {"count", x}, {"init", {{"random", {{"seed", s + 1}, {"min", init.min}, {"max", init.max}}}}}};
    per_rank += x;
    if (ycount_[s]) {
      buffers["y" + std::to_string(s)] = {{"count", ycount_[s]}};
      per_rank += ycount_[s];
    }
    const std::uint64_t biggest = std::max(x, ycount_[s]) * esize_;
    if (biggest > kMaxBufferBytes) {
      const std::uint64_t k =
          (biggest + kMaxBufferBytes - 1) / kMaxBufferBytes * std::max<std::uint64_t>(1, opt_.scale_down);
      return make_error("import.too_large",
                        "one call moves " + job::human_size(static_cast<double>(biggest)) + " per rank, over the " +
                            job::human_size(static_cast<double>(kMaxBufferBytes)) + " a buffer may hold",
                        "replay it smaller: --scale-down " + std::to_string(k) + " (or more)");
    }
  }
  if (work_used_) buffers["work"] = {{"count", 1}, {"scratch", true}};
  const double total = static_cast<double>(per_rank) * esize_ * world;
  if (total > static_cast<double>(kMaxTotalBytes)) {
    std::uint64_t k = std::max<std::uint64_t>(1, opt_.scale_down);
    while (total * static_cast<double>(std::max<std::uint64_t>(1, opt_.scale_down)) / static_cast<double>(k) >
           static_cast<double>(kMaxTotalBytes) / 2)
      k *= 2;
    return make_error("import.too_large",
                      "the replay needs " + job::human_size(total) + " of buffers over all ranks, over collscope's " +
                          job::human_size(static_cast<double>(kMaxTotalBytes)),
                      "replay it smaller: --scale-down " + std::to_string(k));
  }

  return buffers;
}

std::string ScenarioBuilder::file_text(const json& buffers) {
  const std::int32_t world = job_.world;
  // The file.
  std::string desc =
      "The communication of a job of " + std::to_string(world) + " ranks, read by `collscope import` from " +
      files_noun(job_.format, job_.files.size()) +
      (job_.files.empty() ? "" : " (" + file_name(job_.files.front()) + (job_.files.size() > 1 ? ", ...)" : ")")) +
      ". Every call comes with the rank, sequence number, name and size it had in the job; the time a "
      "rank spent between two calls is a compute span.";
  for (const auto& n : note_order_)
    desc += " " + std::string(1, static_cast<char>(std::toupper(n[0]))) + n.substr(1) + ".";
  json head;
  head["version"] = 1;
  head["title"] = "A job of " + std::to_string(world) + " ranks from " + files_noun(job_.format, job_.files.size());
  head["description"] = desc;
  head["ranks"] = world;
  head["dtype"] = std::string(name_of(dtype_));
  std::string text = "{\n";
  for (auto it = head.begin(); it != head.end(); ++it)
    text += "  " + json(it.key()).dump() + ": " + it.value().dump() + ",\n";
  text += "  \"buffers\": {";
  {
    bool first = true;
    for (auto it = buffers.begin(); it != buffers.end(); ++it) {
      text += std::string(first ? "\n" : ",\n") + "    " + json(it.key()).dump() + ": " + it.value().dump();
      first = false;
    }
  }
  text += "\n  },\n";
  if (!gname_.empty()) {
    text += "  \"groups\": {";
    bool first = true;
    for (const auto& [id, name] : gname_) {
      text += std::string(first ? "\n" : ",\n") + "    " + json(name).dump() + ": " + json(group(id).ranks).dump();
      first = false;
    }
    text += "\n  },\n";
    out_.groups = static_cast<std::int64_t>(gname_.size());
  }
  text += "  \"program\": [";
  for (std::size_t i = 0; i < program_.size(); ++i) text += std::string(i ? ",\n    " : "\n    ") + program_[i];
  text += "\n  ]\n}\n";
  return text;
}

Result<ImportedScenario> ScenarioBuilder::build() {
  const std::int32_t world = job_.world;
  if (world < 1 || world > kMaxRanks)
    return make_error("import.too_large", "the job has " + std::to_string(world) + " ranks",
                      "collscope replays 1 to " + std::to_string(kMaxRanks) + " ranks");
  choose_dtype();
  if (auto st = build_tables(); !st) return st.error();
  name_groups();
  st_.assign(static_cast<std::size_t>(world), RankState{});
  for (std::int32_t r = 0; r < world; ++r)
    if (auto st = rank_events(r); !st) return st.error();
  walk();
  auto bufs = buffers();
  if (!bufs) return bufs.error();
  out_.json = file_text(*bufs);
  out_.ranks = world;
  out_.calls = out_.collectives + out_.p2p;
  out_.notes = note_order_;
  return out_;
}

}  // namespace job

Result<ImportedScenario> job_scenario(const Job& job, const ImportOptions& options) {
  // A job whose ranks disagree cannot become one program: say so, with analyze's words.
  const JobAnalysis a = analyze_job(job);
  for (const auto& f : a.findings)
    if (f.id == "analyze.desync" || f.id == "analyze.missing_rank" || f.id == "analyze.unmatched" ||
        f.id == "analyze.split_mismatch")
      return make_error("import.inconsistent", "the job's ranks do not agree: " + f.message,
                        "`collscope analyze` on the same files says everything that is wrong; import takes jobs whose "
                        "ranks agree",
                        Location{job.files.empty() ? std::string() : job.files.front(), 0, 0, ""});
  const std::string label = job.files.empty() ? std::string("job") : job.files.front();
  bool p2p_unknown = false;
  for (const auto& jr : job.ranks)
    for (const auto& c : jr.calls) p2p_unknown = p2p_unknown || (c.p2p && !c.async_known);
  // Blocking sends and recvs first; if they deadlock where the job did not, the files
  // did not say that they were isend/irecv: run them so. Compute spans are kept exact,
  // then rounded to 3 and 2 significant digits if the file would be over 4 MiB.
  std::optional<Error> last;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool nonblocking = attempt == 1;
    const std::vector<int> tries =
        options.compute_digits >= 0 ? std::vector<int>{options.compute_digits} : std::vector<int>{0, 3, 2};
    for (std::size_t ti = 0; ti < tries.size(); ++ti) {
      const int digits = tries[ti];
      job::ScenarioBuilder b(job, options, nonblocking, digits);
      auto out = b.build();
      if (!out) return out.error();
      // A large job's compute spans, one per rank between every two calls, are most
      // of its program and of the time planning it takes: rounded to 2 significant
      // digits, the ranks' spans between two calls mostly agree and become one entry.
      if (options.compute_digits < 0 && digits == 0 && out->compute_entries > job::kExactComputeEntries) {
        ti = tries.size() - 2;  // straight to 2 digits
        continue;
      }
      if (out->json.size() > scenario::kMaxScenarioBytes) {
        last = make_error("import.too_large",
                          "the scenario would be " + job::human_size(static_cast<double>(out->json.size())) +
                              ", over the " + job::human_size(static_cast<double>(scenario::kMaxScenarioBytes)) +
                              " a scenario may have",
                          "import a shorter part of the job (profile or record fewer steps)");
        continue;
      }
      // It must read back and plan like any lesson; a deadlock of blocking sends and
      // recvs is tried again with non-blocking ones.
      auto sc = parse_scenario(out->json, label + " (imported)");
      const Result<Scenario>& lowered = sc;  // parse_scenario makes every check lower_scenario makes
      if (!lowered) {
        if (lowered.error().id == "program.deadlock" && !nonblocking) {
          last = lowered.error();
          break;
        }
        Error e = lowered.error();
        e.message =
            std::string(sc ? "the imported scenario does not plan: " : "the imported scenario does not read back: ") +
            e.message;
        e.hint = "`collscope analyze` on the same files may say why; " + e.hint;
        e.id = "import.replay";
        return e;
      }
      return out;
    }
    if (!nonblocking && last && last->id == "program.deadlock" && p2p_unknown) continue;
    if (!nonblocking && last && last->id == "program.deadlock") {
      Error e = *last;
      e.message = "the imported scenario deadlocks: " + e.message;
      e.id = "import.replay";
      return e;
    }
    break;
  }
  return last ? *last : make_error("import.replay", "the job could not be replayed");
}

Status write_imported_scenario(const std::string& path, const ImportedScenario& s) {
  return write_file_atomically(path, s.json, "import.io");
}

}  // namespace collscope
