// A job becomes a scenario.
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
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "collscope/collective.h"
#include "collscope/scenario.h"
#include "import/readers.h"
#include "scenario/resolve.h"
#include "trace/atomic_file.h"

namespace collscope {

namespace {

// Captions show "{expr}" as a value (docs/ARCHITECTURE.md, "Programs"); the job's own text (file
// names such as rank{0..3}.json, call sites) keeps its braces as written.
std::string literal_braces(const std::string& t) {
  std::string out;
  for (char ch : t) {
    out += ch;
    if (ch == '{' || ch == '}') out += ch;
  }
  return out;
}

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr std::uint32_t kMaxComputeUs = 60'000'000;
// Above this many compute entries, spans are rounded unless the user says otherwise.
constexpr std::int64_t kExactComputeEntries = 20000;
// Above this the scenario stops giving calls NCCL's channels (each costs a body).
constexpr std::size_t kChannelBudgetBytes = 3u << 20;

std::string ranks_text(std::vector<std::int32_t> r) {
  std::sort(r.begin(), r.end());
  std::string out = r.size() == 1 ? "rank " : "ranks ";
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

std::string file_name(const std::string& p) { return fs::path(p).filename().string(); }

// "rank{0..3}.json" when the files differ only in their rank's number.
std::string files_label(const Job& job, const std::vector<std::int32_t>& ranks) {
  if (ranks.empty()) return "";
  if (ranks.size() == 1) return file_name(job.ranks[static_cast<std::size_t>(ranks[0])].file);
  // One file for all of them (an NCCL log of every process).
  bool one_file = true;
  for (auto r : ranks)
    one_file =
        one_file && job.ranks[static_cast<std::size_t>(r)].file == job.ranks[static_cast<std::size_t>(ranks[0])].file;
  if (one_file) return file_name(job.ranks[static_cast<std::size_t>(ranks[0])].file);
  std::string prefix, suffix;
  bool pattern = true;
  for (std::size_t i = 0; i < ranks.size() && pattern; ++i) {
    const std::string n = file_name(job.ranks[static_cast<std::size_t>(ranks[i])].file);
    const std::string num = std::to_string(ranks[i]);
    // The rank's number, the last time it appears before the extension.
    const auto dot = n.find('.');
    const std::string stem = n.substr(0, dot);
    if (stem.size() < num.size() || stem.compare(stem.size() - num.size(), num.size(), num) != 0) {
      pattern = false;
      break;
    }
    const std::string p = stem.substr(0, stem.size() - num.size());
    const std::string s = dot == std::string::npos ? "" : n.substr(dot);
    if (i == 0) prefix = p, suffix = s;
    else if (p != prefix || s != suffix) pattern = false;
  }
  const auto [lo, hi] = std::minmax_element(ranks.begin(), ranks.end());
  if (pattern) return prefix + "{" + std::to_string(*lo) + ".." + std::to_string(*hi) + "}" + suffix;
  return file_name(job.ranks[static_cast<std::size_t>(*lo)].file) + " and the files of the other ranks";
}

std::string source_word(JobFormat f) {
  switch (f) {
    case JobFormat::profiler:
    case JobFormat::profiler_legacy:
      return "trace";
    case JobFormat::flight_recorder:
      return "dump";
    case JobFormat::nccl_log:
      return "log";
  }
  return "file";
}

std::string safe_name(const std::string& id) {
  std::string out = "pg_";
  for (char c : id) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.size() > 40) out = out.substr(0, 40);
  return out;
}

std::uint32_t round_digits(double us, int digits) {
  double v = std::round(us);
  if (digits > 0 && v >= 1) {
    const double scale = std::pow(10.0, std::floor(std::log10(v)) + 1 - digits);
    v = std::round(v / scale) * scale;
  }
  return static_cast<std::uint32_t>(std::min<double>(v, kMaxComputeUs));
}

// A ring written as a function of position: ring[p] = (a * p + b) mod n.
struct Affine {
  std::int64_t a = 1, b = 0, a_inv = 1;
};
std::optional<Affine> affine_ring(const std::vector<std::int32_t>& ring) {
  const auto n = static_cast<std::int64_t>(ring.size());
  if (n < 2) return std::nullopt;
  Affine f;
  f.b = ring[0];
  f.a = ((ring[1] - ring[0]) % n + n) % n;
  for (std::int64_t p = 0; p < n; ++p)
    if ((f.a * p + f.b) % n != ring[static_cast<std::size_t>(p)]) return std::nullopt;
  for (std::int64_t x = 1; x < n; ++x)
    if ((f.a * x) % n == 1) f.a_inv = x;
  if ((f.a * f.a_inv) % n != 1 % n) return std::nullopt;
  return f;
}

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

class Builder {
 public:
  Builder(const Job& job, const ImportOptions& opt, bool p2p_nonblocking, int digits)
      : job_(job), opt_(opt), p2p_nonblocking_(p2p_nonblocking), digits_(digits) {}

