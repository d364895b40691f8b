// Checking a job, like PyTorch's Flight Recorder analyzer (torchfrtrace): the calls of
// every group are matched across its members by sequence number, and what does not
// match is said in plain words with the ranks and sequence numbers named:
//   analyze.desync        members disagree on a call (op, size, dtype), or on a group's members
//   analyze.missing_rank  members that never reached a call others entered; ranks with no file
//   analyze.unmatched     a send no recv takes, or a recv no send feeds
//   analyze.split_mismatch  an alltoallv whose rank i sends rank j other than j receives from i
//   analyze.incomplete    calls that started (or were scheduled) but never completed
//   analyze.straggler     the rank the others waited for, and by how long (from the times)
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "import/readers.h"

namespace collscope {

namespace {

constexpr std::size_t kMaxPerKind = 12;  // findings of one kind beyond this are counted, not listed

std::string ranks_text(std::vector<std::int32_t> r) {
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  if (r.empty()) return "no rank";
  std::string out = r.size() == 1 ? "rank " : "ranks ";
  // Runs of three or more as a range: "ranks 0-3, 7".
  for (std::size_t i = 0; i < r.size();) {
    std::size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    if (i) out += ", ";
    if (j >= i + 2) out += std::to_string(r[i]) + "-" + std::to_string(r[j]);
    else if (j == i + 1) out += std::to_string(r[i]) + ", " + std::to_string(r[j]);
    else out += std::to_string(r[i]);
    i = j + 1;
  }
  return out;
}

std::string ms_text(double us) {
  char buf[32];
  if (us >= 1000) std::snprintf(buf, sizeof buf, "%.3g ms", us / 1000);
  else std::snprintf(buf, sizeof buf, "%.3g us", us);
  return buf;
}

// The name without a point-to-point's peers: "nccl:send 0->1" -> "nccl:send".
std::string base_name(const std::string& n) {
  const auto sp = n.find(' ');
  return sp == std::string::npos ? n : n.substr(0, sp);
}

std::string size_of_call(const JobCall& c) {
  std::string t = !c.sizes.empty() ? c.sizes : c.count ? std::to_string(*c.count) + " elements" : "size unknown";
  if (!c.dtype.empty()) t += " " + c.dtype;
  return t;
}

std::string call_text(const JobCall& c) {
  std::string t = base_name(c.name);
  if (!c.sizes.empty()) t += " " + c.sizes;
  else if (c.count) t += " count " + std::to_string(*c.count);
  if (!c.dtype.empty()) t += " " + c.dtype;
  return t;
}

struct Collector {
  JobAnalysis& a;
  std::map<std::string, std::size_t> counts;
  void add(const std::string& id, std::string message) {
    if (++counts[id] <= kMaxPerKind) a.findings.push_back({id, std::move(message)});
  }
  void finish() {
    for (const auto& [id, n] : counts)
      if (n > kMaxPerKind)
        a.findings.push_back({id, "... and " + std::to_string(n - kMaxPerKind) + " more like these"});
  }
};

// What group rank `g`'s call sends to (`send`) or receives from each peer of an
// all-to-all: its own counts, or one block per peer; nullopt when the file does not say.
std::optional<std::uint64_t> block(const JobCall& c, std::size_t peer, bool send) {
  const auto& v = send ? c.send_counts : c.recv_counts;
  if (!v.empty()) return peer < v.size() ? std::optional<std::uint64_t>(v[peer]) : std::nullopt;
  if (c.kind == "alltoall" && c.count) return c.count;
  return std::nullopt;
}

// An alltoallv's table must add up: what group rank i sends to j is what j receives
// from i. `by_member` is each member's call, in group-rank order (null: not there).
void check_splits(const std::vector<std::int32_t>& members, const std::vector<const JobCall*>& by_member,
                  const std::string& what, Collector& out) {
  std::size_t wrong = 0;
  std::string first;
  for (std::size_t i = 0; i < members.size(); ++i)
    for (std::size_t j = 0; j < members.size(); ++j) {
      if (!by_member[i] || !by_member[j]) continue;
      const auto sent = block(*by_member[i], j, true);
      const auto taken = block(*by_member[j], i, false);
      if (!sent || !taken || *sent == *taken) continue;
      if (wrong++ == 0)
        first = "rank " + std::to_string(members[i]) + " sends " + std::to_string(*sent) + " elements to rank " +
                std::to_string(members[j]) + " but rank " + std::to_string(members[j]) + " expects " +
                std::to_string(*taken) + " from it";
    }
  if (wrong)
    out.add("analyze.split_mismatch",
            "the split sizes of " + what + " do not match: " + first +
                (wrong > 1 ? " (" + std::to_string(wrong - 1) + " more pairs of ranks disagree)" : "") +
                "; rank i's input split for rank j must equal rank j's output split for rank i");
}

}  // namespace

JobAnalysis analyze_job(const Job& job, const AnalyzeOptions& options) {
  JobAnalysis a;
  // Findings go to one list per kind first, so that they come out in a fixed order.
  JobAnalysis tmp_desync, tmp_splits, tmp_missing, tmp_unmatched, tmp_incomplete;
  Collector d{tmp_desync, {}}, sp{tmp_splits, {}}, m{tmp_missing, {}}, u{tmp_unmatched, {}}, inc{tmp_incomplete, {}};

  std::int64_t collectives = 0, p2p = 0;
  std::vector<std::int32_t> absent;
  for (const auto& jr : job.ranks) {
    if (!jr.present) absent.push_back(jr.rank);
    for (const auto& c : jr.calls) (c.p2p ? p2p : collectives)++;
  }
  a.calls = collectives + p2p;
  if (!absent.empty())
    m.add("analyze.missing_rank", "no file for " + ranks_text(absent) + " of the job's " + std::to_string(job.world) +
                                      " ranks: its calls are unknown, so every call it should have joined looks "
                                      "unanswered");

  // Groups whose members the ranks' files list differently.
  std::map<std::string, std::map<std::vector<std::int32_t>, std::vector<std::int32_t>>> views;
  for (const auto& jr : job.ranks)
    for (const auto& [id, ranks] : jr.groups)
      if (!ranks.empty()) views[id][ranks].push_back(jr.rank);
  for (const auto& [id, v] : views) {
    if (v.size() < 2) continue;
    std::string msg = "ranks disagree on the members of group " + id + ":";
    bool first = true;
    for (const auto& [ranks, who] : v) {
      std::string list;
      for (auto r : ranks) list += (list.empty() ? "" : ", ") + std::to_string(r);
      msg += std::string(first ? " " : "; ") + ranks_text(who) + " list [" + list + "]";
      first = false;
    }
    d.add("analyze.desync", msg);
  }

  // --- collectives, group by group, seq by seq ---------------------------------------
  struct Arrival {
    std::int64_t last = 0, joined = 0;
    std::vector<double> waits;
    double max_wait = 0;
    std::string max_call;
  };
  std::vector<Arrival> arrivals(static_cast<std::size_t>(job.world));
  std::vector<std::string> dropped_facts;
  std::int64_t matched = 0;
  for (const auto& [gid, group] : job.groups) {
    std::vector<std::int32_t> members = group.ranks;
    if (members.empty()) continue;
    const std::string gname = "group " + gid + (group.desc.empty() || group.desc == gid ? "" : " (" + group.desc + ")");
    // seq -> (rank, call) for every present member.
    std::map<std::int64_t, std::vector<std::pair<std::int32_t, const JobCall*>>> by_seq;
    std::vector<std::pair<std::int64_t, std::int64_t>> range(static_cast<std::size_t>(job.world),
                                                             {-1, -1});  // rank -> first, last seq
    std::map<std::int32_t, const JobCall*> last_call;
    std::vector<std::int32_t> present;
    for (auto r : members) {
      if (r < 0 || r >= job.world || !job.ranks[static_cast<std::size_t>(r)].present) continue;
      present.push_back(r);
      std::int64_t lo = INT64_MAX, hi = -1;
      // A rank's seqs mostly come in order: each insertion starts where the last one ended.
      auto hint = by_seq.begin();
      for (const auto& c : job.ranks[static_cast<std::size_t>(r)].calls) {
        if (c.p2p || c.seq < 0 || c.group != gid) continue;
        auto node = by_seq.try_emplace(hint, c.seq);
        if (node->second.empty()) node->second.reserve(members.size());
        node->second.emplace_back(r, &c);
        hint = std::next(node);
        lo = std::min(lo, c.seq);
        if (c.seq > hi) {
          hi = c.seq;
          last_call[r] = &c;
        }
      }
      range[static_cast<std::size_t>(r)] = {lo, hi};
    }
    if (by_seq.empty()) continue;
    // Flight Recorder dumps keep the last N entries: seqs before a rank's first are
    // dropped from its ring, not missed.
    for (auto r : present) {
      const auto [lo, hi] = range[static_cast<std::size_t>(r)];
      if (hi >= 0 && lo > by_seq.begin()->first)
        dropped_facts.push_back("rank " + std::to_string(r) + "'s file starts at seq " + std::to_string(lo) + " of " +
                                gname + " (older calls fell out of its ring)");
    }
    std::map<std::int32_t, bool> reported_missing;
    std::vector<char> mark(static_cast<std::size_t>(job.world), 0);
    std::int64_t later_incomplete = 0;
    bool reported_incomplete = false;
    for (const auto& [seq, calls] : by_seq) {
      const JobCall& first = *calls.front().second;
      const std::string what = base_name(first.name) + " seq " + std::to_string(seq) + " of " + gname;
      // Who should be here: members whose file covers this seq.
      std::vector<std::int32_t> here, away;
      for (const auto& [r, c] : calls) {
        here.push_back(r);
        mark[static_cast<std::size_t>(r)] = 1;
      }
      for (auto r : present) {
        if (mark[static_cast<std::size_t>(r)]) continue;
        const auto [lo, hi] = range[static_cast<std::size_t>(r)];
        if (hi >= 0 && seq < lo) continue;  // dropped from its ring
        away.push_back(r);
      }
      for (auto r : here) mark[static_cast<std::size_t>(r)] = 0;
      for (auto r : away) {
        if (reported_missing[r]) continue;
        reported_missing[r] = true;
        std::string msg = "rank " + std::to_string(r) + " never reached " + what + ", which " + ranks_text(here) +
                          (here.size() == 1 ? " entered" : " entered");
        const auto it = last_call.find(r);
        if (it != last_call.end() && it->second->seq < seq)
          msg += "; its last call on " + gname + " was seq " + std::to_string(it->second->seq) + " (" +
                 base_name(it->second->name) + (it->second->state.empty() ? "" : ", " + it->second->state) + ")";
        else if (it == last_call.end()) msg += "; it made no call on " + gname + " at all";
        m.add("analyze.missing_rank", msg);
      }
      // Do the members agree on what the call is? (Compared field by field first: the
      // texts are only made for calls that differ.)
      // An alltoallv's ranks send different totals: its table is checked below instead.
      auto same = [](const JobCall& x, const JobCall& y) {
        const bool per_peer = x.kind == "alltoallv" || y.kind == "alltoallv";
        if ((x.count != y.count && !per_peer) || x.dtype != y.dtype) return false;
        if (x.name == y.name) return true;
        const auto nx = x.name.find(' '), ny = y.name.find(' ');
        return std::string_view(x.name).substr(0, nx) == std::string_view(y.name).substr(0, ny);
      };
      bool all_same = true;
      for (const auto& [r, c] : calls) all_same = all_same && same(*c, first);
      std::map<std::string, std::vector<std::int32_t>> variants;
      if (all_same) {
        variants[""] = {};
      } else {
        for (const auto& [r, c] : calls) {
          const std::string n = c->kind == "alltoallv" ? "v" : c->count ? std::to_string(*c->count) : "?";
          std::string sig = base_name(c->name) + "|" + n + "|" + c->dtype;
          variants[sig].push_back(r);
        }
      }
      if (variants.size() > 1) {
        std::string msg = "ranks disagree on " + what + ":";
        bool firstv = true;
        // The most common call first.
        std::vector<std::pair<std::string, std::vector<std::int32_t>>> v(variants.begin(), variants.end());
        std::stable_sort(v.begin(), v.end(),
                         [](const auto& x, const auto& y) { return x.second.size() > y.second.size(); });
        for (const auto& [sig, who] : v) {
          const JobCall* example = nullptr;
          for (const auto& [r, c] : calls)
            if (r == who.front()) example = c;
          msg += std::string(firstv ? " " : "; ") + ranks_text(who) + (who.size() == 1 ? " calls " : " call ") +
                 call_text(*example);
          firstv = false;
        }
        d.add("analyze.desync", msg);
      }
      if (variants.size() == 1 &&
          std::any_of(calls.begin(), calls.end(), [](const auto& rc) { return rc.second->kind == "alltoallv"; })) {
        std::vector<const JobCall*> by_member(members.size(), nullptr);
        for (const auto& [r, c] : calls) {
          const auto at = std::find(members.begin(), members.end(), r);
          if (at != members.end()) by_member[static_cast<std::size_t>(at - members.begin())] = c;
        }
        check_splits(members, by_member, what, sp);
      }
      // Completed everywhere?
      std::vector<std::int32_t> started, scheduled;
      for (const auto& [r, c] : calls) {
        if (c->state.empty() || c->state[0] != 's') continue;  // completed, or not recorded
        if (c->state == "started") started.push_back(r);
        else if (c->state == "scheduled") scheduled.push_back(r);
      }
      if (!started.empty() || !scheduled.empty()) {
        if (!reported_incomplete) {
          reported_incomplete = true;
          std::string msg = what + " never completed:";
          if (!started.empty()) msg += " it started on " + ranks_text(started);
          if (!scheduled.empty())
            msg +=
                std::string(started.empty() ? " it was" : " and was") + " only scheduled on " + ranks_text(scheduled);
          std::vector<std::int32_t> done;
          for (const auto& [r, c] : calls)
            if (c->state == "completed") done.push_back(r);
          if (!done.empty()) msg += " (" + ranks_text(done) + " finished it)";
          if (!away.empty()) msg += "; " + ranks_text(away) + " never reached it";
          inc.add("analyze.incomplete", msg);
        } else {
          ++later_incomplete;
        }
      }
      if (away.empty() && variants.size() == 1) ++matched;
      // Arrivals: who came last, and how long the first one waited for it.
      if (job.clocks_comparable && away.empty() && calls.size() >= 2) {
        double t_first = 0, t_last = 0;
        std::int32_t last = -1;
        bool timed = true;
        for (const auto& [r, c] : calls) {
          const double t = c->begin();
          if (!has_time(t)) {
            timed = false;
            break;
          }
          if (last < 0) t_first = t;
          if (last < 0 || t > t_last) t_last = t, last = r;
          t_first = std::min(t_first, t);
        }
        if (timed)
          for (const auto& [r, c] : calls) ++arrivals[static_cast<std::size_t>(r)].joined;
        // Ties are no one's fault: a rank is last only when someone waited for it.
        if (timed && last >= 0 && t_last > t_first) {
          auto& ar = arrivals[static_cast<std::size_t>(last)];
          const double wait = t_last - t_first;
          ++ar.last;
          ar.waits.push_back(wait);
          if (wait > ar.max_wait) {
            ar.max_wait = wait;
            ar.max_call = what;
          }
        }
      }
    }
    if (later_incomplete > 0)
      inc.add("analyze.incomplete", std::to_string(later_incomplete) + " later call" +
                                        (later_incomplete == 1 ? "" : "s") + " on " + gname +
                                        " did not complete either");
  }
  a.matched = matched;

  // --- point-to-point: the n-th send from a to b meets the n-th recv on b from a ---------
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<const JobCall*>> sends, recvs;
  bool peers_unknown = false;
  for (const auto& jr : job.ranks)
    for (const auto& c : jr.calls) {
      if (!c.p2p) continue;
      if (c.peer < 0) {
        peers_unknown = true;
        continue;
      }
      if (c.kind == "send") sends[{jr.rank, c.peer}].push_back(&c);
      else recvs[{c.peer, jr.rank}].push_back(&c);
    }
  std::set<std::pair<std::int32_t, std::int32_t>> pairs;
  for (const auto& [k, v] : sends) pairs.insert(k);
  for (const auto& [k, v] : recvs) pairs.insert(k);
  auto p2p_what = [](const JobCall& c) {
    std::string t = base_name(c.name);
    if (c.seq >= 0) t += " p2p seq " + std::to_string(c.seq);
    return t;
  };
  for (const auto& [src, dst] : pairs) {
    if (src < 0 || dst < 0 || src >= job.world || dst >= job.world) continue;
    if (!job.ranks[static_cast<std::size_t>(src)].present || !job.ranks[static_cast<std::size_t>(dst)].present)
      continue;
    const auto& s = sends[{src, dst}];
    const auto& r = recvs[{src, dst}];
    const std::size_t both = std::min(s.size(), r.size());
    for (std::size_t i = 0; i < both; ++i) {
      if (s[i]->count && r[i]->count && *s[i]->count != *r[i]->count)
        d.add("analyze.desync", "rank " + std::to_string(src) + "'s send to rank " + std::to_string(dst) + " (" +
                                    p2p_what(*s[i]) + ", message " + std::to_string(i + 1) + ") has " +
                                    std::to_string(*s[i]->count) + " elements but the recv that takes it on rank " +
                                    std::to_string(dst) + " (" + p2p_what(*r[i]) + ") expects " +
                                    std::to_string(*r[i]->count));
      for (const JobCall* c : {s[i], r[i]})
        if (c->state == "started" || c->state == "scheduled")
          inc.add("analyze.incomplete", "rank " + std::to_string(c->rank) + "'s " + c->kind +
                                            (c->kind == "send" ? " to" : " from") + " rank " +
                                            std::to_string(c->kind == "send" ? dst : src) + " (" + p2p_what(*c) +
                                            ") never completed (" + c->state + ")");
    }
    if (s.size() > r.size())
      u.add("analyze.unmatched", "rank " + std::to_string(src) + " sent " + std::to_string(s.size()) + " message" +
                                     (s.size() == 1 ? "" : "s") + " to rank " + std::to_string(dst) + " but rank " +
                                     std::to_string(dst) + " received " + std::to_string(r.size()) +
                                     " from it: message " + std::to_string(both + 1) + " (" + p2p_what(*s[both]) +
                                     ", " + size_of_call(*s[both]) + ") was never received");
    if (r.size() > s.size())
      u.add("analyze.unmatched", "rank " + std::to_string(dst) + " expects " + std::to_string(r.size()) + " message" +
                                     (r.size() == 1 ? "" : "s") + " from rank " + std::to_string(src) + " but rank " +
                                     std::to_string(src) + " sent " + std::to_string(s.size()) + ": recv " +
                                     std::to_string(both + 1) + " (" + p2p_what(*r[both]) + ") waits for ever");
  }

  for (auto* col : {&d, &sp, &m, &u, &inc}) {
    col->finish();
    for (auto& f : col->a.findings) a.findings.push_back(std::move(f));
  }

  // --- the straggler ------------------------------------------------------------------
  if (job.clocks_comparable) {
    std::int32_t best = -1;
    for (std::int32_t r = 0; r < job.world; ++r) {
      const auto& ar = arrivals[static_cast<std::size_t>(r)];
      if (ar.last == 0) continue;
      if (best < 0 || ar.last > arrivals[static_cast<std::size_t>(best)].last) best = r;
    }
    if (best < 0) a.facts.push_back("no straggler: the ranks arrived at their collectives together");
    if (best >= 0) {
      auto& ar = arrivals[static_cast<std::size_t>(best)];
      std::vector<double> w = ar.waits;
      std::sort(w.begin(), w.end());
      const double median = w[w.size() / 2];
      double mean = 0;
      for (double x : w) mean += x;
      mean /= static_cast<double>(w.size());
      JobStraggler s;
      s.rank = best;
      s.last_at = ar.last;
      s.calls = ar.joined;
      s.mean_wait_us = mean;
      s.max_wait_us = ar.max_wait;
      s.max_call = ar.max_call;
      a.straggler = s;
      // Last most of the time, and more than twice: once is chance.
      const bool often = ar.last >= 3 && ar.last * 2 > ar.joined;
      const std::string text = "rank " + std::to_string(best) + " arrived last at " + std::to_string(ar.last) +
                               " of the " + std::to_string(ar.joined) +
                               " collectives it joined; the first rank to arrive waited for it " + ms_text(mean) +
                               " on average (median " + ms_text(median) + ", " + ms_text(ar.max_wait) +
                               " at most, at " + ar.max_call + ")";
      if (often && median >= options.straggler_ms * 1000.0)
        a.findings.push_back({"analyze.straggler", "the straggler: " + text});
      else a.facts.push_back("no straggler: " + text);
    }
  } else if (job.format != JobFormat::nccl_log) {
    a.facts.push_back("no straggler analysis: the ranks' times are not on one clock");
  } else {
    a.facts.push_back("no straggler analysis: an NCCL log has no times");
  }
  if (peers_unknown) a.facts.push_back("point-to-point calls whose peers the files do not name were not matched");
  for (auto& f : dropped_facts) a.facts.push_back(std::move(f));
  a.facts.insert(a.facts.begin(), std::to_string(job.world) + " ranks, " + std::to_string(a.calls) +
                                      " calls over all ranks (" + std::to_string(collectives) + " collective, " +
                                      std::to_string(p2p) + " point-to-point) on " + std::to_string(job.groups.size()) +
                                      " group" + (job.groups.size() == 1 ? "" : "s") + "; " + std::to_string(matched) +
                                      " collectives matched on every member");
  return a;
}

}  // namespace collscope
