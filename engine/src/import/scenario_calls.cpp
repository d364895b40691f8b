// The calls of an imported scenario: a collective, once every member of its group has
// reached it (alltoallv with the table its members' split sizes make), and a rank's own
// send, recv and wait.
#include <algorithm>
#include <map>
#include <set>

#include "import/readers.h"
#include "import/scenario_builder.h"

namespace collscope::job {

Status ScenarioBuilder::build_tables() {
  using Key = std::pair<std::string, std::int64_t>;
  std::set<Key> uneven;
  for (const auto& jr : job_.ranks)
    for (const auto& c : jr.calls)
      if (!c.p2p && c.kind == "alltoallv") uneven.insert({c.group, c.seq});
  if (uneven.empty()) return ok_status();
  // Every member's call, in group-rank order.
  std::map<Key, std::vector<const JobCall*>> calls;
  for (const auto& jr : job_.ranks)
    for (const auto& c : jr.calls) {
      if (c.p2p || !uneven.count({c.group, c.seq}) || !job_.groups.count(c.group)) continue;
      const auto& m = group(c.group).ranks;
      const auto at = std::find(m.begin(), m.end(), jr.rank);
      if (at == m.end()) continue;
      auto& v = calls[{c.group, c.seq}];
      v.resize(m.size(), nullptr);
      v[static_cast<std::size_t>(at - m.begin())] = &c;
    }
  for (const auto& [key, by_member] : calls) {
    Table t(by_member.size(), std::vector<std::uint64_t>(by_member.size(), 0));
    for (std::size_t i = 0; i < by_member.size(); ++i) {
      const JobCall* c = by_member[i];
      if (!c) continue;  // a missing member: analyze's finding refused the job already
      const bool blocks = c->kind == "alltoall" && c->count;
      if (c->send_counts.size() != t.size() && !blocks) {
        const JobRank& jr = job_.ranks[static_cast<std::size_t>(group(key.first).ranks[i])];
        return make_error(
            "import.no_splits",
            "rank " + std::to_string(jr.rank) + "'s " + c->name + " (" + c->where +
                ") sends and receives blocks of different sizes, but its file does not say how the tensor was split",
            "Flight Recorder dumps keep all_to_all_single's whole tensors only: give --sizes with a recording of the "
            "same program (`collscope record`), or a profiler trace of newer PyTorch, which record the split sizes",
            Location{jr.file, 0, 0, c->where.rfind('/', 0) == 0 ? c->where : std::string()});
      }
      for (std::size_t j = 0; j < t.size(); ++j) t[i][j] = elems_of(*c, blocks ? *c->count : c->send_counts[j]);
    }
    tables_[key] = std::move(t);
  }
  return ok_status();
}

bool ScenarioBuilder::shared_key(std::int32_t r, const Ev& e, std::int64_t& id) {
  if (e.wait) return false;
  const JobCall& c = call(r, e.call);
  if (c.p2p) return false;
  const auto k = std::make_pair(c.group, c.seq);
  auto [it, fresh] = key_id_.try_emplace(k, static_cast<std::int64_t>(keys_.size()));
  if (fresh) keys_.push_back(k);
  id = it->second;
  return true;
}

void ScenarioBuilder::emit_collective(std::int64_t key_id, const std::vector<std::int32_t>& who, bool split) {
  const auto& [gid, seq] = keys_[static_cast<std::size_t>(key_id)];
  const JobGroup& g = group(gid);
  const std::int32_t r0 = who.front();
  RankState& s0 = st_[static_cast<std::size_t>(r0)];
  const JobCall& c = call(r0, s0.events[s0.pos].call);
  const std::uint64_t n = elems(c);
  const bool has_buffer = c.kind != "barrier";
  int slot = -1;
  if (has_buffer) {
    if (split && split_slot_.count(key_id)) {
      slot = split_slot_[key_id];
    } else {
      // The slot: free on every member, preferably one whose end the members' next span follows.
      std::map<int, int> votes;
      for (auto r : g.ranks)
        for (int d : st_[static_cast<std::size_t>(r)].pending) ++votes[d];
      std::vector<int> prefer;
      for (const auto& [d, v] : votes) prefer.push_back(d);
      std::stable_sort(prefer.begin(), prefer.end(), [&](int a, int b) { return votes[a] > votes[b]; });
      bool async = false;
      for (auto r : g.ranks) {
        const RankState& m = st_[static_cast<std::size_t>(r)];
        async = async || is_async(call(r, m.events[m.pos].call));
      }
      slot = slot_free_on(g.ranks, async || split ? std::vector<int>{} : prefer, async || split);
      if (split) {
        split_slot_[key_id] = slot;
        for (auto r : g.ranks) st_[static_cast<std::size_t>(r)].busy.insert(slot);  // reserved until each member's turn
      }
    }
    if (split)
      for (auto r : who) st_[static_cast<std::size_t>(r)].busy.erase(slot);
  }
  for (auto r : who) {
    RankState& s = st_[static_cast<std::size_t>(r)];
    compute_before_call(r, s.events[s.pos], slot);
  }
  const auto table = c.kind == "alltoall" || c.kind == "alltoallv" ? tables_.find({gid, seq}) : tables_.end();
  const bool per_peer = table != tables_.end();
  json e;
  e["op"] = per_peer ? "alltoallv" : c.kind;
  if (has_buffer) {
    if (c.kind == "alltoall" || per_peer) {
      e["send"] = slot_name(slot);
      e["recv"] = "y" + std::to_string(slot);
    } else {
      e["buffer"] = slot_name(slot);
    }
    if (per_peer) e["counts"] = table->second;
    else e["count"] = n;
  }
  if (!g.world) e["group"] = gname_.at(gid);
  if (split) e["ranks"] = who;
  if (c.kind == "broadcast" || c.kind == "reduce" || c.kind == "scatter" || c.kind == "gather") {
    std::int32_t root = 0;
    const auto it = std::find(g.ranks.begin(), g.ranks.end(), c.root);
    if (c.root >= 0 && it != g.ranks.end()) root = static_cast<std::int32_t>(it - g.ranks.begin());
    else note("the files do not name the root of " + c.kind + " calls; the first rank of the group is taken");
    if (root) e["root"] = root;
  }
  if (c.kind == "allreduce" || c.kind == "reduce" || c.kind == "reduce_scatter") {
    if (c.reduce_op.empty()) note("the files do not name the reduction of reducing calls; sum is taken");
    else if (c.reduce_op != "sum" && parse_reduce_op(c.reduce_op)) e["reduce_op"] = c.reduce_op;
  }
  if (has_buffer && !split) {
    if (auto body = channel_body(c, n, slot_name(slot))) {
      e["algorithm"] = "custom";
      e["body"] = std::move(*body);
      ++out_.custom_channels;
    }
  }
  std::vector<std::int32_t> caption_ranks = split ? who : g.ranks;
  e["caption"] = caption_of(c, caption_ranks, "", per_peer ? table_text(c, table->second) : "");
  emit(e);
  ++out_.collectives;
  for (auto r : who) {
    RankState& s = st_[static_cast<std::size_t>(r)];
    const Ev& ev = s.events[s.pos];
    const JobCall& mine = call(r, ev.call);
    if (per_peer)
      use_slot(slot, table->second,
               static_cast<std::size_t>(std::find(g.ranks.begin(), g.ranks.end(), r) - g.ranks.begin()));
    else use_slot(slot, mine, elems(mine));
    after_call(r, ev.call, slot, is_async(mine));
    advance_clock(s, ev);
    ++s.pos;
    s.blocked_key = -1;
  }
}

void ScenarioBuilder::emit_rank_event(std::int32_t r) {
  RankState& s = st_[static_cast<std::size_t>(r)];
  const Ev& ev = s.events[s.pos];
  const JobCall& c = call(r, ev.call);
  if (ev.wait) {
    const double g = gap(s, ev);
    const std::uint32_t us = round_digits(g, digits_);
    if (us >= 1) compute_alone(r, us);
    const auto it = s.slot_of.find(ev.call);
    const int slot = it != s.slot_of.end() ? it->second : -1;
    if (c.p2p) {
      RankLine w;
      w.rank = r;
      w.entry["op"] = "wait";
      w.entry["request"] = s.request_of[ev.call];
      add_line(std::move(w));
    }
    if (slot >= 0) {
      s.busy.erase(slot);
      s.slot_of.erase(ev.call);
      s.pending.push_back(slot);
    }
    advance_clock(s, ev);
    ++s.pos;
    return;
  }
  // A send or recv.
  const std::uint64_t n = elems(c);
  const bool async = is_async(c);
  const int slot =
      slot_free_on({r}, async ? std::vector<int>{} : std::vector<int>(s.pending.rbegin(), s.pending.rend()), async);
  compute_before_call(r, ev, slot);
  RankLine l;
  l.rank = r;
  l.entry["op"] = std::string(async ? "i" : "") + c.kind;
  l.entry["buffer"] = slot_name(slot);
  l.entry["count"] = n;
  if (async) {
    const std::string req = "q" + std::to_string(ev.call);
    s.request_of[ev.call] = req;
    l.entry["request"] = req;
  }
  l.peer = c.peer;
  l.peer_key = c.kind == "send" ? "to" : "from";
  l.call = &c;
  add_line(std::move(l));
  ++out_.p2p;
  use_slot(slot, c, n);
  after_call(r, ev.call, slot, async);
  advance_clock(s, ev);
  ++s.pos;
}
}  // namespace collscope::job
