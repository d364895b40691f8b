// Putting a job together from its files: one per rank, or folders of them, in any of
// the formats of collscope/job.h, read in parallel; the ranks they belong to, the
// world, the groups, the channels an NCCL log adds, and a second source for what the
// first lacks (sizes from a recording of the same program).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <set>
#include <thread>
#include <variant>

#include "import/readers.h"

namespace collscope {

namespace {

namespace fs = std::filesystem;
using job::NcclLog;
using job::RankFile;

struct Parsed {
  std::string path;
  bool from_folder = false;
  std::optional<JobFormat> format;
  bool collscope_record = false;
  bool pickled = false;  // starts like Python's pickle (protocol 2 and later)
  std::variant<std::monostate, RankFile, NcclLog> content;
  std::optional<Error> error;
};

Result<std::vector<std::pair<std::string, bool>>> expand(const std::vector<std::string>& paths) {
  std::vector<std::pair<std::string, bool>> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> files;
      for (const auto& entry : fs::directory_iterator(p, ec)) {
        const auto name = entry.path().filename().string();
        if (name.empty() || name[0] == '.') continue;
        std::error_code ec2;
        if (entry.is_regular_file(ec2)) files.push_back(entry.path().string());
      }
      if (ec)
        return make_error("import.io", "cannot list the folder (" + ec.message() + ")", "check its permissions",
                          Location{p, 0, 0, ""});
      std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
        // rank2 before rank10
        const auto ra = job::rank_from_name(a), rb = job::rank_from_name(b);
        if (ra >= 0 && rb >= 0 && ra != rb) return ra < rb;
        return a < b;
      });
      if (files.empty())
        return make_error("import.io", "the folder has no files", "give the folder the traces or dumps were written to",
                          Location{p, 0, 0, ""});
      for (auto& f : files) out.emplace_back(std::move(f), true);
    } else {
      out.emplace_back(p, false);
    }
    if (out.size() > job::kMaxJobFiles)
      return make_error("import.io", "more than " + std::to_string(job::kMaxJobFiles) + " files",
                        "a job has one file per rank, and collscope replays up to 1024 ranks", Location{p, 0, 0, ""});
  }
  return out;
}

void parse_one(Parsed& p) {
  auto text = job::read_job_file(p.path);
  if (!text) {
    p.error = text.error();
    return;
  }
  p.format = job::detect_format(*text, &p.collscope_record);
  p.pickled = text->size() > 2 && static_cast<unsigned char>((*text)[0]) == 0x80 && (*text)[1] >= 2 && (*text)[1] <= 5;
  if (!p.format) return;
  if (*p.format == JobFormat::nccl_log) {
    auto log = job::read_nccl_log(*text, p.path);
    if (!log) p.error = log.error();
    else p.content = std::move(*log);
  } else if (*p.format == JobFormat::flight_recorder) {
    auto rf = job::read_flight_recorder(*text, p.path);
    if (!rf) p.error = rf.error();
    else p.content = std::move(*rf);
  } else {
    auto rf = job::read_profiler(*text, p.path);
    if (!rf) p.error = rf.error();
    else p.content = std::move(*rf);
  }
}

void parse_all(std::vector<Parsed>& files) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const unsigned n = static_cast<unsigned>(std::min<std::size_t>(hw, files.size()));
  if (n <= 1) {
    for (auto& f : files) parse_one(f);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  try {
    for (unsigned t = 0; t < n; ++t)
      pool.emplace_back([&] {
        for (std::size_t i = next++; i < files.size(); i = next++) parse_one(files[i]);
      });
  } catch (const std::system_error&) {
    // No more threads: the ones started (or this one) do the rest.
  }
  for (std::size_t i = next++; i < files.size(); i = next++) parse_one(files[i]);
  for (auto& t : pool) t.join();
}

std::string short_name(const std::string& path) { return fs::path(path).filename().string(); }

// The files read, sorted: the traces or dumps (with their paths), and the NCCL logs.
struct Sources {
  std::vector<RankFile> calls_files;
  std::vector<std::string> calls_paths;
  std::vector<NcclLog> logs;
  std::vector<std::string> log_paths;
};

