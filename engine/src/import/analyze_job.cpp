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

// Findings go to one list per kind first, so that they come out in a fixed order.
struct Findings {
  JobAnalysis desync, splits, missing, unmatched, incomplete;
  Collector d{desync, {}}, sp{splits, {}}, m{missing, {}}, u{unmatched, {}}, inc{incomplete, {}};
  void move_to(JobAnalysis& a) {
    for (auto* col : {&d, &sp, &m, &u, &inc}) {
      col->finish();
      for (auto& f : col->a.findings) a.findings.push_back(std::move(f));
    }
  }
};

// Per rank: how often it arrived last at a collective, and how long it was waited for.
struct Arrival {
  std::int64_t last = 0, joined = 0;
  std::vector<double> waits;
  double max_wait = 0;
  std::string max_call;
};

// One seq of a group: (rank, call) for every present member that made it.
using SeqCalls = std::vector<std::pair<std::int32_t, const JobCall*>>;

// Groups whose members the ranks' files list differently.
void check_group_views(const Job& job, Collector& d) {
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
      msg += std::string(first ? " " : "; ") + job::rank_ranges(who) + " list [" + list + "]";
      first = false;
    }
    d.add("analyze.desync", msg);
  }
}

// Do two members agree on what the call is? (Compared field by field first: the
// texts are only made for calls that differ.)
// An alltoallv's ranks send different totals: its table is checked instead.
bool same_call(const JobCall& x, const JobCall& y) {
  const bool per_peer = x.kind == "alltoallv" || y.kind == "alltoallv";
  if ((x.count != y.count && !per_peer) || x.dtype != y.dtype) return false;
  if (x.name == y.name) return true;
  const auto nx = x.name.find(' '), ny = y.name.find(' ');
  return std::string_view(x.name).substr(0, nx) == std::string_view(y.name).substr(0, ny);
}

// The different calls the members made at one seq, each with who made it (one entry
// when they all agree).
std::map<std::string, std::vector<std::int32_t>> variants_of(const SeqCalls& calls) {
  const JobCall& first = *calls.front().second;
  bool all_same = true;
  for (const auto& [r, c] : calls) all_same = all_same && same_call(*c, first);
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
  return variants;
}

// "ranks disagree on ...": each variant with its ranks, the most common call first.
std::string disagreement(const std::string& what, const SeqCalls& calls,
                         const std::map<std::string, std::vector<std::int32_t>>& variants) {
  std::string msg = "ranks disagree on " + what + ":";
  bool firstv = true;
  std::vector<std::pair<std::string, std::vector<std::int32_t>>> v(variants.begin(), variants.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.second.size() > y.second.size(); });
  for (const auto& [sig, who] : v) {
    const JobCall* example = nullptr;
    for (const auto& [r, c] : calls)
      if (r == who.front()) example = c;
    msg += std::string(firstv ? " " : "; ") + job::rank_ranges(who) + (who.size() == 1 ? " calls " : " call ") +
           call_text(*example);
    firstv = false;
  }
  return msg;
}

