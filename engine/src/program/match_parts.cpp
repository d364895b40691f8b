// The parts of one call on a split group, side by side (matcher.h).
//
// A collective on a split group ("group": "tp" with "split": "rank / 4") is one call
// per part, each on its own ranks. In a real job every part runs at the same time,
// and so they do here: each part is lowered on its own, exactly as if it were alone,
// and then step k of every part becomes one step of the schedule.
//
//   one part after the other              side by side
//   step 0  {0-3}: step 1 of 2            step 0  tp groups {0-3} and {4-7}: step 1 of 2
//   step 1  {0-3}: step 2 of 2            step 1  tp groups {0-3} and {4-7}: step 2 of 2
//   step 2  {4-7}: step 1 of 2
//   step 3  {4-7}: step 2 of 2
//
// A part with fewer steps simply ends earlier. Nothing a part computes changes: its
// transfers keep their order and touch only its own ranks, and since the parts' ranks
// are disjoint no two transfers of a shared step can conflict. Only step and transfer
// numbers move, and the parts' calls and op records are renumbered with them.
#include <algorithm>
#include <iterator>
#include <map>

#include "program/matcher.h"

namespace collscope::program::matching {

namespace {

// The parts of one call are the syncs of one program entry with the same loop variables.
std::string instance_key(const Sync& sy) {
  std::string key = sy.pointer;
  for (const auto& [name, value] : sy.env) key += "#" + std::to_string(value);
  return key;
}

bool is_part(const Sync& sy) { return sy.part >= 0 && sy.op->coll.has_value(); }

// "tp groups {0-3} and {4-7}"; "tp group {4-7}"; beyond four parts the first two and the
// last: "dp groups {0,8}, {1,9}, ... and {7,15} (8 groups)".
std::string groups_text(const std::string& group, const std::vector<std::string>& sets) {
  std::string out = group + (sets.size() == 1 ? " group " : " groups ");
  if (sets.size() > 4)
    return out + sets[0] + ", " + sets[1] + ", ... and " + sets.back() + " (" + std::to_string(sets.size()) +
           " groups)";
  for (std::size_t i = 0; i < sets.size(); ++i) out += (i == 0 ? "" : i + 1 == sets.size() ? " and " : ", ") + sets[i];
  return out;
}

}  // namespace

// Lowers the syncs every member has reached, in index order (a set, not a scan of
// every sync: a program may hold millions of them); the parts of one split group's
// call that are ready together go side by side. True when there were any.
Result<bool> Matcher::emit_complete() {
  const std::set<std::int32_t> complete = std::move(complete_);
  complete_.clear();
  std::map<std::string, std::vector<std::int32_t>> parts;  // instance -> its ready parts, in order
  for (const std::int32_t y : complete)
    if (const Sync& sy = x_.syncs[static_cast<std::size_t>(y)]; is_part(sy)) parts[instance_key(sy)].push_back(y);
  for (const std::int32_t y : complete) {
    const Sync& sy = x_.syncs[static_cast<std::size_t>(y)];
    if (is_part(sy)) {
      auto it = parts.find(instance_key(sy));
      if (it == parts.end()) continue;  // lowered with the first of its parts
      const std::vector<std::int32_t> together = std::move(it->second);
      parts.erase(it);
      if (together.size() > 1) {
        if (auto st = emit_parts(together); !st) return st.error();
        continue;
      }
    }
    if (auto st = emit_sync(y); !st) return st.error();
    if (auto st = check_size(sy_where(sy)); !st) return st.error();
  }
  return !complete.empty();
}

// Lowers every part as if it were alone, one after the other, then folds them together.
Status Matcher::emit_parts(const std::vector<std::int32_t>& syncs) {
  const std::int32_t base = step_now();
  std::vector<PartSteps> parts;
  for (const std::int32_t y : syncs) {
    PartSteps p;
    p.sync = y;
    p.begin = step_now();
    p.first_record = s_.ops.size();
    p.first_call = s_.calls.size();
    if (auto st = emit_sync(y); !st) return st;
    if (auto st = check_size(sy_where(x_.syncs[static_cast<std::size_t>(y)])); !st) return st;
    p.end = step_now();
    p.end_record = s_.ops.size();
    p.end_call = s_.calls.size();
    parts.push_back(p);
  }
  fold_parts(base, parts);
  counted_steps_ = s_.steps.size();  // every transfer is still counted, now in fewer steps
  return ok_status();
}

// Step k of every part becomes step base + k; the parts' calls and records follow.
void Matcher::fold_parts(std::int32_t base, const std::vector<PartSteps>& parts) {
  std::int32_t longest = 0;
  for (const PartSteps& p : parts) longest = std::max(longest, p.end - p.begin);
  std::vector<Step> old(std::make_move_iterator(s_.steps.begin() + base), std::make_move_iterator(s_.steps.end()));
  s_.steps.resize(static_cast<std::size_t>(base));
  std::vector<Step> merged(static_cast<std::size_t>(longest));
  std::vector<std::vector<std::uint32_t>> offset(parts.size());  // per part and step: its first transfer there
  for (std::size_t k = 0; k < merged.size(); ++k) {
    Step& to = merged[k];
    std::vector<std::size_t> present;  // the parts in this step
    std::vector<Words> words;          // and what each part's own step said
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const PartSteps& p = parts[i];
      if (static_cast<std::int32_t>(k) >= p.end - p.begin) continue;
      Step& from = old[static_cast<std::size_t>(p.begin - base) + k];
      offset[i].push_back(static_cast<std::uint32_t>(to.transfers.size()));
      if (present.empty()) {
        to.call = from.call;
        to.native = from.native;
        to.library = from.library;
      } else if (from.call != to.call && std::find(to.shared.begin(), to.shared.end(), from.call) == to.shared.end()) {
        to.shared.push_back(from.call);
      }
      to.transfers.insert(to.transfers.end(), std::make_move_iterator(from.transfers.begin()),
                          std::make_move_iterator(from.transfers.end()));
      words.push_back({std::move(from.caption), std::move(from.phase)});
      present.push_back(i);
    }
    describe_shared(parts, present, words, to);
  }
  for (Step& st : merged) s_.steps.push_back(std::move(st));

