// What the readers share: reading a file within bounds, telling the formats apart,
// and the names PyTorch, NCCL and collscope give to the same calls and types.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "import/readers.h"

namespace collscope::job {

// --- reading ---------------------------------------------------------------------------

Result<std::string> read_job_file(const std::string& path, std::uint64_t max_bytes) {
  const Location where{path, 0, 0, ""};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return make_error("import.io", "file not found", "check the path", where);
    return make_error("import.io", std::string("cannot open the file (") + std::strerror(err) + ")",
                      "check the path and its permissions", where);
  }
  if (S_ISDIR(st.st_mode))
    return make_error("import.io", "path is a folder", "give the folder itself, not a path inside it that ends in /",
                      where);
  if (!S_ISREG(st.st_mode))
    return make_error("import.io", "path is not a regular file (a FIFO, device or socket)",
                      "give the trace, dump or log file itself", where);
  // O_NONBLOCK: should the path be swapped for a FIFO after stat(), open() still returns.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return make_error("import.io", std::string("cannot open the file (") + std::strerror(err) + ")",
                      "check the file's permissions", where);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return make_error("import.io", "path is not a regular file", "give the trace, dump or log file itself", where);
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    return make_error("import.io",
                      "file is too large (" + human_size(static_cast<double>(st.st_size)) + ", the limit is " +
                          human_size(static_cast<double>(max_bytes)) + ")",
                      "split the trace, or record fewer steps", where);
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  // At most max_bytes + 1: a file that grows while it is read is still bounded.
  while (true) {
    if (got == text.size()) {
      if (text.size() > max_bytes) break;
      text.resize(std::min<std::uint64_t>(max_bytes + 1, text.size() + 65536));
    }
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      return make_error("import.io", std::string("cannot read the file (") + std::strerror(err) + ")",
                        "check the file and the disk", where);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  if (got > max_bytes)
    return make_error("import.io",
                      "file is too large (the limit is " + human_size(static_cast<double>(max_bytes)) + ")",
                      "split the trace, or record fewer steps", where);
  return text;
}

std::optional<JobFormat> detect_format(std::string_view text, bool* collscope_record) {
  if (collscope_record) *collscope_record = false;
  std::size_t i = 0;
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  const std::string_view head = text.substr(i, 1 << 16);
  if (!head.empty() && head[0] == '[') {
    // A bare list of events: older PyTorch's profiler.
    if (head.find("\"ph\"") != std::string_view::npos || head.find("\"name\"") != std::string_view::npos ||
        head.size() < 3)
      return JobFormat::profiler_legacy;
    return std::nullopt;
  }
  if (!head.empty() && head[0] == '{') {
    if (head.find("\"flight_record\"") != std::string_view::npos) {
      if (collscope_record) *collscope_record = true;
      return std::nullopt;
    }
    if (head.find("\"traceEvents\"") != std::string_view::npos) return JobFormat::profiler;
    for (const char* key : {"\"entries\"", "\"pg_config\"", "\"profiling_name\"", "\"collective_seq_id\""})
      if (head.find(key) != std::string_view::npos) return JobFormat::flight_recorder;
    // A dump whose first 64 KiB hold neither (a huge pg_status first): look further.
    if (text.find("\"profiling_name\"") != std::string_view::npos) return JobFormat::flight_recorder;
    if (text.find("\"traceEvents\"") != std::string_view::npos) return JobFormat::profiler;
    return std::nullopt;
  }
  if (head.find("NCCL INFO") != std::string_view::npos || head.find("NCCL WARN") != std::string_view::npos ||
      head.find("NCCL version") != std::string_view::npos)
    return JobFormat::nccl_log;
  return std::nullopt;
}

// --- names ---------------------------------------------------------------------------

std::string kind_of(std::string_view name) {
  // "nccl:all_reduce", "c10d::allreduce_": what follows the last ':'; "send 0->1": the first word.
  if (const auto colon = name.rfind(':'); colon != std::string_view::npos) name = name.substr(colon + 1);
  if (const auto sp = name.find(' '); sp != std::string_view::npos) name = name.substr(0, sp);
  std::string k;
  for (char c : name)
    if (c != '_') k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto starts = [&](const char* p) { return k.rfind(p, 0) == 0; };
  if (k == "allreduce" || k == "allreducecoalesced") return "allreduce";
  if (k == "broadcast") return "broadcast";
  if (k == "reduce") return "reduce";
  if (starts("allgather")) return k.find("object") != std::string::npos ? "" : "allgather";
  if (starts("reducescatter")) return "reduce_scatter";
  if (starts("alltoall")) return "alltoall";
  if (k == "gather") return "gather";
  if (k == "scatter") return "scatter";
  if (k == "barrier" || k == "monitoredbarrier") return "barrier";
  if (k == "send" || k == "isend") return "send";
  if (k == "recv" || k == "irecv" || k == "recvanysource") return "recv";
  return "";
}