  Result<ImportedScenario> build();

 private:
  const Job& job_;
  const ImportOptions& opt_;
  const bool p2p_nonblocking_;
  const int digits_;

  DType dtype_ = DType::float32;
  std::uint32_t esize_ = 4;
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
  Status build_tables();

  void note(const std::string& n) {
    if (notes_.insert(n).second) note_order_.push_back(n);
  }
  const JobCall& call(std::int32_t r, std::size_t i) const { return job_.ranks[static_cast<std::size_t>(r)].calls[i]; }
  const JobGroup& group(const std::string& id) const { return job_.groups.at(id); }
  std::int32_t group_size(const std::string& id) const { return static_cast<std::int32_t>(group(id).ranks.size()); }

  std::uint64_t elems(const JobCall& c) { return c.kind == "barrier" ? 0 : elems_of(c, c.count.value_or(1)); }

  // `n` of the call's elements in the replay's type, scaled down (0 stays 0).
  std::uint64_t elems_of(const JobCall& c, std::uint64_t n) {
    const std::uint32_t b = c.dtype_bytes ? c.dtype_bytes : esize_;
    if (b != esize_ && n) {
      n = (n * b + esize_ - 1) / esize_;
      note(c.dtype + " calls move their bytes as " + std::string(name_of(dtype_)) + " elements (" + std::to_string(b) +
           " bytes each in the job, " + std::to_string(esize_) + " in the replay)");
    }
    if (opt_.scale_down > 1 && n) n = std::max<std::uint64_t>(1, (n + opt_.scale_down - 1) / opt_.scale_down);
    return n;
  }

  // An alltoallv's table in the job's words: "blocks of 0 to 128 B Float, 1.5 KiB in all".
  std::string table_text(const JobCall& c, const Table& t) {
    std::uint64_t lo = UINT64_MAX, hi = 0, total = 0;
    for (const auto& row : t)
      for (auto x : row) lo = std::min(lo, x), hi = std::max(hi, x), total += x;
    const double b = static_cast<double>(esize_) * static_cast<double>(std::max<std::uint64_t>(1, opt_.scale_down));
    std::string text = "split sizes per peer: blocks of " + job::human_size(static_cast<double>(lo) * b) + " to " +
                       job::human_size(static_cast<double>(hi) * b) + (c.dtype.empty() ? "" : " " + c.dtype) + ", " +
                       job::human_size(static_cast<double>(total) * b) + " in all";
    if (opt_.scale_down > 1) text += " (replayed 1/" + std::to_string(opt_.scale_down) + ")";
    return text;
  }

  std::string size_text(const JobCall& c) {
    if (c.kind == "barrier") return "";
    if (!c.count) return "size unknown";
    const std::uint32_t b = c.dtype_bytes ? c.dtype_bytes : esize_;
    std::string t = job::human_size(static_cast<double>(*c.count) * b);
    if (!c.dtype.empty()) t += " " + c.dtype;
    if (opt_.scale_down > 1) t += " (replayed 1/" + std::to_string(opt_.scale_down) + ")";
    return t;
  }

  // A slot free on every one of `ranks`: one of `prefer` if possible, else the lowest.
  // A call that stays in flight avoids the slots a later compute span must wait on
  // (`pending`), which it could then not write.
  int slot_free_on(const std::vector<std::int32_t>& ranks, const std::vector<int>& prefer, bool avoid_pending) {
    auto usable = [&](int s) {
      for (auto r : ranks) {
        const RankState& st = st_[static_cast<std::size_t>(r)];
        if (st.busy.count(s)) return false;
        if (avoid_pending && std::find(st.pending.begin(), st.pending.end(), s) != st.pending.end()) return false;
      }
      return true;
    };
    for (int s : prefer) {
      if (usable(s)) return s;
    }
    for (int s = 0;; ++s) {
      const bool ok = usable(s);
      if (ok) {
        if (s >= static_cast<int>(xcount_.size()))
          xcount_.resize(static_cast<std::size_t>(s) + 1, 0), ycount_.resize(xcount_.size(), 0);
        return s;
      }
    }
  }