// Arrivals: who came last, and how long the first one waited for it.
void record_arrival(const SeqCalls& calls, const std::string& what, std::vector<Arrival>& arrivals) {
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

// The collectives of one group, seq by seq.
class GroupCheck {
 public:
  GroupCheck(const Job& job, const std::string& gid, const JobGroup& group, Findings& f, std::vector<Arrival>& arrivals)
      : job_(job),
        gid_(gid),
        members_(group.ranks),
        gname_("group " + gid + (group.desc.empty() || group.desc == gid ? "" : " (" + group.desc + ")")),
        range_(static_cast<std::size_t>(job.world), {-1, -1}),
        mark_(static_cast<std::size_t>(job.world), 0),
        f_(f),
        arrivals_(arrivals) {}

  // Checks every seq; returns how many matched on every member.
  std::int64_t run(std::vector<std::string>& dropped_facts) {
    collect();
    if (by_seq_.empty()) return 0;
    note_dropped(dropped_facts);
    for (const auto& [seq, calls] : by_seq_) check_seq(seq, calls);
    if (later_incomplete_ > 0)
      f_.inc.add("analyze.incomplete", std::to_string(later_incomplete_) + " later call" +
                                           (later_incomplete_ == 1 ? "" : "s") + " on " + gname_ +
                                           " did not complete either");
    return matched_;
  }

 private:
  // seq -> (rank, call) for every present member.
  void collect() {
    for (auto r : members_) {
      if (r < 0 || r >= job_.world || !job_.ranks[static_cast<std::size_t>(r)].present) continue;
      present_.push_back(r);
      std::int64_t lo = INT64_MAX, hi = -1;
      // A rank's seqs mostly come in order: each insertion starts where the last one ended.
      auto hint = by_seq_.begin();
      for (const auto& c : job_.ranks[static_cast<std::size_t>(r)].calls) {
        if (c.p2p || c.seq < 0 || c.group != gid_) continue;
        auto node = by_seq_.try_emplace(hint, c.seq);
        if (node->second.empty()) node->second.reserve(members_.size());
        node->second.emplace_back(r, &c);
        hint = std::next(node);
        lo = std::min(lo, c.seq);
        if (c.seq > hi) {
          hi = c.seq;
          last_call_[r] = &c;
        }
      }
      range_[static_cast<std::size_t>(r)] = {lo, hi};
    }
  }

  // Flight Recorder dumps keep the last N entries: seqs before a rank's first are
  // dropped from its ring, not missed.
  void note_dropped(std::vector<std::string>& dropped_facts) const {
    for (auto r : present_) {
      const auto [lo, hi] = range_[static_cast<std::size_t>(r)];
      if (hi >= 0 && lo > by_seq_.begin()->first)
        dropped_facts.push_back("rank " + std::to_string(r) + "'s file starts at seq " + std::to_string(lo) + " of " +
                                gname_ + " (older calls fell out of its ring)");
    }
  }

  void check_seq(std::int64_t seq, const SeqCalls& calls) {
    const JobCall& first = *calls.front().second;
    const std::string what = base_name(first.name) + " seq " + std::to_string(seq) + " of " + gname_;
    std::vector<std::int32_t> here, away;
    who_is_here(seq, calls, here, away);
    report_missing(seq, what, here, away);
    const auto variants = variants_of(calls);
    if (variants.size() > 1) f_.d.add("analyze.desync", disagreement(what, calls, variants));
    if (variants.size() == 1 &&
        std::any_of(calls.begin(), calls.end(), [](const auto& rc) { return rc.second->kind == "alltoallv"; }))
      check_alltoallv(calls, what);
    check_completed(calls, what, away);
    if (away.empty() && variants.size() == 1) ++matched_;
    if (job_.clocks_comparable && away.empty() && calls.size() >= 2) record_arrival(calls, what, arrivals_);
  }

  // Who should be here: members whose file covers this seq.
  void who_is_here(std::int64_t seq, const SeqCalls& calls, std::vector<std::int32_t>& here,
                   std::vector<std::int32_t>& away) {
    for (const auto& [r, c] : calls) {
      here.push_back(r);
      mark_[static_cast<std::size_t>(r)] = 1;
    }
    for (auto r : present_) {
      if (mark_[static_cast<std::size_t>(r)]) continue;
      const auto [lo, hi] = range_[static_cast<std::size_t>(r)];
      if (hi >= 0 && seq < lo) continue;  // dropped from its ring
      away.push_back(r);
    }
    for (auto r : here) mark_[static_cast<std::size_t>(r)] = 0;
  }

  // The first seq each member never reached.
  void report_missing(std::int64_t seq, const std::string& what, const std::vector<std::int32_t>& here,
                      const std::vector<std::int32_t>& away) {
    for (auto r : away) {
      if (reported_missing_[r]) continue;
      reported_missing_[r] = true;
      std::string msg = "rank " + std::to_string(r) + " never reached " + what + ", which " + job::rank_ranges(here) +
                        (here.size() == 1 ? " entered" : " entered");
      const auto it = last_call_.find(r);
      if (it != last_call_.end() && it->second->seq < seq)
        msg += "; its last call on " + gname_ + " was seq " + std::to_string(it->second->seq) + " (" +
               base_name(it->second->name) + (it->second->state.empty() ? "" : ", " + it->second->state) + ")";
      else if (it == last_call_.end()) msg += "; it made no call on " + gname_ + " at all";
      f_.m.add("analyze.missing_rank", msg);
    }
  }

  // An alltoallv's table, with each member's call in group-rank order.
  void check_alltoallv(const SeqCalls& calls, const std::string& what) {
    std::vector<const JobCall*> by_member(members_.size(), nullptr);
    for (const auto& [r, c] : calls) {
      const auto at = std::find(members_.begin(), members_.end(), r);
      if (at != members_.end()) by_member[static_cast<std::size_t>(at - members_.begin())] = c;
    }
    check_splits(members_, by_member, what, f_.sp);
  }

  // Completed everywhere? The first call that was not is said in full; later ones counted.
  void check_completed(const SeqCalls& calls, const std::string& what, const std::vector<std::int32_t>& away) {
    std::vector<std::int32_t> started, scheduled;
    for (const auto& [r, c] : calls) {
      if (c->state.empty() || c->state[0] != 's') continue;  // completed, or not recorded
      if (c->state == "started") started.push_back(r);
      else if (c->state == "scheduled") scheduled.push_back(r);
    }
    if (started.empty() && scheduled.empty()) return;
    if (reported_incomplete_) {
      ++later_incomplete_;
      return;
    }
    reported_incomplete_ = true;
    std::string msg = what + " never completed:";
    if (!started.empty()) msg += " it started on " + job::rank_ranges(started);
    if (!scheduled.empty())
      msg +=
          std::string(started.empty() ? " it was" : " and was") + " only scheduled on " + job::rank_ranges(scheduled);
    std::vector<std::int32_t> done;
    for (const auto& [r, c] : calls)
      if (c->state == "completed") done.push_back(r);
    if (!done.empty()) msg += " (" + job::rank_ranges(done) + " finished it)";
    if (!away.empty()) msg += "; " + job::rank_ranges(away) + " never reached it";
    f_.inc.add("analyze.incomplete", msg);
  }

  const Job& job_;
  const std::string& gid_;
  std::vector<std::int32_t> members_;
  const std::string gname_;
  std::map<std::int64_t, SeqCalls> by_seq_;
  std::vector<std::pair<std::int64_t, std::int64_t>> range_;  // rank -> first, last seq
  std::map<std::int32_t, const JobCall*> last_call_;
  std::vector<std::int32_t> present_;
  std::map<std::int32_t, bool> reported_missing_;
  std::vector<char> mark_;
  std::int64_t later_incomplete_ = 0;
  bool reported_incomplete_ = false;
  std::int64_t matched_ = 0;
  Findings& f_;
  std::vector<Arrival>& arrivals_;
};

// --- point-to-point: the n-th send from a to b meets the n-th recv on b from a ---------

std::string p2p_what(const JobCall& c) {
  std::string t = base_name(c.name);
  if (c.seq >= 0) t += " p2p seq " + std::to_string(c.seq);
  return t;
}

// The sends from src to dst (`s`) against the recvs on dst from src (`r`), in order.
void check_pair(std::int32_t src, std::int32_t dst, const std::vector<const JobCall*>& s,
                const std::vector<const JobCall*>& r, Findings& f) {
  const std::size_t both = std::min(s.size(), r.size());
  for (std::size_t i = 0; i < both; ++i) {
    if (s[i]->count && r[i]->count && *s[i]->count != *r[i]->count)
      f.d.add("analyze.desync", "rank " + std::to_string(src) + "'s send to rank " + std::to_string(dst) + " (" +
                                    p2p_what(*s[i]) + ", message " + std::to_string(i + 1) + ") has " +
                                    std::to_string(*s[i]->count) + " elements but the recv that takes it on rank " +
                                    std::to_string(dst) + " (" + p2p_what(*r[i]) + ") expects " +
                                    std::to_string(*r[i]->count));
    for (const JobCall* c : {s[i], r[i]})
      if (c->state == "started" || c->state == "scheduled")
        f.inc.add("analyze.incomplete", "rank " + std::to_string(c->rank) + "'s " + c->kind +
                                            (c->kind == "send" ? " to" : " from") + " rank " +
                                            std::to_string(c->kind == "send" ? dst : src) + " (" + p2p_what(*c) +
                                            ") never completed (" + c->state + ")");
  }
  if (s.size() > r.size())
    f.u.add("analyze.unmatched", "rank " + std::to_string(src) + " sent " + std::to_string(s.size()) + " message" +
                                     (s.size() == 1 ? "" : "s") + " to rank " + std::to_string(dst) + " but rank " +
                                     std::to_string(dst) + " received " + std::to_string(r.size()) +
                                     " from it: message " + std::to_string(both + 1) + " (" + p2p_what(*s[both]) +
                                     ", " + size_of_call(*s[both]) + ") was never received");
  if (r.size() > s.size())
    f.u.add("analyze.unmatched", "rank " + std::to_string(dst) + " expects " + std::to_string(r.size()) + " message" +
                                     (r.size() == 1 ? "" : "s") + " from rank " + std::to_string(src) + " but rank " +
                                     std::to_string(src) + " sent " + std::to_string(s.size()) + ": recv " +
                                     std::to_string(both + 1) + " (" + p2p_what(*r[both]) + ") waits for ever");
}

// Matches every pair of ranks' sends and recvs; returns whether some calls name no peer.
bool check_p2p(const Job& job, Findings& f) {
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
  for (const auto& [src, dst] : pairs) {
    if (src < 0 || dst < 0 || src >= job.world || dst >= job.world) continue;
    if (!job.ranks[static_cast<std::size_t>(src)].present || !job.ranks[static_cast<std::size_t>(dst)].present)
      continue;
    check_pair(src, dst, sends[{src, dst}], recvs[{src, dst}], f);
  }
  return peers_unknown;
}

// --- the straggler ------------------------------------------------------------------

// The rank that arrived last most often (and at least once), or -1.
std::int32_t most_often_last(const std::vector<Arrival>& arrivals, std::int32_t world) {
  std::int32_t best = -1;
  for (std::int32_t r = 0; r < world; ++r) {
    const auto& ar = arrivals[static_cast<std::size_t>(r)];
    if (ar.last == 0) continue;
    if (best < 0 || ar.last > arrivals[static_cast<std::size_t>(best)].last) best = r;
  }
  return best;
}

void find_straggler(const Job& job, const std::vector<Arrival>& arrivals, const AnalyzeOptions& options,
                    JobAnalysis& a) {
  if (!job.clocks_comparable) {
    if (job.format != JobFormat::nccl_log)
      a.facts.push_back("no straggler analysis: the ranks' times are not on one clock");
    else a.facts.push_back("no straggler analysis: an NCCL log has no times");
    return;
  }
  const std::int32_t best = most_often_last(arrivals, job.world);
  if (best < 0) {
    a.facts.push_back("no straggler: the ranks arrived at their collectives together");
    return;
  }
  const auto& ar = arrivals[static_cast<std::size_t>(best)];
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
  const std::string text =
      "rank " + std::to_string(best) + " arrived last at " + std::to_string(ar.last) + " of the " +
      std::to_string(ar.joined) + " collectives it joined; the first rank to arrive waited for it " + ms_text(mean) +
      " on average (median " + ms_text(median) + ", " + ms_text(ar.max_wait) + " at most, at " + ar.max_call + ")";
  if (often && median >= options.straggler_ms * 1000.0)
    a.findings.push_back({"analyze.straggler", "the straggler: " + text});
  else a.facts.push_back("no straggler: " + text);
}

}  // namespace