bool is_p2p_kind(std::string_view kind) { return kind == "send" || kind == "recv"; }

DTypeInfo dtype_info(std::string_view name) {
  std::string k;
  for (char c : name)
    if (c != '_' && c != ' ') k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* prefix : {"torch.", "at::", "c10::", "nccl"})
    if (k.rfind(prefix, 0) == 0) k = k.substr(std::strlen(prefix));
  if (k == "float" || k == "float32" || k == "fp32") return {DType::float32, 4};
  if (k == "double" || k == "float64" || k == "fp64") return {DType::float64, 8};
  if (k == "half" || k == "float16" || k == "fp16") return {DType::float16, 2};
  if (k == "bfloat16" || k == "bf16") return {DType::bfloat16, 2};
  if (k == "long" || k == "int64" || k == "int64t") return {DType::int64, 8};
  if (k == "int" || k == "int32" || k == "int32t") return {DType::int32, 4};
  if (k == "char" || k == "int8") return {DType::int8, 1};
  if (k == "byte" || k == "uint8" || k == "bool") return {DType::uint8, 1};
  if (k == "short" || k == "int16" || k == "uint16") return {std::nullopt, 2};
  if (k == "uint32") return {std::nullopt, 4};
  if (k == "uint64") return {std::nullopt, 8};
  if (k == "complexfloat" || k == "complex64" || k == "cfloat") return {std::nullopt, 8};
  if (k == "complexdouble" || k == "complex128" || k == "cdouble") return {std::nullopt, 16};
  if (k == "complexhalf" || k == "complex32") return {std::nullopt, 4};
  if (k.rfind("float8", 0) == 0 || k.rfind("fp8", 0) == 0) return {std::nullopt, 1};
  return {};
}

DTypeInfo nccl_dtype(int number) {
  switch (number) {
    case 0:
      return {DType::int8, 1};
    case 1:
      return {DType::uint8, 1};
    case 2:
      return {DType::int32, 4};
    case 3:
      return {std::nullopt, 4};
    case 4:
      return {DType::int64, 8};
    case 5:
      return {std::nullopt, 8};
    case 6:
      return {DType::float16, 2};
    case 7:
      return {DType::float32, 4};
    case 8:
      return {DType::float64, 8};
    case 9:
      return {DType::bfloat16, 2};
    case 10:
    case 11:
      return {std::nullopt, 1};
    default:
      return {};
  }
}

std::string nccl_reduce_op(int number) {
  switch (number) {
    case 0:
      return "sum";
    case 1:
      return "prod";
    case 2:
      return "max";
    case 3:
      return "min";
    case 4:
      return "avg";
    default:
      return "";
  }
}

std::uint64_t count_from_numels(std::string_view kind, std::uint64_t in_numel, std::uint64_t out_numel,
                                std::int32_t group_size) {
  if (kind == "reduce_scatter" || kind == "scatter") return out_numel;
  if (kind == "alltoall") return group_size > 0 ? in_numel / static_cast<std::uint64_t>(group_size) : in_numel;
  if (kind == "barrier") return 0;
  if (kind == "recv") return out_numel ? out_numel : in_numel;
  return in_numel ? in_numel : out_numel;
}

std::string settle_alltoall(JobCall& c, std::int32_t group_size, std::vector<std::uint64_t> send,
                            std::vector<std::uint64_t> recv, std::uint64_t in_numel, std::uint64_t out_numel) {
  c.send_counts.clear();
  c.recv_counts.clear();
  if (group_size <= 0) return "";
  const auto n = static_cast<std::uint64_t>(group_size);
  if (send.empty() && recv.empty()) {
    if (in_numel == out_numel && in_numel % n == 0) {
      c.kind = "alltoall";
      c.count = in_numel / n;
    } else {  // uneven, but the file does not say how
      c.kind = "alltoallv";
      c.count = in_numel;
    }
    return "";
  }
  // A side without split sizes is split evenly.
  if (send.empty()) send.assign(static_cast<std::size_t>(n), in_numel / n);
  if (recv.empty()) recv.assign(static_cast<std::size_t>(n), out_numel / n);
  for (const auto* side : {&send, &recv})
    if (side->size() != n)
      return std::string(side == &send ? "input" : "output") + " split sizes name " + std::to_string(side->size()) +
             " peers but the group has " + std::to_string(n) + " ranks";
  const bool even = std::all_of(send.begin(), send.end(), [&](std::uint64_t x) { return x == send[0]; }) &&
                    std::all_of(recv.begin(), recv.end(), [&](std::uint64_t x) { return x == send[0]; });
  if (even) {
    c.kind = "alltoall";
    c.count = send[0];
    return "";
  }
  c.kind = "alltoallv";
  std::uint64_t total = 0;
  for (auto x : send) total += x;
  c.count = total;
  c.send_counts = std::move(send);
  c.recv_counts = std::move(recv);
  return "";
}