  static std::string slot_name(int s) { return "x" + std::to_string(s); }

  void emit(const json& entry) {
    flush_lines();
    std::string line = entry.dump();
    program_bytes_ += line.size() + 2;
    program_.push_back(std::move(line));
  }

  void add_line(RankLine line) {
    auto& depth = batch_depth_[line.rank];
    if (batch_.size() <= depth) batch_.resize(depth + 1);
    line.key = line.entry.dump();
    if (line.peer >= 0)
      line.key += "|" + std::to_string(((line.peer - line.rank) % job_.world + job_.world) % job_.world);
    if (line.call)
      line.key += "|" + line.call->name.substr(0, line.call->name.find(' ')) + "|" + std::to_string(line.call->seq) +
                  "|" + size_text(*line.call) + "|" + line.call->site;
    batch_[depth].push_back(std::move(line));
    ++depth;
  }

  void add_compute(std::int32_t r, std::uint32_t us, std::string writes) {
    // Never a buffer a call of this rank still has in flight (the slot rules keep it
    // so; this keeps the file valid should they not).
    if (writes != "work" && st_[static_cast<std::size_t>(r)].busy.count(std::stoi(writes.substr(1)))) {
      writes = "work";
      work_used_ = true;
    }
    RankLine l;
    l.rank = r;
    l.entry["op"] = "compute";
    l.entry["duration_us"] = us;
    l.entry["writes"] = writes;
    add_line(std::move(l));
    ++out_.compute_spans;
  }

  void flush_lines() {
    for (auto& layer : batch_) {
      std::map<std::string, std::vector<const RankLine*>> merged;
      std::vector<std::string> order;
      for (const auto& l : layer) {
        auto [it, fresh] = merged.try_emplace(l.key);
        if (fresh) order.push_back(l.key);
        it->second.push_back(&l);
      }
      for (const auto& key : order) {
        const auto& lines = merged[key];
        const RankLine& first = *lines.front();
        std::vector<std::int32_t> who;
        for (const auto* l : lines) who.push_back(l->rank);
        json e;
        e["op"] = first.entry["op"];
        if (static_cast<std::int32_t>(who.size()) == job_.world) e["ranks"] = "all";
        else e["ranks"] = who;
        for (auto it = first.entry.begin(); it != first.entry.end(); ++it)
          if (it.key() != "op") e[it.key()] = it.value();
        std::string peer_text;
        if (first.peer >= 0) {
          if (who.size() == 1) {
            e[first.peer_key] = first.peer;
            peer_text = "rank " + std::to_string(first.peer);
          } else {
            const int d = ((first.peer - first.rank) % job_.world + job_.world) % job_.world;
            e[first.peer_key] = "(rank + " + std::to_string(d) + ") % size";
            peer_text = "rank r+" + std::to_string(d) + " (mod " + std::to_string(job_.world) + ")";
          }
        }
        if (first.call) e["caption"] = caption_of(*first.call, who, peer_text);
        if (first.entry["op"] == "compute") ++out_.compute_entries;
        std::string line = e.dump();
        program_bytes_ += line.size() + 2;
        program_.push_back(std::move(line));
      }
    }
    batch_.clear();
    batch_depth_.clear();
  }

  double gap(const RankState& s, const Ev& e) const {
    if (!has_time(e.begin) || !has_time(s.last_end)) return 0;
    return std::max(0.0, e.begin - s.last_end);
  }
  static void advance_clock(RankState& s, const Ev& e) {
    const double t = has_time(e.end) ? e.end : e.begin;
    if (!has_time(t)) return;
    s.last_end = has_time(s.last_end) ? std::max(s.last_end, t) : t;
  }