JobAnalysis analyze_job(const Job& job, const AnalyzeOptions& options) {
  JobAnalysis a;
  Findings f;

  std::int64_t collectives = 0, p2p = 0;
  std::vector<std::int32_t> absent;
  for (const auto& jr : job.ranks) {
    if (!jr.present) absent.push_back(jr.rank);
    for (const auto& c : jr.calls) (c.p2p ? p2p : collectives)++;
  }
  a.calls = collectives + p2p;
  if (!absent.empty())
    f.m.add("analyze.missing_rank", "no file for " + job::rank_ranges(absent) + " of the job's " +
                                        std::to_string(job.world) +
                                        " ranks: its calls are unknown, so every call it should have joined looks "
                                        "unanswered");
  check_group_views(job, f.d);

  // --- collectives, group by group, seq by seq ---------------------------------------
  std::vector<Arrival> arrivals(static_cast<std::size_t>(job.world));
  std::vector<std::string> dropped_facts;
  std::int64_t matched = 0;
  for (const auto& [gid, group] : job.groups) {
    if (group.ranks.empty()) continue;
    matched += GroupCheck(job, gid, group, f, arrivals).run(dropped_facts);
  }
  a.matched = matched;

  const bool peers_unknown = check_p2p(job, f);
  f.move_to(a);
  find_straggler(job, arrivals, options, a);
  if (peers_unknown) a.facts.push_back("point-to-point calls whose peers the files do not name were not matched");
  for (auto& fact : dropped_facts) a.facts.push_back(std::move(fact));
  a.facts.insert(a.facts.begin(), std::to_string(job.world) + " ranks, " + std::to_string(a.calls) +
                                      " calls over all ranks (" + std::to_string(collectives) + " collective, " +
                                      std::to_string(p2p) + " point-to-point) on " + std::to_string(job.groups.size()) +
                                      " group" + (job.groups.size() == 1 ? "" : "s") + "; " + std::to_string(matched) +
                                      " collectives matched on every member");
  return a;
}

}  // namespace collscope