bool same_kind(std::string_view a, std::string_view b) {
  auto family = [](std::string_view k) { return k == "alltoallv" ? std::string_view("alltoall") : k; };
  return family(a) == family(b);
}

std::optional<std::vector<std::uint64_t>> parse_count_list(std::string_view text) {
  std::vector<std::uint64_t> out;
  std::size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip();
  if (i >= text.size() || text[i] != '[') return std::nullopt;
  ++i;
  skip();
  if (i < text.size() && text[i] == ']') return out;
  while (i < text.size()) {
    skip();
    std::uint64_t v = 0;
    const auto r = std::from_chars(text.data() + i, text.data() + text.size(), v);
    if (r.ec != std::errc()) return std::nullopt;  // "..." of a list cut short lands here
    out.push_back(v);
    i = static_cast<std::size_t>(r.ptr - text.data());
    skip();
    if (i < text.size() && text[i] == ',') {
      ++i;
      continue;
    }
    if (i < text.size() && text[i] == ']') return out;
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::vector<std::int32_t>> parse_rank_list(std::string_view text) {
  auto list = parse_count_list(text);
  if (!list) return std::nullopt;
  std::vector<std::int32_t> out;
  out.reserve(list->size());
  for (auto v : *list) {
    if (v > static_cast<std::uint64_t>(INT32_MAX)) return std::nullopt;
    out.push_back(static_cast<std::int32_t>(v));
  }
  return out;
}

std::int32_t rank_from_name(const std::string& path) {
  std::string stem = std::filesystem::path(path).filename().string();
  // Every extension goes: "rank3.json", "rank3.pt.trace.json", "nccl.rank3.log".
  for (const char* ext : {".json", ".log", ".txt", ".trace", ".pt", ".pkl"}) {
    const std::string e = ext;
    while (stem.size() > e.size() && stem.compare(stem.size() - e.size(), e.size(), e) == 0)
      stem.resize(stem.size() - e.size());
  }
  std::size_t j = stem.size();
  while (j > 0 && std::isdigit(static_cast<unsigned char>(stem[j - 1]))) --j;
  if (j == stem.size() || stem.size() - j > 6) return -1;
  return std::stoi(stem.substr(j));
}

std::string human_size(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0 || bytes == std::floor(bytes)) std::snprintf(buf, sizeof buf, "%.0f %s", bytes, units[u]);
  else std::snprintf(buf, sizeof buf, "%.3g %s", bytes, units[u]);
  return buf;
}

std::string rank_ranges(std::vector<std::int32_t> r) {
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

}  // namespace collscope::job

namespace collscope {

const char* name_of(JobFormat f) {
  switch (f) {
    case JobFormat::profiler:
      return "PyTorch profiler trace";
    case JobFormat::profiler_legacy:
      return "PyTorch profiler trace (older format)";
    case JobFormat::flight_recorder:
      return "Flight Recorder dump";
    case JobFormat::nccl_log:
      return "NCCL log";
  }
  return "?";
}

std::string files_noun(JobFormat f, std::size_t n) {
  std::string noun;
  switch (f) {
    case JobFormat::profiler:
      noun = n == 1 ? "PyTorch profiler trace" : "PyTorch profiler traces";
      break;
    case JobFormat::profiler_legacy:
      noun = n == 1 ? "PyTorch profiler trace (older format)" : "PyTorch profiler traces (older format)";
      break;
    case JobFormat::flight_recorder:
      noun = n == 1 ? "Flight Recorder dump" : "Flight Recorder dumps";
      break;
    case JobFormat::nccl_log:
      noun = n == 1 ? "NCCL log" : "NCCL logs";
      break;
  }
  return std::to_string(n) + " " + noun;
}

double JobCall::begin() const {
  if (async_op) return has_time(t_issue) ? t_issue : t_start;
  return has_time(t_start) ? t_start : t_issue;
}

double JobCall::end() const {
  const double b = begin();
  if (async_op) return has_time(t_return) ? t_return : b;
  if (has_time(t_end)) return t_end;
  if (has_time(t_return)) return t_return;
  return b;
}

}  // namespace collscope
