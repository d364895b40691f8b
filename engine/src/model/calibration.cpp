// The calibration file: written with nlohmann's writer, read back with the scenario
// reader's JSON parser so that a damaged file is reported at its line and column.
#include "collscope/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "collscope/files.h"
#include "scenario/json.h"

namespace collscope {

namespace {

constexpr std::uint64_t kMaxCalibrationBytes = 64 << 10;

DType dtype_at(std::size_t i) { return static_cast<DType>(i); }

}  // namespace

double Calibration::priced_cache_bytes() const {
  // The model finds a byte reused after d other bytes with the chance h = (2C - d) / 1.5C
  // between C/2 and 2C (model/reuse.h). A copy that finds the share h runs at
  // 1 / (h / hi + (1 - h) / lo): halfway between the two rates, (hi + lo) / 2, where
  // h = q / (q + 1) with q = hi / lo. The calibration saw that at d = cache_seen_bytes,
  // so C = d / (2 - 1.5 h). On the machine of bench/RESULTS.md (a 32 MiB L3, seen at
  // 14-26 MiB, q about 3.6: C about 1.2x what is seen) two grids priced so erred 12.0%
  // and 12.7% where the kernel's 32 MiB gave 12.7% and 15.4% ("The cache a copy sees,
  // priced").
  if (cache_seen_bytes <= 0 || cache_bytes <= 0) return cache_bytes;
  const double hi = copy_far_cache_gbps > 0 ? copy_far_cache_gbps : copy_in_cache_gbps;
  if (copy_gbps <= 0 || hi <= copy_gbps) return cache_bytes;
  const double q = hi / copy_gbps, h = q / (q + 1);
  return std::min(cache_bytes, cache_seen_bytes / (2 - 1.5 * h));
}

CostModel Calibration::model(DType dtype) const {
  CostModel m = CostModel::cpu_default();
  if (cores > 0) m.cores = cores;
  if (cache_bytes > 0) m.cache_bytes = priced_cache_bytes();
  if (copy_gbps > 0) m.beta_gbps = copy_gbps;
  if (copy_in_cache_gbps > 0) m.beta_cache_gbps = copy_in_cache_gbps;
  const auto d = static_cast<std::size_t>(dtype);
  if (d < reduce_gbps.size() && reduce_gbps[d] > 0) m.gamma_gbps = reduce_gbps[d];
  if (d < reduce_copy_gbps.size() && reduce_copy_gbps[d] > 0) m.gamma_copy_gbps = reduce_copy_gbps[d];
  if (d < reduce_in_cache_gbps.size() && reduce_in_cache_gbps[d] > 0) m.gamma_cache_gbps = reduce_in_cache_gbps[d];
  if (d < reduce_copy_in_cache_gbps.size() && reduce_copy_in_cache_gbps[d] > 0)
    m.gamma_copy_cache_gbps = reduce_copy_in_cache_gbps[d];
  // The shared cache's rates: a dtype whose reduce is slower in the core's own cache
  // than float32's in the shared one (its arithmetic bounds it) keeps its own rate.
  if (near_cache_bytes > 0 && copy_far_cache_gbps > 0) {
    m.near_cache_bytes = near_cache_bytes;
    m.beta_far_gbps = copy_far_cache_gbps;
    if (reduce_far_cache_gbps > 0)
      m.gamma_far_gbps =
          m.gamma_cache_gbps > 0 ? std::min(m.gamma_cache_gbps, reduce_far_cache_gbps) : reduce_far_cache_gbps;
    if (reduce_copy_far_cache_gbps > 0) {
      const double own = m.gamma_copy_cache_gbps > 0 ? m.gamma_copy_cache_gbps : m.gamma_cache_gbps;
      m.gamma_copy_far_gbps = own > 0 ? std::min(own, reduce_copy_far_cache_gbps) : reduce_copy_far_cache_gbps;
    }
  }
  if (held_gbps > 0) m.beta_held_gbps = held_gbps;
  if (held_gbps > 0 && held_far_gbps > 0) m.beta_held_far_gbps = held_far_gbps;
  if (held_gbps > 0 && held_first_gbps > 0 && first_cache_bytes > 0) {
    m.first_cache_bytes = first_cache_bytes;
    m.beta_held_first_gbps = held_first_gbps;
  }
  // Measured as bytes copied by every core at once; the model's shared bandwidth is
  // memory traffic, and a copy reads and writes each byte.
  if (shared_gbps > 0) m.shared_gbps = 2 * shared_gbps;
  // A reduce's and a reduce-copy's traffic is three times what they write (two reads, a
  // write).
  if (shared_reduce_gbps > 0) m.shared_reduce_gbps = 3 * shared_reduce_gbps;
  if (shared_reduce_copy_gbps > 0) m.shared_reduce_copy_gbps = 3 * shared_reduce_copy_gbps;
  // A hop of the calibration's chain is a wake-up and a step of the rank woken: the
  // model counts the step apart (step_us), so the wake-ups are the rest.
  if (step_us > 0) m.step_us = step_us;
  if (wake_us > 0) m.wake_us = std::max(0.0, wake_us - m.step_us);
  if (switch_us > 0) m.switch_us = std::max(0.0, switch_us - m.step_us);
  if (remote_look_us > 0) m.remote_look_us = remote_look_us;
  if (barrier_us > 0) m.alpha_us = barrier_us;
  m.alpha_per_rank_us = barrier_per_rank_us;
  return m;
}

std::string user_config_dir() {
  namespace fs = std::filesystem;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return (fs::path(x) / "collscope").string();
  if (const char* h = std::getenv("HOME"); h && *h) return (fs::path(h) / ".config" / "collscope").string();
  return "";
}

std::string calibration_path(const std::string& config_dir) {
  return config_dir.empty() ? "" : (std::filesystem::path(config_dir) / "calibration.json").string();
}

std::string to_json(const Calibration& c) {
  nlohmann::ordered_json j;
  j["version"] = 1;
  j["date"] = c.date;
  j["machine"] = c.machine;
  j["seconds"] = c.seconds;
  j["cores"] = c.cores;
  j["cache_bytes"] = c.cache_bytes;
  j["cache_seen_bytes"] = c.cache_seen_bytes;
  j["copy_gbps"] = c.copy_gbps;
  j["copy_in_cache_gbps"] = c.copy_in_cache_gbps;
  nlohmann::ordered_json red = nlohmann::ordered_json::object(), red_copy = nlohmann::ordered_json::object(),
                         red_c = nlohmann::ordered_json::object(), red_copy_c = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < kCalibratedDTypes; ++i) {
    const std::string name(name_of(dtype_at(i)));
    red[name] = c.reduce_gbps[i];
    red_copy[name] = c.reduce_copy_gbps[i];
    red_c[name] = c.reduce_in_cache_gbps[i];
    red_copy_c[name] = c.reduce_copy_in_cache_gbps[i];
  }
  j["reduce_gbps"] = red;
  j["reduce_copy_gbps"] = red_copy;
  j["reduce_in_cache_gbps"] = red_c;
  j["reduce_copy_in_cache_gbps"] = red_copy_c;
  j["near_cache_bytes"] = c.near_cache_bytes;
  j["copy_far_cache_gbps"] = c.copy_far_cache_gbps;
  j["reduce_far_cache_gbps"] = c.reduce_far_cache_gbps;
  j["reduce_copy_far_cache_gbps"] = c.reduce_copy_far_cache_gbps;
  j["held_gbps"] = c.held_gbps;
  j["held_far_gbps"] = c.held_far_gbps;
  j["first_cache_bytes"] = c.first_cache_bytes;
  j["held_first_gbps"] = c.held_first_gbps;
  j["shared_gbps"] = c.shared_gbps;
  j["shared_reduce_gbps"] = c.shared_reduce_gbps;
  j["shared_reduce_copy_gbps"] = c.shared_reduce_copy_gbps;
  j["wake_us"] = c.wake_us;
  j["switch_us"] = c.switch_us;
  j["step_us"] = c.step_us;
  j["remote_look_us"] = c.remote_look_us;
  j["barrier_us"] = c.barrier_us;
  j["barrier_per_rank_us"] = c.barrier_per_rank_us;
  return j.dump(2) + "\n";
}