  // The compute span before a call that will use `slot` (-1: the call has no buffer).
  void compute_before_call(std::int32_t r, const Ev& e, int slot) {
    RankState& s = st_[static_cast<std::size_t>(r)];
    const double g = gap(s, e);
    const std::uint32_t us = round_digits(g, digits_);
    if (g >= 60e6) note("gaps longer than 60 s (collscope's longest compute span) are replayed as 60 s");
    if (slot < 0) {  // a barrier: nothing it reads can wait for the span
      if (us >= 1) compute_alone(r, us);
      return;
    }
    if (us >= 1) {
      for (int d : s.pending)
        if (d != slot) add_compute(r, 0, slot_name(d));
      add_compute(r, us, slot_name(slot));
    } else if (s.unconsumed) {
      add_compute(r, 0, slot_name(slot));  // joins the span before: the call waits for it
    } else {
      return;
    }
    s.pending.clear();
    s.unconsumed = false;
  }

  // A span that no call reads (before a wait or a barrier).
  void compute_alone(std::int32_t r, std::uint32_t us) {
    RankState& s = st_[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i + 1 < s.pending.size(); ++i) add_compute(r, 0, slot_name(s.pending[i]));
    if (!s.pending.empty()) {
      add_compute(r, us, slot_name(s.pending.back()));
    } else {
      add_compute(r, us, "work");
      work_used_ = true;
    }
    s.pending.clear();
    s.unconsumed = true;
  }

  void after_call(std::int32_t r, std::size_t ci, int slot, bool async) {
    RankState& s = st_[static_cast<std::size_t>(r)];
    if (slot >= 0) {
      if (async) {
        s.busy.insert(slot);
        s.slot_of[ci] = slot;
      } else {
        s.pending = {slot};
      }
    }
  }

  bool is_async(const JobCall& c) const { return c.async_op || (p2p_nonblocking_ && c.p2p); }

  void use_slot(int slot, const JobCall& c, std::uint64_t n) {
    if (slot < 0) return;
    const auto g = static_cast<std::uint64_t>(c.p2p ? 1 : group_size(c.group));
    std::uint64_t x = n, y = 0;
    if (c.kind == "allgather" || c.kind == "reduce_scatter" || c.kind == "gather" || c.kind == "scatter") x = n * g;
    if (c.kind == "alltoall") x = y = n * g;
    grow_slot(slot, x, y);
  }
  // An alltoallv: group rank g sends its row of the table and receives its column.
  void use_slot(int slot, const Table& t, std::size_t g) {
    std::uint64_t x = 0, y = 0;
    for (std::size_t p = 0; p < t.size(); ++p) x += t[g][p], y += t[p][g];
    grow_slot(slot, x, std::max<std::uint64_t>(y, 1));
  }
  void grow_slot(int slot, std::uint64_t x, std::uint64_t y) {
    auto& xc = xcount_[static_cast<std::size_t>(slot)];
    auto& yc = ycount_[static_cast<std::size_t>(slot)];
    xc = std::max(xc, x);
    yc = std::max(yc, y);
  }

  std::string caption_of(const JobCall& c, const std::vector<std::int32_t>& who, const std::string& peer_text = "",
                         const std::string& size_given = "") {
    std::string t = who.size() == 1 ? "rank " + std::to_string(who[0]) : ranks_text(who);
    if (c.seq >= 0) t += std::string(c.p2p ? ", p2p seq " : ", seq ") + std::to_string(c.seq);
    if (!c.p2p && !group(c.group).world) t += " of group " + c.group;
    t += ", " + (c.p2p ? c.name.substr(0, c.name.find(' ')) : c.name);
    if (c.p2p && !peer_text.empty()) t += (c.kind == "send" ? " to " : " from ") + peer_text;
    const std::string size = size_given.empty() ? size_text(c) : size_given;
    if (!size.empty()) t += ", " + size;
    t += ", from " +
         (opt_.source_label.empty() ? source_word(job_.format) + " " + files_label(job_, who) : opt_.source_label);
    if (!c.site.empty()) t += " (" + c.site + ")";
    return literal_braces(t);
  }

