#include "gui/view/palette.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "collscope/files.h"
#include "scenario/json.h"

namespace collscope::view {

namespace {

Rgba from_hsv(float h, float s, float v) {
  h = h - std::floor(h);
  const float i = std::floor(h * 6.0f);
  const float f = h * 6.0f - i;
  const float p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  switch (static_cast<int>(i) % 6) {
    case 0:
      return {v, t, p, 1};
    case 1:
      return {q, v, p, 1};
    case 2:
      return {p, v, t, 1};
    case 3:
      return {p, q, v, 1};
    case 4:
      return {t, p, v, 1};
    default:
      return {v, p, q, 1};
  }
}

Palette& active() {
  static Palette p;
  return p;
}

Error palette_error(const std::string& file, const json::Value* v, const std::string& what, const std::string& hint) {
  Location l{file, v ? v->line : 0, v ? v->col : 0, v ? v->pointer : ""};
  return make_error("gui.palette", "palette " + what, hint, std::move(l));
}

// "#rrggbb" (case-insensitive) as a colour.
std::optional<Rgba> parse_hex(const std::string& t) {
  if (t.size() != 7 || t[0] != '#') return std::nullopt;
  int v[3];
  for (int k = 0; k < 3; ++k) {
    int x = 0;
    for (int j = 0; j < 2; ++j) {
      const char c = t[static_cast<std::size_t>(1 + 2 * k + j)];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return std::nullopt;
      x = x * 16 + d;
    }
    v[k] = x;
  }
  return Rgba{v[0] / 255.0f, v[1] / 255.0f, v[2] / 255.0f, 1.0f};
}

}  // namespace

Result<Palette> read_palette(const std::string& path) {
  static const InputKind kind{"gui.palette", "palette file", 1 << 20,
                              "give an existing file, or unset COLLSCOPE_PALETTE to use the shipped palette",
                              "a palette is a few colours: use a smaller file"};
  auto text = read_input_file(path, kind);
  if (!text) return text.error();
  auto doc = json::parse(*text, path);
  if (!doc) {
    Error e = doc.error();
    e.id = "gui.palette";
    return e;
  }
  const std::string example =
      "{\"ranks\": [\"#4d8fd6\", \"#e0703a\"], \"empty\": \"#383b42\", \"complete\": \"#ffd640\"}";
  if (!doc->is_object()) return palette_error(path, &*doc, "is " + json::describe(*doc) + ", not an object", example);
  Palette p;
  auto colour = [&](const json::Value& v) -> Result<Rgba> {
    if (v.is_string())
      if (auto c = parse_hex(v.text)) return *c;
    return palette_error(path, &v,
                         "colour " + (v.is_string() ? json::quote(v.text) : json::describe(v)) + " is not \"#rrggbb\"",
                         "write a colour as \"#\" and six hex digits, e.g. \"#4d8fd6\"");
  };
  for (const json::Member& m : doc->members) {
    if (m.key == "ranks") {
      if (!m.value.is_array())
        return palette_error(path, &m.value, "\"ranks\" is " + json::describe(m.value) + ", not an array", example);
      if (m.value.items.size() > 1024)
        return palette_error(path, &m.value, "\"ranks\" lists " + std::to_string(m.value.items.size()) + " colours",
                             "list at most 1024; ranks beyond the list get colours of their own anyway");
      for (const json::Value& v : m.value.items) {
        auto c = colour(v);
        if (!c) return c.error();
        p.ranks.push_back(*c);
      }
    } else if (m.key == "empty" || m.key == "complete") {
      auto c = colour(m.value);
      if (!c) return c.error();
      (m.key == "empty" ? p.empty : p.complete) = *c;
    } else {
      json::Value at = m.value;
      at.line = m.line;
      at.col = m.col;
      return palette_error(path, &at, "has an unknown key " + json::quote(m.key),
                           "the keys are \"ranks\", \"empty\" and \"complete\"");
    }
  }
  return p;
}

void use_palette(Palette p) { active() = std::move(p); }
const Palette& palette() { return active(); }

std::string palette_file() {
  if (const char* env = std::getenv("COLLSCOPE_PALETTE"); env && *env) return env;
  return asset_path("palette.json");
}

Status load_palette() {
  const char* env = std::getenv("COLLSCOPE_PALETTE");
  const std::string path = palette_file();
  std::error_code ec;
  if (!(env && *env) && !std::filesystem::exists(path, ec)) return ok_status();
  auto p = read_palette(path);
  if (!p) return p.error();
  use_palette(std::move(*p));
  return ok_status();
}

Rgba rank_colour(std::int32_t rank) {
  const Palette& p = active();
  if (rank >= 0 && static_cast<std::size_t>(rank) < p.ranks.size()) return p.ranks[static_cast<std::size_t>(rank)];
  return walk_colour(rank);
}

Rgba walk_colour(std::int32_t rank) {
  constexpr float kGolden = 0.618033988749895f;
  // Start at a blue-ish hue and avoid pure yellow (reserved for complete cells) by
  // varying value on every other lap around the wheel.
  const float h = 0.58f + kGolden * static_cast<float>(rank);
  const int lap = static_cast<int>(static_cast<float>(rank) * kGolden);
  const float v = (lap % 2 == 0) ? 0.92f : 0.72f;
  const float s = (rank % 3 == 2) ? 0.55f : 0.72f;
  return from_hsv(h, s, v);
}

CellColour colour_of(const std::vector<std::int32_t>& ranks, std::int32_t world) {
  CellColour c;
  if (ranks.empty()) {
    c.fill = active().empty;
    c.coverage = Coverage::none;
    return c;
  }
  if (static_cast<std::int32_t>(ranks.size()) >= world && world > 1) {
    c.fill = active().complete;
    c.coverage = Coverage::complete;
    return c;
  }
  if (ranks.size() == 1) {
    c.fill = rank_colour(ranks[0]);
    c.coverage = world == 1 ? Coverage::complete : Coverage::single;
    return c;
  }
  c.fill = mix_colour(ranks);
  c.coverage = Coverage::partial;
  return c;
}

Rgba mix_colour(const std::vector<std::int32_t>& ranks) {
  if (ranks.empty()) return active().empty;
  // The average of the contributors, pulled towards grey a little so that a mix
  // never looks like one rank's pure colour.
  Rgba m{0, 0, 0, 1};
  for (auto r : ranks) {
    const Rgba k = rank_colour(r);
    m.r += k.r;
    m.g += k.g;
    m.b += k.b;
  }
  const float n = static_cast<float>(ranks.size());
  m.r = 0.8f * m.r / n + 0.1f;
  m.g = 0.8f * m.g / n + 0.1f;
  m.b = 0.8f * m.b / n + 0.1f;
  return m;
}

Rgba text_on(Rgba b) {
  const float luma = 0.299f * b.r + 0.587f * b.g + 0.114f * b.b;
  return luma > 0.55f ? Rgba{0.05f, 0.05f, 0.07f, 1} : Rgba{1, 1, 1, 1};
}

}  // namespace collscope::view