// Why a file given by name (not found in a folder) is in none of the formats.
Error unknown_format(const Parsed& f) {
  if (f.collscope_record)
    return make_error("import.unknown_format", "this is collscope's own flight record, not a job's file",
                      "read it with `collscope analyze " + f.path + "`", Location{f.path, 0, 0, ""});
  if (f.pickled)
    return make_error(
        "import.unknown_format", "this looks like a pickled Flight Recorder dump (PyTorch's default)",
        "turn it into JSON: python3 -c 'import json, pickle, sys; json.dump(pickle.load(open(sys.argv[1], "
        "\"rb\")), sys.stdout)' " +
            f.path + " > " + f.path + ".json (only unpickle files you trust)",
        Location{f.path, 0, 0, ""});
  return make_error("import.unknown_format", "not a PyTorch profiler trace, Flight Recorder dump or NCCL log",
                    "give the files a job left behind: profiler traces (prof.export_chrome_trace), Flight "
                    "Recorder dumps in JSON, NCCL_DEBUG=INFO logs, or what `collscope record` wrote",
                    Location{f.path, 1, 1, ""});
}

// The parsed files into logs and files of calls, of one kind.
std::optional<Error> sort_files(std::vector<Parsed>& files, Job& job, Sources& s) {
  std::optional<JobFormat> call_format;
  std::string call_format_file;
  for (auto& f : files) {
    if (f.error) return *f.error;
    if (!f.format) {
      if (!f.from_folder) return unknown_format(f);
      job.notes.push_back(short_name(f.path) + " is in none of the formats import reads; it was skipped");
      continue;
    }
    job.files.push_back(f.path);
    if (auto* log = std::get_if<NcclLog>(&f.content)) {
      s.logs.push_back(std::move(*log));
      s.log_paths.push_back(f.path);
      continue;
    }
    auto& rf = std::get<RankFile>(f.content);
    // Profiler traces of either age count as one kind for mixing.
    const auto kind = rf.format == JobFormat::flight_recorder ? JobFormat::flight_recorder : JobFormat::profiler;
    if (call_format && *call_format != kind)
      return make_error("import.mixed_formats",
                        "this is a " + std::string(name_of(rf.format)) + " but " + short_name(call_format_file) +
                            " is a " +
                            std::string(name_of(*call_format == JobFormat::flight_recorder ? JobFormat::flight_recorder
                                                                                           : JobFormat::profiler)),
                        "give one kind of file per rank; to take sizes from the other, pass it with --sizes",
                        Location{f.path, 0, 0, ""});
    if (!call_format) call_format_file = f.path;
    call_format = kind;
    s.calls_files.push_back(std::move(rf));
    s.calls_paths.push_back(f.path);
  }
  return std::nullopt;
}

// The calls come from the traces or dumps; an NCCL log adds its channels (and gives
// the calls itself when it is all there is).
std::optional<Error> choose_calls(Sources& s, const std::vector<std::string>& paths, Job& job) {
  if (s.calls_files.empty()) {
    for (std::size_t i = 0; i < s.logs.size(); ++i)
      for (auto& rf : s.logs[i].ranks) {
        s.calls_files.push_back(rf);
        s.calls_paths.push_back(s.log_paths[i]);
      }
    const bool logs_give_calls =
        std::any_of(s.logs.begin(), s.logs.end(), [](const NcclLog& l) { return l.has_calls; });
    if (!logs_give_calls)
      return make_error("import.no_calls",
                        s.logs.empty() ? "none of the files has calls in it"
                                       : "the NCCL log has no per-call lines, only how NCCL set up its channels",
                        s.logs.empty() ? "give the traces or dumps of the job"
                                       : "run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL for the calls, or give "
                                         "the job's traces or Flight Recorder dumps together with this log",
                        Location{paths.empty() ? std::string() : paths[0], 0, 0, ""});
    job.format = JobFormat::nccl_log;
  } else {
    job.format = s.calls_files.front().format;
    for (std::size_t i = 0; i < s.logs.size(); ++i)
      if (s.logs[i].has_calls)
        job.notes.push_back("the per-call lines of " + short_name(s.log_paths[i]) +
                            " were not used: the calls come from the " + std::string(name_of(job.format)) + "s");
  }
  for (const auto& l : s.logs)
    for (const auto& n : l.notes) job.notes.push_back(n);
  for (const auto& rf : s.calls_files)
    for (const auto& n : rf.notes) job.notes.push_back(n);
  return std::nullopt;
}