  std::optional<json> channel_body(const JobCall& c, std::uint64_t n, const std::string& buf);
  void emit_collective(std::int64_t key_id, const std::vector<std::int32_t>& who, bool split);
  void emit_rank_event(std::int32_t r);
  bool shared_key(std::int32_t r, const Ev& e, std::int64_t& id);
};

std::optional<json> Builder::channel_body(const JobCall& c, std::uint64_t n, const std::string& buf) {
  if (c.kind != "allreduce") return std::nullopt;
  const bool world = group(c.group).world;
  const JobChannels* ch = nullptr;
  for (const auto& x : job_.channels)
    if (x.group == c.group && !x.rings.empty()) ch = &x;
  if (!ch) return std::nullopt;
  const auto nr = static_cast<std::uint64_t>(ch->members.size());
  const auto nch = static_cast<std::uint64_t>(ch->rings.size());
  if (nr < 2 || nr != group(c.group).ranks.size() || (world && static_cast<std::int32_t>(nr) != job_.world))
    return std::nullopt;
  if (c.reduce_op == "avg") {
    note("all-reduces with avg run collscope's own algorithms: a channel body adds, it does not average");
    return std::nullopt;
  }
  if (n < nr * nch) {
    note("all-reduces smaller than one element per rank and channel run collscope's auto pick");
    return std::nullopt;
  }
  if (program_bytes_ > kChannelBudgetBytes) {
    note(
        "later all-reduces run collscope's auto pick rather than NCCL's channels, to keep the scenario within its "
        "4 MiB");
    return std::nullopt;
  }
  json rs_lines = json::array(), ag_lines = json::array();
  const std::string N = std::to_string(nr);
  std::uint64_t c0 = 0;
  for (std::uint64_t k = 0; k < nch; ++k) {
    const std::uint64_t cc = n / nch + (k < n % nch ? 1 : 0);
    const std::uint64_t q = cc / nr, rem = cc % nr;
    const auto& ring = ch->rings[static_cast<std::size_t>(k)];
    auto off = [&](const std::string& j) {
      return std::to_string(c0) + " + " + j + " * " + std::to_string(q) + " + (" + j + " < " + std::to_string(rem) +
             ") * " + j + " + (" + j + " >= " + std::to_string(rem) + ") * " + std::to_string(rem);
    };
    auto cnt = [&](const std::string& j) { return std::to_string(q) + " + (" + j + " < " + std::to_string(rem) + ")"; };
    auto line = [&](const std::string& ranks_sel, const json& from_rank, const json& to_rank, const std::string& j,
                    const char* action) {
      json t;
      if (ranks_sel == "all") t["ranks"] = "all";
      else t["ranks"] = json::array({std::stoi(ranks_sel)});
      t["from"] = {{"rank", from_rank}, {"buffer", buf}, {"offset", off(j)}};
      t["to"] = {{"rank", to_rank}, {"buffer", buf}, {"offset", off(j)}};
      t["count"] = cnt(j);
      t["action"] = action;
      return t;
    };
    // On the world, a ring that is the ranks in (rotated, reversed, strided) order is
    // written once for every rank; otherwise, one line per rank (up to 16 of them).
    if (auto f = world ? affine_ring(ring) : std::nullopt) {
      // Every rank's position in the ring, and its left neighbour, as expressions.
      const std::string pos = "((rank - " + std::to_string(f->b) + ") * " + std::to_string(f->a_inv) + " % " + N + ")";
      const std::string prev =
          "((" + std::to_string(f->a) + " * (" + pos + " - 1) + " + std::to_string(f->b) + ") % " + N + ")";
      const std::string j_rs = "((" + pos + " - 1 - k) % " + N + ")";
      const std::string j_ag = "((" + pos + " - k) % " + N + ")";
      rs_lines.push_back(line("all", prev, "rank", j_rs, "reduce"));
      ag_lines.push_back(line("all", prev, "rank", j_ag, "copy"));
    } else if (nr <= 16) {
      // A custom body speaks group ranks: a member's place in the group's list.
      const auto& members = group(c.group).ranks;
      auto local = [&](std::int32_t w) {
        const auto it = std::find(members.begin(), members.end(), w);
        return it == members.end() ? w : static_cast<std::int32_t>(it - members.begin());
      };
      for (std::uint64_t p = 0; p < nr; ++p) {
        const std::int32_t r = local(ring[static_cast<std::size_t>(p)]);
        const std::int32_t left = local(ring[static_cast<std::size_t>((p + nr - 1) % nr)]);
        const std::string P = std::to_string(p);
        rs_lines.push_back(line(std::to_string(r), left, r, "((" + P + " - 1 - k) % " + N + ")", "reduce"));
        ag_lines.push_back(line(std::to_string(r), left, r, "((" + P + " - k) % " + N + ")", "copy"));
      }
    } else {
      note(
          "NCCL's rings that are not the ranks in (rotated or reversed) order are drawn for up to 16 ranks; "
          "the all-reduces run collscope's auto pick");
      return std::nullopt;
    }
    c0 += cc;
  }
  std::string rings_text;
  for (std::size_t k = 0; k < ch->rings.size(); ++k) {
    std::string r;
    for (auto x : ch->rings[k]) r += (r.empty() ? "" : " ") + std::to_string(x);
    rings_text += (k ? "; " : "") + std::string("channel ") + std::to_string(k) + ": " + r;
  }
  json body = json::array();
  body.push_back({{"op", "repeat"},
                  {"times", nr - 1},
                  {"var", "k"},
                  {"body", json::array({{{"op", "step"},
                                         {"phase", "reduce-scatter"},
                                         {"caption", "NCCL's rings (" + rings_text +
                                                         "): every rank adds the chunk its "
                                                         "left neighbour passes on, on every channel at once"},
                                         {"transfers", rs_lines}}})}});
  body.push_back({{"op", "repeat"},
                  {"times", nr - 1},
                  {"var", "k"},
                  {"body", json::array({{{"op", "step"},
                                         {"phase", "all-gather"},
                                         {"caption", "the finished chunks go round the same rings"},
                                         {"transfers", ag_lines}}})}});
  return body;
}

bool Builder::shared_key(std::int32_t r, const Ev& e, std::int64_t& id) {
  if (e.wait) return false;
  const JobCall& c = call(r, e.call);
  if (c.p2p) return false;
  const auto k = std::make_pair(c.group, c.seq);
  auto [it, fresh] = key_id_.try_emplace(k, static_cast<std::int64_t>(keys_.size()));
  if (fresh) keys_.push_back(k);
  id = it->second;
  return true;
}

void Builder::emit_collective(std::int64_t key_id, const std::vector<std::int32_t>& who, bool split) {
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

void Builder::emit_rank_event(std::int32_t r) {
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

Status Builder::build_tables() {
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

Result<ImportedScenario> Builder::build() {
  const std::int32_t world = job_.world;
  if (world < 1 || world > kMaxRanks)
    return make_error("import.too_large", "the job has " + std::to_string(world) + " ranks",
                      "collscope replays 1 to " + std::to_string(kMaxRanks) + " ranks");
  // The scenario's element type: the one most calls use.
  std::map<DType, std::int64_t> dtypes;
  std::map<std::string, std::int64_t> reduce_ops;
  std::int64_t unsupported = 0;
  for (const auto& jr : job_.ranks)
    for (const auto& c : jr.calls) {
      if (c.kind.empty()) ++unsupported;
      if (c.dt) ++dtypes[*c.dt];
      if (!c.reduce_op.empty()) ++reduce_ops[c.reduce_op];
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

  if (auto st = build_tables(); !st) return st.error();
  // Groups: the default one is every rank; the others become named groups.
  std::set<std::string> used_names;
  for (const auto& [id, g] : job_.groups) {
    if (g.world) continue;
    std::string name = safe_name(id);
    while (used_names.count(name)) name += "_";
    used_names.insert(name);
    gname_[id] = name;
  }

  // Each rank's events: its calls in order, and the waits of asynchronous ones where they happened.
  st_.assign(static_cast<std::size_t>(world), RankState{});
  for (std::int32_t r = 0; r < world; ++r) {
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
  }

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

  // Buffers, and the limits a scenario has.
  json buffers = json::object();
  const BufferInit init = default_init(
      dtype_, reduce_ops.empty() ? ReduceOp::sum : parse_reduce_op(reduce_ops.begin()->first).value_or(ReduceOp::sum),
      world);
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
  out_.json = std::move(text);
  out_.ranks = world;
  out_.calls = out_.collectives + out_.p2p;
  out_.notes = note_order_;
  return out_;
}

}  // namespace

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
      Builder b(job, options, nonblocking, digits);
      auto out = b.build();
      if (!out) return out.error();
      // A large job's compute spans, one per rank between every two calls, are most
      // of its program and of the time planning it takes: rounded to 2 significant
      // digits, the ranks' spans between two calls mostly agree and become one entry.
      if (options.compute_digits < 0 && digits == 0 && out->compute_entries > kExactComputeEntries) {
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
