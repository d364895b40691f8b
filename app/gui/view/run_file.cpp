#include "gui/view/run_file.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <type_traits>

namespace collscope::view {

namespace {

constexpr char kMagic[] = "collscope-run 1\n";

class Out {
 public:
  void bytes(const void* p, std::size_t n) { s.append(static_cast<const char*>(p), n); }
  template <class T>
  void num(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&v, sizeof v);
  }
  void text(const std::string& t) {
    num<std::uint64_t>(t.size());
    bytes(t.data(), t.size());
  }
  void blob(const std::vector<std::uint8_t>& v) {
    num<std::uint64_t>(v.size());
    bytes(v.data(), v.size());
  }
  void memory(const HostMemory& m) {
    num<std::uint64_t>(m.size());
    for (const auto& b : m) {
      num<std::uint64_t>(b.size());
      for (const auto& r : b) blob(r);
    }
  }
  std::string s;
};

class In {
 public:
  explicit In(std::string d) : s(std::move(d)) {}
  bool bytes(void* p, std::size_t n) {
    if (at + n > s.size()) return ok = false;
    std::memcpy(p, s.data() + at, n);
    at += n;
    return true;
  }
  template <class T>
  T num() {
    T v{};
    bytes(&v, sizeof v);
    return v;
  }
  std::uint64_t size() {
    const auto n = num<std::uint64_t>();
    if (n > s.size() - std::min(at, s.size())) ok = false;  // cannot be longer than what is left
    return ok ? n : 0;
  }
  std::string text() {
    std::string t(size(), '\0');
    bytes(t.data(), t.size());
    return t;
  }
  std::vector<std::uint8_t> blob() {
    std::vector<std::uint8_t> v(size());
    bytes(v.data(), v.size());
    return v;
  }
  HostMemory memory() {
    HostMemory m(size());
    for (auto& b : m) {
      b.resize(size());
      for (auto& r : b) r = blob();
    }
    return m;
  }
  std::string s;
  std::size_t at = 0;
  bool ok = true;
};

void error_out(Out& o, const Error& e) {
  o.text(e.id);
  o.text(e.message);
  o.text(e.hint);
  o.text(e.where.file);
  o.num<std::int32_t>(e.where.line);
  o.num<std::int32_t>(e.where.col);
  o.text(e.where.pointer);
  o.num<std::int32_t>(static_cast<std::int32_t>(e.exit));
}

Error error_in(In& in) {
  Error e;
  e.id = in.text();
  e.message = in.text();
  e.hint = in.text();
  e.where.file = in.text();
  e.where.line = in.num<std::int32_t>();
  e.where.col = in.num<std::int32_t>();
  e.where.pointer = in.text();
  e.exit = static_cast<ExitCode>(in.num<std::int32_t>());
  return e;
}

}  // namespace

Status write_run_file(const std::string& path, const RunOutcome& out) {
  Out o;
  o.bytes(kMagic, sizeof kMagic - 1);
  o.num<std::uint8_t>(out.symbolic.ok());
  if (!out.symbolic.ok()) error_out(o, out.symbolic.error());
  const NumericReport& n = out.numeric;
  o.num(n.wrong), o.num(n.checked), o.num(n.rank), o.num(n.buf), o.text(n.buffer_name), o.num(n.index);
  o.num(n.expected), o.num(n.got), o.num(n.last_step);
  const RunRecord& r = out.record;
  o.text(r.backend);
  o.text(r.backend_detail);
  o.num<std::uint8_t>(static_cast<std::uint8_t>(r.mode));
  o.num<std::uint64_t>(r.device_labels.size());
  for (const auto& l : r.device_labels) o.text(l);
  o.num(r.time_us);
  o.num<std::uint64_t>(r.transfers.size());
  for (const auto& t : r.transfers) o.num(t.step), o.num(t.transfer), o.num(t.rank), o.num(t.t0_us), o.num(t.t1_us);
  o.num<std::uint64_t>(r.steps.size());
  for (const auto& t : r.steps) o.num(t.step), o.num(t.t0_us), o.num(t.t1_us);
  o.num<std::uint64_t>(r.snapshots.size());
  for (const auto& sn : r.snapshots) {
    o.num(sn.after_step);
    o.memory(sn.memory);
  }
  o.text(r.flight.ranks.empty() ? std::string() : flight_record_json(r.flight));
  o.memory(out.result);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(o.s.data(), static_cast<std::streamsize>(o.s.size()));
    if (!f) {
      std::remove(tmp.c_str());
      return make_error("gui.run_file", "cannot write the run to " + path, "check the folder", {}, ExitCode::bad_input);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return make_error("gui.run_file", "cannot write the run to " + path, "check the folder", {}, ExitCode::bad_input);
  }
  return ok_status();
}

Result<RunOutcome> read_run_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  auto bad = [&](const std::string& why) {
    return make_error("gui.run_file", "the run of the processes left no readable record in " + path + ": " + why,
                      "run the lesson again", {}, ExitCode::backend_failure);
  };
  if (!f) return bad("no such file");
  In in(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
  std::string magic(sizeof kMagic - 1, '\0');
  if (!in.bytes(magic.data(), magic.size()) || magic != kMagic) return bad("not a run record");
  RunOutcome out;
  if (!in.num<std::uint8_t>()) out.symbolic = error_in(in);
  NumericReport& n = out.numeric;
  n.wrong = in.num<std::uint64_t>(), n.checked = in.num<std::uint64_t>(), n.rank = in.num<std::int32_t>();
  n.buf = in.num<std::int32_t>(), n.buffer_name = in.text(), n.index = in.num<std::uint64_t>();
  n.expected = in.num<double>(), n.got = in.num<double>(), n.last_step = in.num<std::int32_t>();
  RunRecord& r = out.record;
  r.backend = in.text();
  r.backend_detail = in.text();
  r.mode = static_cast<RunMode>(in.num<std::uint8_t>());
  r.device_labels.resize(in.size());
  for (auto& l : r.device_labels) l = in.text();
  r.time_us = in.num<double>();
  r.transfers.resize(in.size());
  for (auto& t : r.transfers) {
    t.step = in.num<std::int32_t>(), t.transfer = in.num<std::int32_t>(), t.rank = in.num<std::int32_t>();
    t.t0_us = in.num<double>(), t.t1_us = in.num<double>();
  }
  r.steps.resize(in.size());
  for (auto& t : r.steps) t.step = in.num<std::int32_t>(), t.t0_us = in.num<double>(), t.t1_us = in.num<double>();
  r.snapshots.resize(in.size());
  for (auto& sn : r.snapshots) {
    sn.after_step = in.num<std::int32_t>();
    sn.memory = in.memory();
  }
  const std::string flight = in.text();
  if (!flight.empty())
    if (auto fr = parse_flight_record(flight, path)) r.flight = std::move(*fr);
  out.result = in.memory();
  if (!in.ok) return bad("it ends too soon");
  return out;
}

}  // namespace collscope::view