// The file of the job errors about the whole job point to.
std::string first_path(const Sources& s) { return s.calls_paths.empty() ? std::string() : s.calls_paths[0]; }

// Ranks: what the file says, else the number in its name, else its place in the list.
// Returns each file's rank; `world` is the job's size.
Result<std::vector<std::int32_t>> assign_ranks(const Sources& s, Job& job, std::int32_t& world) {
  const auto& calls_files = s.calls_files;
  const auto& calls_paths = s.calls_paths;
  std::vector<std::int32_t> rank_of(calls_files.size(), -1);
  bool all_named = true;
  for (std::size_t i = 0; i < calls_files.size(); ++i) {
    rank_of[i] = calls_files[i].rank >= 0 ? calls_files[i].rank : job::rank_from_name(calls_paths[i]);
    if (rank_of[i] < 0) all_named = false;
  }
  if (!all_named) {
    for (std::size_t i = 0; i < calls_files.size(); ++i) rank_of[i] = static_cast<std::int32_t>(i);
    job.notes.push_back(
        "the files do not all say their rank (in their contents or as a number in their name); "
        "ranks follow the order of the files");
  }
  std::map<std::int32_t, std::size_t> owner;
  world = 0;
  for (std::size_t i = 0; i < calls_files.size(); ++i) {
    if (const auto [it, fresh] = owner.emplace(rank_of[i], i); !fresh) {
      if (calls_paths[i] == calls_paths[it->second])
        return make_error("import.ranks", "the file says twice that it is rank " + std::to_string(rank_of[i]),
                          "give one job's log", Location{calls_paths[i], 0, 0, ""});
      return make_error("import.ranks",
                        "this file and " + calls_paths[it->second] + " are both rank " + std::to_string(rank_of[i]),
                        "give one file per rank (of one run)", Location{calls_paths[i], 0, 0, ""});
    }
    world = std::max({world, rank_of[i] + 1, calls_files[i].world});
    for (const auto& [id, g] : calls_files[i].groups)
      if (g.world || id == "0") world = std::max(world, static_cast<std::int32_t>(g.ranks.size()));
  }
  if (world > 1 << 16)
    return make_error("import.ranks", "the job has " + std::to_string(world) + " ranks", "collscope replays up to 1024",
                      Location{first_path(s), 0, 0, ""});
  return rank_of;
}

// What every file records.
struct Coverage {
  bool sizes = true, peers = true, epoch = true;
};

// Each file's calls and groups to its rank of the job.
Coverage place_files(Sources& s, const std::vector<std::int32_t>& rank_of, Job& job) {
  Coverage cov;
  for (std::size_t i = 0; i < s.calls_files.size(); ++i) {
    RankFile& rf = s.calls_files[i];
    JobRank& jr = job.ranks[static_cast<std::size_t>(rank_of[i])];
    jr.present = true;
    jr.file = s.calls_paths[i];
    jr.clock = rf.clock;
    if (rf.clock != "epoch") cov.epoch = false;
    cov.sizes = cov.sizes && rf.sizes;
    cov.peers = cov.peers && rf.peers;
    for (auto& c : rf.calls) c.rank = rank_of[i];
    jr.calls = std::move(rf.calls);
    for (auto& [id, g] : rf.groups) {
      jr.groups[id] = g.ranks;
      auto [it, fresh] = job.groups.try_emplace(id, g);
      if (!fresh && it->second.ranks.empty()) it->second = g;
    }
  }
  return cov;
}

