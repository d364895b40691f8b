// One run end to end: verify symbolically, allocate on the backend, load inputs,
// execute (observable or fast), read back, compare with the numeric reference.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "collscope/algorithms.h"
#include "collscope/run.h"
#include "collscope/verify.h"

namespace collscope {

namespace {

Status read_all(const Schedule& s, Session& session, HostMemory& mem, bool with_scratch) {
  const std::size_t e = size_of(s.dtype);
  mem.assign(s.buffers.size(), std::vector<std::vector<std::uint8_t>>(static_cast<std::size_t>(s.ranks)));
  for (std::size_t b = 0; b < s.buffers.size(); ++b) {
    if (s.buffers[b].scratch && !with_scratch) continue;
    for (std::int32_t r = 0; r < s.ranks; ++r) {
      auto& v = mem[b][static_cast<std::size_t>(r)];
      v.resize(s.buffers[b].count[static_cast<std::size_t>(r)] * e);
      if (auto st = session.read_buffer(r, static_cast<std::int32_t>(b), v.data(), v.size()); !st) return st;
    }
  }
  return ok_status();
}

std::string default_dump_path() {
  const char* dir = std::getenv("TMPDIR");
  std::string d = dir && *dir ? dir : "/tmp";
  if (d.back() != '/') d += '/';
  // The process and the time tell runs apart without any shared counter.
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return d + "collscope-flight-" + std::to_string(getpid()) + "-" + std::to_string(ns) + ".json";
}

// A run that failed on the backend: its flight record is written, and the error says where.
Error with_flight_record(Error e, const Session& session, const RunOptions& o) {
  if (!o.dump_on_failure && o.flight_record_path.empty()) return e;
  FlightRecord rec = session.flight_record();
  if (rec.ranks.empty()) return e;
  rec.reason = e.format();
  const std::string path = !o.flight_record_path.empty()    ? o.flight_record_path
                           : !o.failure_record_path.empty() ? o.failure_record_path
                                                            : default_dump_path();
  if (auto st = write_flight_record(path, rec); !st) {
    e.hint +=
        (e.hint.empty() ? "" : "; ") + std::string("the flight record could not be written: ") + st.error().message;
    return e;
  }
  e.message += "; flight record: " + path;
  e.hint += (e.hint.empty() ? "" : "; ") + std::string("`collscope analyze ") + path + "` explains it";
  return e;
}

// A numeric report as text, to hand to another process (%a: doubles exactly, nan and inf too).
std::string numeric_text(const NumericReport& n) {
  char head[256];
  std::snprintf(head, sizeof head, "%llu %llu %d %d %llu %a %a %d ", static_cast<unsigned long long>(n.wrong),
                static_cast<unsigned long long>(n.checked), n.rank, n.buf, static_cast<unsigned long long>(n.index),
                n.expected, n.got, n.last_step);
  return head + n.buffer_name;
}

NumericReport numeric_from(const std::string& text) {
  NumericReport n;
  unsigned long long wrong = 0, checked = 0, index = 0;
  int used = 0;
  if (std::sscanf(text.c_str(), "%llu %llu %d %d %llu %la %la %d %n", &wrong, &checked, &n.rank, &n.buf, &index,
                  &n.expected, &n.got, &n.last_step, &used) >= 8) {
    n.wrong = wrong;
    n.checked = checked;
    n.index = index;
    n.buffer_name = text.substr(static_cast<std::size_t>(used));
  }
  return n;
}

// Several processes: each checks the ranks it hosts, and every process learns the
// whole verdict (the first wrong element in the order one process would find it).
Result<NumericReport> check_hosted(const Schedule& s, Session& session, const HostMemory& got, Reference ref) {
  HostMemory mine = got;
  for (std::size_t b = 0; b < s.buffers.size(); ++b)
    for (std::int32_t r = 0; r < s.ranks; ++r) {
      if (session.hosts(r)) continue;
      const auto i = static_cast<std::size_t>(r);
      mine[b][i].clear();
      ref.want[b][i].clear();
      ref.tolerance[b][i].clear();
    }
  auto all = session.share(numeric_text(compare_numeric(s, mine, ref)));
  if (!all) return all.error();
  NumericReport total;
  bool first = true;
  for (const auto& text : *all) {
    const NumericReport n = numeric_from(text);
    total.checked += n.checked;
    if (n.wrong == 0) continue;
    if (first || n.buf < total.buf || (n.buf == total.buf && n.rank < total.rank)) {
      const std::uint64_t wrong = total.wrong, checked = total.checked;
      total = n;
      total.wrong = wrong, total.checked = checked;
    }
    first = false;
    total.wrong += n.wrong;
  }
  return total;
}

std::uint64_t total_bytes(const Schedule& s) {
  std::uint64_t n = 0;
  for (const auto& b : s.buffers)
    for (auto c : b.count) n += c;
  return n * size_of(s.dtype);
}

}  // namespace

Status load_inputs(Session& session, const Schedule& s, const InitFn& init) {
  // Only the ranks this process holds: the others' buffers are left empty.
  Schedule mine;
  mine.ranks = s.ranks;
  mine.dtype = s.dtype;
  mine.buffers = s.buffers;
  for (auto& b : mine.buffers)
    for (std::int32_t r = 0; r < s.ranks; ++r)
      if (!session.hosts(r)) b.count[static_cast<std::size_t>(r)] = 0;
  const HostMemory inputs = make_inputs(mine, init);
  for (std::size_t b = 0; b < s.buffers.size(); ++b) {
    if (s.buffers[b].scratch) continue;
    for (std::int32_t r = 0; r < s.ranks; ++r) {
      if (!session.hosts(r)) continue;
      const auto& v = inputs[b][static_cast<std::size_t>(r)];
      if (auto st = session.write_buffer(r, static_cast<std::int32_t>(b), v.data(), v.size()); !st) return st;
    }
  }
  return ok_status();
}

Result<RunOutcome> execute(const Schedule& s, const InitFn& init, const RunOptions& o) {
  RunOutcome out;
  if (auto st = check_bounds(s); !st) {
    out.symbolic = st;  // never execute a schedule that addresses memory it does not own
    return out;
  }
  out.symbolic = verify_symbolic(s);

  const BackendCapabilities caps = capabilities_of(o.backend);
  for (const Step& st : s.steps) {
    if (!st.native || st.library == caps.native_algorithm) continue;
    std::string runners;  // the backends that run this library's collectives
    for (const auto& b : make_backends())
      if (b->info().caps.native_algorithm == st.library) runners += (runners.empty() ? "" : " or ") + b->info().name;
    return make_error("backend.native_unsupported",
                      "algorithm \"" + st.library + "\" runs the library's own collective, which the " + o.backend +
                          " backend cannot run",
                      (runners.empty() ? std::string() : "use --backend " + runners + ", or ") +
                          "another algorithm (see `collscope list`)");
  }
  for (const Fault& f : o.faults)
    if (auto st = check_fault(s, f); !st) return st.error();
  auto backend = find_backend(o.backend);
  if (!backend) return backend.error();
  SessionOptions so;
  so.record_events = o.record_events;
  so.faults = o.faults;
  so.timeout_s = o.timeout_s;
  so.flight_capacity = o.flight_capacity;
  so.flight_record_path = o.flight_record_path;
  auto session_r = (*backend)->open(s, so);
  if (!session_r) return session_r.error();
  Session& session = **session_r;

  const HostMemory inputs = make_inputs(s, init);
  for (std::size_t b = 0; b < s.buffers.size(); ++b) {
    if (s.buffers[b].scratch) continue;
    for (std::int32_t r = 0; r < s.ranks; ++r) {
      if (!session.hosts(r)) continue;  // another process holds it (and has the same inputs)
      const auto& v = inputs[b][static_cast<std::size_t>(r)];
      if (auto st = session.write_buffer(r, static_cast<std::int32_t>(b), v.data(), v.size()); !st) return st.error();
    }
  }

  RunRecord& rec = out.record;
  rec.backend = o.backend;
  rec.backend_detail = session.detail();
  rec.mode = o.mode;
  for (std::int32_t r = 0; r < s.ranks; ++r) rec.device_labels.push_back(session.device_label(r));
  const auto steps = static_cast<std::int32_t>(s.steps.size());

  if (o.mode == RunMode::observable) {
    // Keep every k-th snapshot so that all of them fit the budget; the views
    // re-execute from the nearest kept one to show the others.
    const std::uint64_t per = std::max<std::uint64_t>(1, total_bytes(s));
    const std::uint64_t fit = std::max<std::uint64_t>(1, o.snapshot_budget / per);
    const auto every = static_cast<std::int32_t>((static_cast<std::uint64_t>(steps) + 1 + fit - 1) / fit);
    if (o.snapshot_budget >= per) {
      Snapshot snap;
      if (auto st = read_all(s, session, snap.memory, true); !st) return st.error();
      rec.snapshots.push_back(std::move(snap));
    }
    const double t0 = session.now_us();
    for (std::int32_t k = 0; k < steps; ++k) {
      const double a = session.now_us();
      if (auto st = session.run_step(k); !st) return with_flight_record(st.error(), session, o);
      rec.steps.push_back({k, a, session.now_us()});
      if (o.snapshot_budget >= per && ((k + 1) % every == 0 || k + 1 == steps)) {
        Snapshot snap;
        snap.after_step = k;
        if (auto st = read_all(s, session, snap.memory, true); !st) return st.error();
        rec.snapshots.push_back(std::move(snap));
      }
    }
    rec.time_us = session.now_us() - t0;
  } else {
    if (auto st = session.run_all(1); !st) return with_flight_record(st.error(), session, o);
    rec.time_us = session.last_run_us();
  }
  rec.transfers = session.take_events();
  rec.flight = session.flight_record();
  if (!o.flight_record_path.empty() && !rec.flight.ranks.empty() && session.reporting())
    if (auto st = write_flight_record(o.flight_record_path, rec.flight); !st) return st.error();

  // (Several processes: the reporting one receives every rank's result; each checks its own.)
  if (auto st = read_all(s, session, out.result, false); !st) return st.error();
  if (!caps.multi_process) {
    out.numeric = compare_numeric(s, out.result, compute_reference(s, inputs));
  } else {
    auto numeric = check_hosted(s, session, out.result, compute_reference(s, inputs));
    if (!numeric) return numeric.error();
    out.numeric = *numeric;
  }
  if (!s.expect.empty() && session.reporting()) {  // the scenario's own expectations count like the reference
    const NumericReport e = check_expectations_numeric(s, out.result, inputs);
    const std::uint64_t checked = out.numeric.checked + e.checked;
    if (out.numeric.wrong == 0) out.numeric = e;  // the first wrong element, if any, is an expectation's
    else out.numeric.wrong += e.wrong;
    out.numeric.checked = checked;
  }
  return out;
}

}  // namespace collscope