  for (std::size_t i = 0; i < parts.size(); ++i) {
    const PartSteps& p = parts[i];
    auto step = [&](std::int32_t k) {
      if (k < p.begin) return k;  // -1 (none), or a step before the parts
      return base + std::min(k - p.begin, longest);
    };
    auto renumber = [&](OpRecord& r) {
      r.first_step = step(r.first_step);
      r.last_step = step(r.last_step);
      for (auto& [k, t] : r.transfers)
        if (k >= p.begin && k < p.end) {
          t += static_cast<std::int32_t>(offset[i][static_cast<std::size_t>(k - p.begin)]);
          k = base + (k - p.begin);
        }
    };
    for (std::size_t c = p.first_call; c < p.end_call; ++c) s_.calls[c].first_step = step(s_.calls[c].first_step);
    for (const std::int32_t rec : arrivals_[static_cast<std::size_t>(p.sync)])
      renumber(s_.ops[static_cast<std::size_t>(rec)]);
    for (std::size_t rec = p.first_record; rec < p.end_record; ++rec) renumber(s_.ops[rec]);
  }
}

// The caption of a shared step names its parts: "tp groups {0-3} and {4-7}: ..." when
// they do the same, else each group of parts with its own words.
void Matcher::describe_shared(const std::vector<PartSteps>& parts, const std::vector<std::size_t>& present,
                              const std::vector<Words>& words, Step& to) const {
  const Sync& first = x_.syncs[static_cast<std::size_t>(parts.front().sync)];
  const ProgramOp& op = *first.op;
  // Inside a custom algorithm each part's captions already say "reduce_scatter on node: ".
  const std::string inner = op.op + (op.group.empty() ? std::string() : " on " + op.group) + ": ";
  const bool fixed = t_.fixed_call >= 0;
  const std::string head = fixed ? op.op + " on " : std::string();
  std::vector<std::pair<std::string, std::vector<std::string>>> clusters;  // caption -> its parts' rank sets
  for (std::size_t j = 0; j < present.size(); ++j) {
    const Sync& sy = x_.syncs[static_cast<std::size_t>(parts[present[j]].sync)];
    std::string caption = words[j].caption;
    if (fixed && caption.rfind(inner, 0) == 0) caption.erase(0, inner.size());
    auto it = std::find_if(clusters.begin(), clusters.end(), [&](const auto& c) { return c.first == caption; });
    if (it == clusters.end()) it = clusters.insert(clusters.end(), {caption, {}});
    it->second.push_back(rank_set_text(sy.members));
  }
  std::string text;
  for (std::size_t c = 0; c < clusters.size() && c < 4; ++c)
    text += (c ? "; " : "") + head + groups_text(first.group, clusters[c].second) + ": " + clusters[c].first;
  if (clusters.size() > 4) text += "; and " + std::to_string(clusters.size() - 4) + " more";
  to.caption = std::move(text);
  std::vector<std::string> seen;
  for (const Words& w : words)
    if (std::find(seen.begin(), seen.end(), w.phase) == seen.end()) seen.push_back(w.phase);
  to.phase.clear();
  for (std::size_t j = 0; j < seen.size(); ++j) to.phase += (j ? " / " : "") + seen[j];
}

}  // namespace collscope::program::matching