// The default group: the one the files call so, else the one of every rank.
void settle_groups(Job& job) {
  const std::int32_t world = job.world;
  bool have_world = false;
  for (auto& [id, g] : job.groups) have_world = have_world || g.world;
  if (!have_world) {
    for (auto& [id, g] : job.groups)
      if ((id == "0" || static_cast<std::int32_t>(g.ranks.size()) == world) && !have_world) {
        g.world = have_world = true;
      }
  }
  if (!job.groups.count("0") && !have_world) {
    JobGroup g;
    g.id = "0";
    g.desc = "default_pg";
    g.world = true;
    job.groups["0"] = g;
  }
  for (auto& [id, g] : job.groups)
    if (g.world && g.ranks.empty())
      for (std::int32_t r = 0; r < world; ++r) g.ranks.push_back(r);
  // Calls on a group no file describes: their group is the world when it is "0".
  for (auto& jr : job.ranks)
    for (auto& c : jr.calls)
      if (!job.groups.count(c.group)) {
        JobGroup g;
        g.id = c.group;
        job.groups[c.group] = g;
        job.notes.push_back("no file lists the ranks of group " + c.group + "; its calls cannot be replayed");
      }
}

// Collectives without a sequence number (a dump that lost the field): their place
// among the rank's calls on the group stands in, as for older traces.
void number_collectives(Job& job) {
  bool numbered = false;
  for (auto& jr : job.ranks) {
    std::map<std::string, std::int64_t> next;
    for (auto& c : jr.calls) {
      if (c.p2p) continue;
      if (c.seq < 0) {
        c.seq = ++next[c.group];
        numbered = true;
      } else {
        next[c.group] = std::max(next[c.group], c.seq);
      }
    }
  }
  if (numbered)
    job.notes.push_back("some collectives have no sequence number; their order on their group stands in for it");
}

// Groups must name ranks of the job, each once; so must peers and roots.
std::optional<Error> check_ranks_in_job(const Job& job, const std::string& first_file) {
  const std::int32_t world = job.world;
  for (const auto& [id, g] : job.groups) {
    std::set<std::int32_t> seen;
    for (auto r : g.ranks)
      if (r < 0 || r >= world || !seen.insert(r).second)
        return make_error(
            "import.bad_field",
            "group " + id + " lists rank " + std::to_string(r) +
                (r < 0 || r >= world ? ", outside the job's " + std::to_string(world) + " ranks" : " twice"),
            "the files describe another job, or were edited: give one job's files", Location{first_file, 0, 0, ""});
  }
  for (const auto& jr : job.ranks)
    for (const auto& c : jr.calls)
      if (c.peer >= world || c.root >= world)
        return make_error("import.bad_field",
                          "rank " + std::to_string(jr.rank) + "'s " + c.name + " names rank " +
                              std::to_string(std::max(c.peer, c.root)) + ", outside the job's " +
                              std::to_string(world) + " ranks",
                          "give the files of every rank of the job",
                          Location{jr.file, 0, 0, c.where.rfind('/', 0) == 0 ? c.where : ""});
  return std::nullopt;
}

// Point-to-point peers: a job of two ranks has only one possible peer.
void settle_peers(Job& job, bool peers, bool second) {
  if (!peers && job.world == 2) {
    for (auto& jr : job.ranks)
      for (auto& c : jr.calls)
        if (c.p2p && c.peer < 0) c.peer = 1 - jr.rank;
    job.notes.push_back(
        "the files do not name the peers of send and recv; with two ranks each one's peer is the other");
    peers = true;
  }
  if (!peers && !second)
    job.notes.push_back(
        "the files do not name the peers of send and recv: give --sizes with a recording of the same "
        "program (`collscope record`) to replay them");
}

