// An all-reduce on the rings an NCCL log shows: a custom body whose reduce-scatter and
// all-gather run every channel's chunk round that channel's ring.
#include <algorithm>

#include "import/readers.h"
#include "import/scenario_builder.h"

namespace collscope::job {

namespace {

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

}  // namespace

std::optional<json> ScenarioBuilder::channel_body(const JobCall& c, std::uint64_t n, const std::string& buf) {
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
}  // namespace collscope::job