Result<Calibration> parse_calibration(const std::string& text, const std::string& file) {
  auto doc = json::parse(text, file);
  if (!doc) {
    Error e = doc.error();
    e.id = "calibration.parse";
    e.hint = "run `collscope calibrate` again to write a new one";
    return e;
  }
  auto bad = [&](const json::Value& v, const std::string& what) {
    return make_error("calibration.parse", what, "run `collscope calibrate` again to write a new one",
                      {file, v.line, v.col, v.pointer});
  };
  if (!doc->is_object()) return bad(*doc, "a calibration is a JSON object");
  Calibration c;
  auto num = [&](const char* key, double& out, bool required) -> Status {
    const json::Member* m = doc->find(key);
    if (!m) {
      if (required) return bad(*doc, std::string("missing \"") + key + "\"");
      return ok_status();
    }
    if (!m->value.is_number() || !std::isfinite(m->value.number) || m->value.number < 0)
      return bad(m->value, std::string("\"") + key + "\" must be a number, 0 or more");
    out = m->value.number;
    return ok_status();
  };
  const json::Member* version = doc->find("version");
  if (!version || !version->value.is_number() || version->value.number != 1)
    return bad(version ? version->value : *doc, "this collscope reads calibrations of version 1");
  for (const char* key : {"date", "machine"})
    if (const json::Member* m = doc->find(key)) {
      if (!m->value.is_string()) return bad(m->value, std::string("\"") + key + "\" must be a string");
      (std::string(key) == "date" ? c.date : c.machine) = m->value.text;
    }
  double cores = 0;
  for (auto [key, out, req] : {std::tuple{"seconds", &c.seconds, false},
                               std::tuple{"cores", &cores, true},
                               std::tuple{"cache_bytes", &c.cache_bytes, false},
                               std::tuple{"cache_seen_bytes", &c.cache_seen_bytes, false},
                               std::tuple{"copy_gbps", &c.copy_gbps, true},
                               std::tuple{"copy_in_cache_gbps", &c.copy_in_cache_gbps, false},
                               std::tuple{"shared_gbps", &c.shared_gbps, true},
                               std::tuple{"wake_us", &c.wake_us, true},
                               std::tuple{"switch_us", &c.switch_us, true},
                               std::tuple{"step_us", &c.step_us, false},
                               std::tuple{"remote_look_us", &c.remote_look_us, false},
                               std::tuple{"barrier_us", &c.barrier_us, false},
                               std::tuple{"near_cache_bytes", &c.near_cache_bytes, false},
                               std::tuple{"copy_far_cache_gbps", &c.copy_far_cache_gbps, false},
                               std::tuple{"reduce_far_cache_gbps", &c.reduce_far_cache_gbps, false},
                               std::tuple{"reduce_copy_far_cache_gbps", &c.reduce_copy_far_cache_gbps, false},
                               std::tuple{"held_gbps", &c.held_gbps, false},
                               std::tuple{"held_far_gbps", &c.held_far_gbps, false},
                               std::tuple{"first_cache_bytes", &c.first_cache_bytes, false},
                               std::tuple{"held_first_gbps", &c.held_first_gbps, false},
                               std::tuple{"shared_reduce_gbps", &c.shared_reduce_gbps, false},
                               std::tuple{"shared_reduce_copy_gbps", &c.shared_reduce_copy_gbps, false},
                               std::tuple{"barrier_per_rank_us", &c.barrier_per_rank_us, false}})
    if (auto st = num(key, *out, req); !st) return st.error();
  if (cores < 1 || cores > 65536 || cores != std::floor(cores))
    return bad(doc->find("cores")->value, "\"cores\" must be a whole number from 1");
  c.cores = static_cast<int>(cores);
  for (auto [key, table] :
       {std::pair{"reduce_gbps", &c.reduce_gbps}, std::pair{"reduce_copy_gbps", &c.reduce_copy_gbps},
        std::pair{"reduce_in_cache_gbps", &c.reduce_in_cache_gbps},
        std::pair{"reduce_copy_in_cache_gbps", &c.reduce_copy_in_cache_gbps}}) {
    const json::Member* m = doc->find(key);
    if (!m) continue;
    if (!m->value.is_object()) return bad(m->value, std::string("\"") + key + "\" must be an object of dtypes");
    for (const auto& d : m->value.members) {
      auto t = parse_dtype(d.key);
      if (!t) return bad(d.value, "unknown dtype \"" + d.key + "\"");
      if (!d.value.is_number() || !std::isfinite(d.value.number) || d.value.number < 0)
        return bad(d.value, "a bandwidth must be a number, 0 or more");
      (*table)[static_cast<std::size_t>(*t)] = d.value.number;
    }
  }
  return c;
}

Result<Calibration> load_calibration(const std::string& path) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec))
    return make_error("calibration.missing", "no calibration", "run `collscope calibrate`", {path, 0, 0, ""});
  auto text = read_input_file(path, InputKind{"calibration.io", "calibration", kMaxCalibrationBytes,
                                              "run `collscope calibrate`", "run `collscope calibrate` again"});
  if (!text) return text.error();
  return parse_calibration(*text, path);
}

Status save_calibration(const Calibration& c, const std::string& path) {
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  return write_file_atomically(path, to_json(c), "calibration.io");
}

CpuModel cpu_model_for(DType dtype, const std::string& config_dir) {
  CpuModel m;
  auto c = load_calibration(calibration_path(config_dir));
  if (c) {
    m.model = c->model(dtype);
    m.origin = "calibrated " + (c->date.empty() ? std::string("(undated)") : c->date);
    m.calibrated = true;
    return m;
  }
  m.model = CostModel::cpu_default();
  m.origin = c.error().id == "calibration.missing"
                 ? "defaults (not calibrated: run `collscope calibrate`)"
                 : "defaults (the calibration could not be read: " + c.error().format() + ")";
  return m;
}

}  // namespace collscope