// Channels: each communicator of an NCCL log is one of the job's groups (same members).
void add_channels(std::vector<NcclLog>& logs, Job& job) {
  for (auto& l : logs)
    for (auto& ch : l.channels) {
      if (job.format != JobFormat::nccl_log) {
        ch.group.clear();
        std::vector<std::int32_t> m = ch.members;
        std::sort(m.begin(), m.end());
        for (const auto& [id, g] : job.groups) {
          std::vector<std::int32_t> gm = g.ranks;
          std::sort(gm.begin(), gm.end());
          if (gm == m && (ch.group.empty() || g.world)) ch.group = id;
        }
      }
      job.channels.push_back(std::move(ch));
    }
}

Result<Job> build(const std::vector<std::string>& paths, bool second) {
  auto listed = expand(paths);
  if (!listed) return listed.error();
  std::vector<Parsed> files(listed->size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    files[i].path = (*listed)[i].first;
    files[i].from_folder = (*listed)[i].second;
  }
  parse_all(files);

  Job job;
  Sources s;
  if (auto err = sort_files(files, job, s)) return *err;
  if (auto err = choose_calls(s, paths, job)) return *err;
  std::int32_t world = 0;
  auto rank_of = assign_ranks(s, job, world);
  if (!rank_of) return rank_of.error();
  job.world = world;
  job.ranks.resize(static_cast<std::size_t>(world));
  for (std::int32_t r = 0; r < world; ++r) job.ranks[static_cast<std::size_t>(r)].rank = r;
  const Coverage cov = place_files(s, *rank_of, job);
  settle_groups(job);
  number_collectives(job);
  if (auto err = check_ranks_in_job(job, first_path(s))) return *err;
  settle_peers(job, cov.peers, second);
  job.sizes_known = cov.sizes;
  job.clocks_comparable = cov.epoch;
  add_channels(s.logs, job);
  return job;
}

// Takes what `sizes` knows about each call of `job` (the same program, recorded again).
Status merge_second_source(Job& job, const Job& sizes) {
  std::string window_note;
  for (auto& jr : job.ranks) {
    if (!jr.present) continue;
    if (static_cast<std::size_t>(jr.rank) >= sizes.ranks.size() ||
        !sizes.ranks[static_cast<std::size_t>(jr.rank)].present)
      return make_error("import.sources_disagree", "the second source has no file for rank " + std::to_string(jr.rank),
                        "give --sizes the files of every rank", Location{jr.file, 0, 0, ""});
    const JobRank& sr = sizes.ranks[static_cast<std::size_t>(jr.rank)];
    // A profiler sees the calls of its window: find them in the recording, which may
    // hold more before and after (the same kinds of call in the same order).
    const std::size_t n = jr.calls.size(), m = sr.calls.size();
    std::size_t offset = SIZE_MAX;
    for (std::size_t o = 0; n <= m && o + n <= m && offset == SIZE_MAX; ++o) {
      bool same = true;
      for (std::size_t i = 0; i < n && same; ++i) same = job::same_kind(jr.calls[i].kind, sr.calls[o + i].kind);
      if (same) offset = o;
    }
    if (offset == SIZE_MAX) {
      std::size_t i = 0;
      while (i < n && i < m && job::same_kind(jr.calls[i].kind, sr.calls[i].kind)) ++i;
      auto calls_text = [](std::size_t k) { return std::to_string(k) + (k == 1 ? " call" : " calls"); };
      if (i < n && i < m)
        return make_error("import.sources_disagree",
                          "rank " + std::to_string(jr.rank) + "'s call " + std::to_string(i) + " is " +
                              jr.calls[i].name + " here but " + sr.calls[i].name + " in " + sr.file + " (" +
                              sr.calls[i].where + "), and its " + calls_text(n) + " appear nowhere in that order there",
                          "the second source must record the same program", Location{jr.file, 0, 0, ""});
      return make_error("import.sources_disagree",
                        "rank " + std::to_string(jr.rank) + " made " + calls_text(n) + " here but " + calls_text(m) +
                            " in " + sr.file + ", and these do not appear there in this order",
                        "the second source must record the same run of the same program", Location{jr.file, 0, 0, ""});
    }
    if (offset > 0 || n < m)
      window_note = "the traces cover part of the recording (rank " + std::to_string(jr.rank) + ": its calls " +
                    std::to_string(offset) + ".." + std::to_string(offset + n - 1) + " of " + std::to_string(m) + ")";
    for (std::size_t i = 0; i < jr.calls.size(); ++i) {
      JobCall& c = jr.calls[i];
      const JobCall& s = sr.calls[offset + i];
      if (!job::same_kind(c.kind, s.kind))
        return make_error("import.sources_disagree",
                          "rank " + std::to_string(jr.rank) + "'s call " + std::to_string(i) + " is " + c.name +
                              " here but " + s.name + " in " + sr.file + " (" + s.where + ")",
                          "the second source must record the same program", Location{jr.file, 0, 0, c.where});
      c.count = s.count;
      c.kind = s.kind;  // an all-to-all's split sizes too
      c.send_counts = s.send_counts;
      c.recv_counts = s.recv_counts;
      c.sizes = s.sizes;
      c.dtype = s.dtype;
      c.dt = s.dt;
      c.dtype_bytes = s.dtype_bytes;
      c.peer = s.peer;
      c.root = s.root;
      c.group = s.group;
      c.seq = s.seq;
      if (c.reduce_op.empty()) c.reduce_op = s.reduce_op;
      if (c.site.empty()) c.site = s.site;
      c.async_op = c.async_op || s.async_op;
      c.async_known = c.async_known || s.async_known;
      if (c.async_op && !has_time(c.t_wait_begin) && has_time(s.t_wait_begin) && has_time(s.t_issue) &&
          has_time(c.t_issue)) {
        // The wait, placed after the same calls as in the recording.
        c.t_wait_begin = c.t_issue + (s.t_wait_begin - s.t_issue);
        c.t_wait_end = c.t_issue + (s.t_wait_end - s.t_issue);
      }
    }
    jr.groups = sr.groups;
  }
  job.groups = sizes.groups;
  job.sizes_known = sizes.sizes_known;
  job.sizes_from = sizes.files.empty() ? std::string() : sizes.files.front();
  job.notes.erase(
      std::remove_if(job.notes.begin(), job.notes.end(),
                     [](const std::string& n) { return n.find("do not name the peers") != std::string::npos; }),
      job.notes.end());
  job.notes.push_back("sizes, dtypes, peers and groups come from " + fs::path(job.sizes_from).parent_path().string() +
                      (job.sizes_from.empty() ? std::string() : " (" + short_name(job.sizes_from) + ", ...)") +
                      ", call by call; the times from the first files");
  if (!window_note.empty()) job.notes.push_back(window_note);
  return ok_status();
}

}  // namespace

Result<Job> load_job(const std::vector<std::string>& paths, const std::vector<std::string>& size_sources) {
  if (paths.empty()) return make_error("import.io", "no files given", "give one file per rank, or their folder");
  auto job = build(paths, !size_sources.empty());
  if (!job) return job.error();
  if (!size_sources.empty()) {
    auto sizes = build(size_sources, true);
    if (!sizes) return sizes.error();
    if (sizes->world != job->world)
      return make_error(
          "import.sources_disagree",
          "the job has " + std::to_string(job->world) + " ranks but the second source " + std::to_string(sizes->world),
          "give --sizes a recording of the same job", Location{size_sources[0], 0, 0, ""});
    if (auto st = merge_second_source(*job, *sizes); !st) return st.error();
  }
  if (!job->sizes_known)
    job->notes.push_back(
        "the files record no sizes (older PyTorch's profiler traces carry none): every call moves 1 "
        "element in the replay; give --sizes with a recording of the same program (`collscope "
        "record`) for the real sizes");
  if (!job->clocks_comparable && job->format != JobFormat::nccl_log)
    job->notes.push_back("each rank's times start at its own profiler's start, so times are not compared across ranks");
  if (job->format == JobFormat::nccl_log)
    job->notes.push_back("an NCCL log has no times: the replay has no compute gaps");
  return job;
}

bool is_job_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return true;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  std::string head(1 << 16, '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = ::read(fd, head.data() + got, head.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  head.resize(got);
  return job::detect_format(head).has_value();
}

}  // namespace collscope
