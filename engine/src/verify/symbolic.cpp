// Symbolic execution of a schedule on contribution sets (docs/ARCHITECTURE.md, "Verification").
//
// Instead of numbers, every element knows which inputs it holds. Elements that
// move together are kept together in segments: a segment [start, end) of one
// (rank, buffer) says "element p of me holds, for every term, input element
// term.base + shift + (p - start) of buffer term.buf on each rank in term.ranks".
// A copy shares the source's content (O(1)); a reduce merges two contents and is
// where double counting is caught. At the end of a call the collective's
// postcondition is checked segment by segment against the expected contents.
//
// Data structures, chosen so that a ring all-reduce over 1024 ranks (two million
// transfers, a million segments alive at once) is checked in well under a second:
//
//   SegList   the segments of one (rank, buffer), sorted, in one contiguous vector.
//             A std::map would do the same job, but each lookup follows ~log2(n)
//             pointers to nodes scattered over the heap, and with a million live
//             nodes every one of those is a cache miss. In a vector the segment we
//             look for can be found by guessing where it is (segments are often
//             equal-sized) and checking: one memory access instead of twenty.
//   pre-split Inserting into the middle of a vector moves its tail, so the state cuts
//             every buffer up front at all the offsets where the call's transfers
//             start or end their writes, and later writes never merge segments back.
//             After that, nearly every write replaces exactly one existing segment
//             in place: no insertion, no erasure. Cutting a segment in two changes
//             nothing that can be observed: both halves hold the same content, the
//             right one with its shift advanced.
//   Content   an immutable contribution set shared by every segment that holds it,
//             in one allocation, with a plain (non-atomic) reference count: the
//             checker runs on one thread, and copies only bump a counter. Copies of
//             data share contents, so only a reduce (or a scale) creates a new one.
#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "collscope/collective.h"
#include "collscope/verify.h"
#include "describe.h"
#include "expect.h"
#include "verify/radix_sort.h"

namespace collscope {

namespace {

// ---------------------------------------------------------------------------
// Contents

// One contribution set: a list of terms "element `base` of buffer `buf`, from every
// rank in a bitset", plus how many times an average division was applied. The terms
// and their bitsets live in the same allocation, right after the header:
//
//   [refs scaled nterms words] [buf base bits[0..words)] [buf base bits[0..words)] ...
//
// so reading a content (as every reduce does, twice) costs one trip to memory
// instead of one per nested vector.
struct Content {
  std::uint32_t refs;    // segments and pieces that hold it
  std::uint32_t scaled;  // how many times an average division was applied
  std::uint32_t nterms;
  std::uint32_t words;  // 64-bit words per rank bitset

  std::size_t stride() const { return 2 + words; }
  std::uint64_t* term(std::size_t i) { return reinterpret_cast<std::uint64_t*>(this + 1) + i * stride(); }
  const std::uint64_t* term(std::size_t i) const {
    return reinterpret_cast<const std::uint64_t*>(this + 1) + i * stride();
  }
  std::int32_t buf(std::size_t i) const { return static_cast<std::int32_t>(term(i)[0]); }
  std::uint64_t base(std::size_t i) const { return term(i)[1]; }
  std::uint64_t* ranks(std::size_t i) { return term(i) + 2; }
  const std::uint64_t* ranks(std::size_t i) const { return term(i) + 2; }

  // A content with room for `capacity` terms (nterms starts at 0).
  static Content* create(std::uint32_t capacity, std::uint32_t words) {
    const std::size_t bytes = sizeof(Content) + capacity * (2 + std::size_t{words}) * sizeof(std::uint64_t);
    return new (::operator new(bytes)) Content{0, 0, 0, words};
  }
  static void destroy(Content* c) { ::operator delete(c); }
  // A new content with the same terms and `scaled` (and no references yet).
  static Content* copy_of(const Content& c) {
    Content* n = create(c.nterms, c.words);
    n->scaled = c.scaled;
    for (std::uint32_t i = 0; i < c.nterms; ++i) n->add_term(c.buf(i), c.base(i), c.ranks(i));
    return n;
  }
  void add_term(std::int32_t b, std::uint64_t base_, const std::uint64_t* bits) {
    std::uint64_t* t = term(nterms++);
    t[0] = static_cast<std::uint64_t>(static_cast<std::uint32_t>(b));
    t[1] = base_;
    std::memcpy(t + 2, bits, words * sizeof(std::uint64_t));
  }
};
static_assert(sizeof(Content) % alignof(std::uint64_t) == 0);

// A counted reference to a Content; null = uninitialised scratch memory. Like a
// shared_ptr, but the counter is a plain integer: the checker runs on one thread.
class ContentRef {
 public:
  ContentRef() = default;
  explicit ContentRef(Content* c) : c_(c) {
    if (c_) ++c_->refs;
  }
  ContentRef(const ContentRef& o) : c_(o.c_) {
    if (c_) ++c_->refs;
  }
  ContentRef(ContentRef&& o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
  ContentRef& operator=(ContentRef o) noexcept {
    std::swap(c_, o.c_);
    return *this;
  }
  ~ContentRef() {
    if (c_ && --c_->refs == 0) Content::destroy(c_);
  }
  const Content* get() const { return c_; }
  const Content* operator->() const { return c_; }
  explicit operator bool() const { return c_ != nullptr; }

 private:
  Content* c_ = nullptr;
};

// ---------------------------------------------------------------------------
// Segments

// Elements [start, end) of one (rank, buffer): element p holds, for every term of
// `content`, input element term.base + shift + (p - start).
struct Seg {
  std::uint64_t start, end;
  ContentRef content;
  std::uint64_t shift;     // added to every term's base
  std::int32_t last_step;  // absolute step that last wrote it (-1: the call's input)
};

// The segments of one (rank, buffer), sorted and not overlapping (in a schedule that
// passed check_bounds they tile the whole buffer), in one contiguous vector.
struct SegList {
  std::vector<Seg> segs;
  // segs.front().start and segs.back().end, kept here too so that a lookup's guess
  // does not need to touch the ends of the vector.
  std::uint64_t lo = 0, hi = 0;

  std::size_t size() const { return segs.size(); }
  void bounds_changed() {
    lo = segs.empty() ? 0 : segs.front().start;
    hi = segs.empty() ? 0 : segs.back().end;
  }

  // The first segment that ends after `at`: the one containing `at` if any, else the
  // next one (size() when there is none).
  //
  // Segments are sorted, so their ends are too and a binary search would do. But an
  // algorithm usually cuts a buffer into equal chunks, so we first guess the index
  // by proportion, as one finds a word in a dictionary by opening it at about the
  // right page. A right guess costs one memory access instead of the ~log2(n) of a
  // binary search, each of which, over a million segments, is likely a cache miss.
  // A wrong guess is corrected by galloping (steps of 1, 2, 4, ...) from it and a
  // binary search over the last step.
  std::size_t first_ending_after(std::uint64_t at) const {
    const std::size_t n = segs.size();
    if (at >= hi) return n;  // also when empty
    std::size_t g = 0;
    if (at > lo)
      g = std::min(n - 1, static_cast<std::size_t>(static_cast<double>(at - lo) / static_cast<double>(hi - lo) *
                                                   static_cast<double>(n)));
    if (segs[g].start <= at && at < segs[g].end) return g;  // the usual case
    // Search. The answer is in [0, n) as segs[n-1].end = hi > at.
    auto ends_after = [at](const Seg& sg) { return sg.end > at; };
    if (ends_after(segs[0])) return 0;
    std::size_t lo_i, hi_i;  // segs[lo_i] ends at or before `at`, segs[hi_i] after: the answer is in (lo_i, hi_i]
    if (!ends_after(segs[g])) {
      lo_i = g, hi_i = g + 1;
      for (std::size_t step = 1; !ends_after(segs[hi_i]); step *= 2) lo_i = hi_i, hi_i = std::min(n - 1, hi_i + step);
    } else {
      hi_i = g, lo_i = g - 1;  // g > 0 as segs[0] does not end after `at`
      for (std::size_t step = 1; ends_after(segs[lo_i]); step *= 2) hi_i = lo_i, lo_i = lo_i > step ? lo_i - step : 0;
    }
    auto ends_before = [at](const Seg& sg) { return sg.end <= at; };
    const auto from = segs.begin() + static_cast<std::ptrdiff_t>(lo_i) + 1;
    const auto to = segs.begin() + static_cast<std::ptrdiff_t>(hi_i);
    return static_cast<std::size_t>(std::partition_point(from, to, ends_before) - segs.begin());
  }
  // The segment containing `at`, or null.
  const Seg* find(std::uint64_t at) const {
    const std::size_t i = first_ending_after(at);
    return i < size() && segs[i].start <= at ? &segs[i] : nullptr;
  }
};

// A run of elements of a slice being read or written.
struct Piece {
  std::uint64_t start, end;  // relative to the slice start
  ContentRef content;
  std::uint64_t shift;  // shift at the piece's first element
};

// Appends the pieces of [off, off+count) of `m` to `out`.
void read_slice(const SegList& m, std::uint64_t off, std::uint64_t count, std::vector<Piece>& out) {
  const std::uint64_t end = off + count;
  for (std::size_t i = m.first_ending_after(off); i < m.size() && m.segs[i].start < end; ++i) {
    const Seg& sg = m.segs[i];
    const std::uint64_t a = std::max(sg.start, off), b = std::min(sg.end, end);
    out.push_back({a - off, b - off, sg.content, sg.shift + (a - sg.start)});
  }
}

// Replaces [off, off+count) of `m` by `pieces` (moved from), written in `step`.
void write_slice(SegList& m, std::uint64_t off, std::uint64_t count, Piece* pieces, std::size_t npieces,
                 std::int32_t step) {
  const std::uint64_t end = off + count;
  const std::size_t a = m.first_ending_after(off);
  // Fast path, the common case thanks to pre-splitting: the slice is exactly one
  // existing segment and is written as one piece.
  if (npieces == 1 && a < m.size() && m.segs[a].start == off && m.segs[a].end == end && pieces[0].start == 0 &&
      pieces[0].end == count) {
    Seg& sg = m.segs[a];
    sg.content = std::move(pieces[0].content);
    sg.shift = pieces[0].shift;
    sg.last_step = step;
    return;
  }
  // General case: segments [a, b) overlap the slice. Keep the part of the first one
  // before the slice and the part of the last one after it, and put the pieces in
  // between, also cut wherever one of the old segments began or ended: that way a
  // buffer keeps every pre-split cut (its segments only ever get finer), and later
  // writes still find their slices already cut out.
  std::size_t b = a;
  while (b < m.size() && m.segs[b].start < end) ++b;
  std::vector<Seg> repl;
  repl.reserve(b - a + npieces + 2);
  if (a < b && m.segs[a].start < off) {
    const Seg& first = m.segs[a];
    repl.push_back({first.start, off, first.content, first.shift, first.last_step});
  }
  std::size_t k = a;  // the old segment at or after `at`
  for (std::size_t p = 0; p < npieces; ++p) {
    const std::uint64_t pstart = off + pieces[p].start, pend = off + pieces[p].end;
    for (std::uint64_t at = pstart; at < pend;) {
      while (k < b && m.segs[k].end <= at) ++k;
      std::uint64_t stop = pend;  // the next old cut after `at`, if it comes first
      if (k < b) stop = std::min(stop, m.segs[k].start > at ? m.segs[k].start : m.segs[k].end);
      repl.push_back({at, stop, pieces[p].content, pieces[p].shift + (at - pstart), step});
      at = stop;
    }
  }
  if (a < b && m.segs[b - 1].end > end) {
    const Seg& last = m.segs[b - 1];
    repl.push_back({end, last.end, last.content, last.shift + (end - last.start), last.last_step});
  }
  const auto first = m.segs.begin() + static_cast<std::ptrdiff_t>(a);
  if (repl.size() == b - a) {  // as many segments as before: overwrite in place
    std::move(repl.begin(), repl.end(), first);
    m.bounds_changed();
    return;
  }
  m.segs.erase(first, m.segs.begin() + static_cast<std::ptrdiff_t>(b));
  m.segs.insert(m.segs.begin() + static_cast<std::ptrdiff_t>(a), std::make_move_iterator(repl.begin()),
                std::make_move_iterator(repl.end()));
  m.bounds_changed();
}

}  // namespace

// In a whole-program state, the `scaled` of a content that the sets cannot follow (an
// input counted twice, data combined after an average) carries this bit.
constexpr std::uint32_t kInexact = 1u << 31;

struct SymbolicState::Impl {
  const Schedule& s;
  std::int32_t call;                 // -1: the whole program
  const CollectiveDescriptor* desc;  // whose postcondition the call must meet (null: the whole program)
  std::int32_t next;
  std::int32_t end;
  bool lenient = false;  // the whole program: mark double counts instead of failing
  // A call's state: its ranks. In a step it shares with the other parts of its split
  // group, the transfers into other ranks are theirs, not the call's.
  std::vector<char> member;
  bool foreign(const Step& st, const Transfer& x) const {
    return !st.shared.empty() && !member.empty() && !member[static_cast<std::size_t>(x.dst.rank)];
  }
  std::uint32_t words;
  std::vector<SegList> maps;                      // index rank * nbuf + buf
  std::vector<std::vector<std::uint64_t>> heard;  // barrier knowledge per rank

  // Scratch space reused by every step, so that applying a step allocates little.
  std::vector<Piece> src_pieces;       // what every transfer of the step reads
  std::vector<std::size_t> src_first;  // transfer t's pieces: [src_first[t], src_first[t + 1])
  std::vector<Piece> dst_pieces, result;

  Impl(const Schedule& sched, std::int32_t c, const CollectiveDescriptor* d, std::int32_t first, std::int32_t stop,
       bool whole)
      : s(sched), call(c), desc(d), next(first), end(stop), lenient(whole) {
    words = static_cast<std::uint32_t>((static_cast<std::size_t>(s.ranks) + 63) / 64);
    const std::size_t nbuf = s.buffers.size();
    maps.resize(static_cast<std::size_t>(s.ranks) * nbuf);
    if (c >= 0) {
      const auto& w = s.calls[static_cast<std::size_t>(c)].args.world_rank;
      member.assign(static_cast<std::size_t>(s.ranks), w.empty() ? 1 : 0);
      for (const std::int32_t r : w) member[static_cast<std::size_t>(r)] = 1;
    }

    // Pre-split: the offsets where the call's writes begin and end, per (rank, buffer).
    std::vector<std::size_t> first_cut;
    std::vector<std::uint64_t> cuts;
    collect_cuts(first_cut, cuts);
    std::vector<std::uint64_t> sort_tmp;

    std::vector<std::uint64_t> own(words, 0);
    for (std::int32_t r = 0; r < s.ranks; ++r)
      for (std::size_t b = 0; b < nbuf; ++b) {
        const std::uint64_t n = s.buffers[b].count[static_cast<std::size_t>(r)];
        if (n == 0) continue;
        ContentRef content;  // scratch starts uninitialised
        if (!s.buffers[b].scratch) {
          // "Element p holds rank r's own element p of this buffer."
          std::fill(own.begin(), own.end(), 0);
          own[static_cast<std::size_t>(r) / 64] |= 1ull << (r % 64);
          Content* ct = Content::create(1, words);
          ct->add_term(static_cast<std::int32_t>(b), 0, own.data());
          content = ContentRef(ct);
        }
        const std::size_t mi = map_index(r, static_cast<std::int32_t>(b));
        std::uint64_t* cb = cuts.data() + first_cut[mi];
        std::uint64_t* ce = cuts.data() + first_cut[mi + 1];
        radix_sort(cb, ce, sort_tmp);
        const std::uint64_t* ue = std::unique(cb, ce);
        // One segment from each cut to the next; all share the buffer's one content.
        SegList& m = maps[mi];
        m.segs.reserve(static_cast<std::size_t>(ue - cb) + 1);
        std::uint64_t start = 0;
        for (const std::uint64_t* it = cb; it != ue; ++it) {
          if (*it <= start || *it >= n) continue;
          m.segs.push_back({start, *it, content, start, -1});
          start = *it;
        }
        m.segs.push_back({start, n, content, start, -1});
        m.bounds_changed();
      }
    heard.assign(static_cast<std::size_t>(s.ranks), std::vector<std::uint64_t>(words, 0));
    for (std::int32_t r = 0; r < s.ranks; ++r)
      heard[static_cast<std::size_t>(r)][static_cast<std::size_t>(r) / 64] |= 1ull << (r % 64);
  }

  std::size_t map_index(std::int32_t rank, std::int32_t buf) const {
    return static_cast<std::size_t>(rank) * s.buffers.size() + static_cast<std::size_t>(buf);
  }

  // Where the call's writes begin and end, grouped by (rank, buffer): those of map
  // index mi are cuts[first_cut[mi] .. first_cut[mi + 1]), unsorted, with repeats.
  // Two passes (count, then fill) so the cuts go into one array of the right size.
  void collect_cuts(std::vector<std::size_t>& first_cut, std::vector<std::uint64_t>& cuts) const {
    auto for_each_write = [&](auto&& fn) {
      for (std::int32_t k = next; k < end; ++k)
        for (const Transfer& x : s.steps[static_cast<std::size_t>(k)].transfers)
          if (x.count != 0 && !foreign(s.steps[static_cast<std::size_t>(k)], x) && x.dst.rank >= 0 &&
              x.dst.rank < s.ranks && x.dst.buf >= 0 && static_cast<std::size_t>(x.dst.buf) < s.buffers.size())
            fn(map_index(x.dst.rank, x.dst.buf), x);
    };
    first_cut.assign(maps.size() + 1, 0);
    for_each_write([&](std::size_t mi, const Transfer&) { first_cut[mi + 1] += 2; });
    for (std::size_t i = 0; i < maps.size(); ++i) first_cut[i + 1] += first_cut[i];
    cuts.resize(first_cut.back());
    std::vector<std::size_t> fill(first_cut.begin(), first_cut.end() - 1);
    for_each_write([&](std::size_t mi, const Transfer& x) {
      cuts[fill[mi]++] = x.dst.offset;
      cuts[fill[mi]++] = x.dst.offset + x.count;
    });
  }

  // out = dst (+) src, each seen at its own shift; null (uninitialised scratch) if
  // either is. Returns false, and says why in `problem`, when an input would be
  // counted twice.
  bool merge(const ContentRef& dst, std::uint64_t dshift, const ContentRef& src, std::uint64_t sshift, ContentRef& out,
             std::string& problem) {
    if (!dst || !src) {
      out = ContentRef();
      return true;
    }
    bool inexact = false;
    if (dst->scaled || src->scaled) {
      problem = "combines data that was already divided for an average";
      if (!lenient) return false;
      inexact = true;
    }
    // A src term with the same buffer and element as a dst term folds into it; the
    // others are appended. Count them first, to allocate the content at its size.
    auto dst_match = [&](std::uint32_t i) {  // the dst term src term i folds into, or dst->nterms
      const std::uint64_t base = src->base(i) + sshift;
      std::uint32_t j = 0;
      while (j < dst->nterms && !(dst->buf(j) == src->buf(i) && dst->base(j) + dshift == base)) ++j;
      return j;
    };
    std::uint32_t nterms = dst->nterms;
    for (std::uint32_t i = 0; i < src->nterms; ++i)
      if (dst_match(i) == dst->nterms) ++nterms;
    Content* n = Content::create(nterms, words);
    ContentRef keep(n);  // frees it if we return an error
    for (std::uint32_t i = 0; i < dst->nterms; ++i) n->add_term(dst->buf(i), dst->base(i) + dshift, dst->ranks(i));
    for (std::uint32_t i = 0; i < src->nterms; ++i) {
      const std::int32_t tb = src->buf(i);
      const std::uint64_t base = src->base(i) + sshift;
      const std::uint64_t* bits = src->ranks(i);
      const std::uint32_t j = dst_match(i);
      if (j == dst->nterms) {
        n->add_term(tb, base, bits);
        continue;
      }
      std::uint64_t* into = n->ranks(j);
      for (std::size_t w = 0; w < words; ++w) {
        if (into[w] & bits[w]) {
          const int bit = __builtin_ctzll(into[w] & bits[w]);
          const auto who = static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(bit));
          problem = "would count rank " + std::to_string(who) + "'s " + s.buffers[static_cast<std::size_t>(tb)].name +
                    "[" + std::to_string(base) + "] twice";
          if (!lenient) return false;
          inexact = true;
        }
        into[w] |= bits[w];
      }
    }
    if (inexact) n->scaled |= kInexact;
    out = std::move(keep);
    return true;
  }

  Status apply(std::int32_t k) {
    const Step& st = s.steps[static_cast<std::size_t>(k)];
    const std::size_t nt = st.transfers.size();
    // Reads first (the conflict rule guarantees no transfer of this step sees another's write).
    src_pieces.clear();
    src_first.assign(nt + 1, 0);
    for (std::size_t t = 0; t < nt; ++t) {
      const auto& x = st.transfers[t];
      src_first[t] = src_pieces.size();
      if (x.count == 0 || foreign(st, x)) continue;
      read_slice(maps[map_index(x.src.rank, x.src.buf)], x.src.offset, x.count, src_pieces);
    }
    src_first[nt] = src_pieces.size();
    const bool has_signal =
        std::any_of(st.transfers.begin(), st.transfers.end(), [](const Transfer& x) { return is_signal(x); });
    const auto old_heard = has_signal ? heard : std::vector<std::vector<std::uint64_t>>{};
    for (std::size_t t = 0; t < nt; ++t) {
      const auto& x = st.transfers[t];
      if (x.action == Action::compute || foreign(st, x)) continue;  // work, not data; another part's
      if (x.count == 0) {
        for (std::size_t w = 0; w < words; ++w)
          heard[static_cast<std::size_t>(x.dst.rank)][w] |= old_heard[static_cast<std::size_t>(x.src.rank)][w];
        continue;
      }
      SegList& dm = maps[map_index(x.dst.rank, x.dst.buf)];
      Piece* sp = src_pieces.data() + src_first[t];
      const std::size_t nsp = src_first[t + 1] - src_first[t];
      if (x.action == Action::copy) {
        write_slice(dm, x.dst.offset, x.count, sp, nsp, k);
        continue;
      }
      // What the source is added to: the destination itself, or a reduce-copy's second
      // operand (read now: the conflict rule keeps this step's writes away from it).
      dst_pieces.clear();
      if (x.action == Action::reduce_copy)
        read_slice(maps[map_index(x.aux.rank, x.aux.buf)], x.aux.offset, x.count, dst_pieces);
      else read_slice(dm, x.dst.offset, x.count, dst_pieces);
      result.clear();
      if (x.action == Action::scale) {
        for (const auto& d : dst_pieces) {
          ContentRef n;
          if (d.content) {
            Content* c = Content::copy_of(*d.content.get());
            c->scaled += 1;
            n = ContentRef(c);
          }
          result.push_back({d.start, d.end, std::move(n), d.shift});
        }
        write_slice(dm, x.dst.offset, x.count, result.data(), result.size(), k);
        continue;
      }
      // reduce and reduce_copy: walk both piece lists together.
      std::size_t i = 0, j = 0;
      std::uint64_t pos = 0;
      const auto& dsts = dst_pieces;
      while (pos < x.count) {
        while (dsts[i].end <= pos) ++i;
        while (sp[j].end <= pos) ++j;
        const std::uint64_t stop = std::min(dsts[i].end, sp[j].end);
        ContentRef merged;
        std::string problem;
        if (!merge(dsts[i].content, dsts[i].shift + (pos - dsts[i].start), sp[j].content,
                   sp[j].shift + (pos - sp[j].start), merged, problem)) {
          return make_error("verify.double_count",
                            "step " + std::to_string(k) + " (" + st.phase + "), transfer " + std::to_string(t) + " (" +
                                describe_transfer(s, x) + "): adding into rank " + std::to_string(x.dst.rank) + " " +
                                s.buffers[static_cast<std::size_t>(x.dst.buf)].name + "[" +
                                std::to_string(x.dst.offset + pos) + "] " + problem,
                            "each input may reach a reduced element exactly once: check which ranks already hold it");
        }
        result.push_back({pos, stop, std::move(merged), 0});
        pos = stop;
      }
      write_slice(dm, x.dst.offset, x.count, result.data(), result.size(), k);
    }
    return ok_status();
  }

  // The terms element `index` of (rank, buf) holds, in the form the expectations use.
  std::vector<SymTerm> terms_at(std::int32_t rank, std::int32_t buf, std::uint64_t index, const Seg** seg) const {
    const Seg* sg = maps[map_index(rank, buf)].find(index);
    if (!sg) return {};
    *seg = sg;
    std::vector<SymTerm> out;
    if (!sg->content) return out;
    const Content& c = *sg->content.get();
    for (std::uint32_t i = 0; i < c.nterms; ++i)
      out.push_back({c.buf(i), c.base(i) + sg->shift + (index - sg->start),
                     std::vector<std::uint64_t>(c.ranks(i), c.ranks(i) + words)});
    return out;
  }

  Status postcondition();
};

SymbolicState::SymbolicState(const Schedule& s, std::int32_t call, const CollectiveDescriptor* descriptor)
    : impl_(new Impl(
          s, call, descriptor ? descriptor : &collective_descriptor(s.calls[static_cast<std::size_t>(call)].args.coll),
          s.calls[static_cast<std::size_t>(call)].first_step,
          s.calls[static_cast<std::size_t>(call)].first_step + s.calls[static_cast<std::size_t>(call)].num_steps,
          false)) {}
SymbolicState::SymbolicState(const Schedule& s, WholeProgram)
    : impl_(new Impl(s, -1, nullptr, 0, static_cast<std::int32_t>(s.steps.size()), true)) {}
SymbolicState::SymbolicState(const Schedule& s, Steps steps)
    : impl_(new Impl(s, -1, nullptr, steps.first, steps.end, true)) {}
SymbolicState::~SymbolicState() { delete impl_; }
Status SymbolicState::advance() {
  if (done()) return ok_status();
  return impl_->apply(impl_->next++);
}
std::int32_t SymbolicState::next_step() const { return impl_->next; }
bool SymbolicState::done() const { return impl_->next >= impl_->end; }
Status SymbolicState::check_postcondition() const { return impl_->call < 0 ? ok_status() : impl_->postcondition(); }

std::vector<HeldRun> SymbolicState::held(std::int32_t rank, std::int32_t buf, std::uint64_t offset,
                                         std::uint64_t count) const {
  std::vector<HeldRun> out;
  if (rank < 0 || rank >= impl_->s.ranks || buf < 0 || static_cast<std::size_t>(buf) >= impl_->s.buffers.size())
    return out;
  std::vector<Piece> pieces;
  read_slice(impl_->maps[impl_->map_index(rank, buf)], offset, count, pieces);
  for (const Piece& p : pieces) {
    HeldRun h;
    h.start = p.start;
    h.end = p.end;
    if (const Seg* sg = impl_->maps[impl_->map_index(rank, buf)].find(offset + p.start)) h.last_step = sg->last_step;
    if (!p.content) {
      h.initialised = false;
      out.push_back(std::move(h));
      continue;
    }
    const Content& c = *p.content.get();
    h.divisions = c.scaled & ~kInexact;
    h.exact = (c.scaled & kInexact) == 0;
    for (std::uint32_t i = 0; i < c.nterms; ++i) {
      Contribution t{c.buf(i), c.base(i) + p.shift, {}};
      for (std::uint32_t w = 0; w < c.words; ++w)
        for (std::uint64_t bits = c.ranks(i)[w]; bits; bits &= bits - 1)
          t.ranks.push_back(static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))));
      h.terms.push_back(std::move(t));
    }
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<Contribution> SymbolicState::contents(std::int32_t rank, std::int32_t buf, std::uint64_t index) const {
  const Seg* seg = nullptr;
  std::vector<Contribution> out;
  for (const auto& t : impl_->terms_at(rank, buf, index, &seg)) {
    Contribution c{t.buf, t.base, {}};
    for (std::size_t w = 0; w < t.ranks.size(); ++w)
      for (std::uint64_t bits = t.ranks[w]; bits; bits &= bits - 1)
        c.ranks.push_back(static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))));
    out.push_back(std::move(c));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Postconditions

namespace {

// True when the content, seen at `shift`, holds exactly the terms `want` (same
// buffers, bases and rank sets). A quick yes for the common case; on "no" the caller
// falls back to compare_terms, which also words the difference.
bool holds_exactly(const Content& c, std::uint64_t shift, const std::vector<SymTerm>& want, std::size_t words) {
  if (c.nterms != want.size()) return false;
  for (const SymTerm& w : want) {
    std::uint32_t i = 0;
    while (i < c.nterms && !(c.buf(i) == w.buf && c.base(i) + shift == w.base)) ++i;
    if (i == c.nterms || !std::equal(w.ranks.begin(), w.ranks.begin() + static_cast<std::ptrdiff_t>(words), c.ranks(i)))
      return false;
  }
  return true;
}

}  // namespace

Status SymbolicState::Impl::postcondition() {
  const Call& cl = s.calls[static_cast<std::size_t>(call)];
  const CollArgs& a = cl.args;
  const bool want_scaled = a.op == ReduceOp::avg && desc->reducing;

  if (desc->synchronizes) {
    for (std::int32_t g = 0; g < a.ranks; ++g) {
      const std::int32_t r = a.world_rank.empty() ? g : a.world_rank[static_cast<std::size_t>(g)];
      for (std::int32_t h = 0; h < a.ranks; ++h) {
        const std::int32_t q = a.world_rank.empty() ? h : a.world_rank[static_cast<std::size_t>(h)];
        if (!(heard[static_cast<std::size_t>(r)][static_cast<std::size_t>(q) / 64] >> (q % 64) & 1))
          return make_error("verify.missing_contribution",
                            "barrier: rank " + std::to_string(r) + " may leave before rank " + std::to_string(q) +
                                " has arrived (no chain of signals from " + std::to_string(q) + " to " +
                                std::to_string(r) + ")",
                            "every rank must hear, directly or through others, from every rank");
      }
    }
  }

  // Which elements of which (rank, buffer) are outputs of this call.
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> out_regions(maps.size());
  ExpectedContents expect(s, a, *desc);
  for (std::int32_t g = 0; g < a.ranks; ++g) {
    const std::uint64_t n = expect.output_count(g);
    if (n == 0) continue;
    const std::int32_t r = expect.world(g);
    const std::uint64_t off = a.out_offset(g);
    out_regions[map_index(r, a.out_buf)].push_back({off, off + n});
    const SegList& m = maps[map_index(r, a.out_buf)];
    // Walk the output range: expected runs against segments. An expectation holds
    // for `run` elements with its bases advancing by one per element, so it is
    // computed once per run and then advanced, not recomputed for every segment.
    std::vector<SymTerm> want;
    std::uint64_t want_at = 0, want_end = 0;  // want is the rule for element want_at; it holds until want_end
    std::uint64_t i = 0;
    while (i < n) {
      if (i >= want_end) {
        std::uint64_t run = 0;
        want = expect.at(g, i, run);
        want_end = i + run;
      } else {
        for (auto& t : want) t.base += i - want_at;
      }
      want_at = i;
      const Seg* seg = m.find(off + i);
      // The segment covers [.., seg_end); the expectation holds until want_end.
      const std::uint64_t seg_end = seg ? seg->end - off : n;
      const std::uint64_t stop = std::min({n, want_end, seg_end});
      auto where = [&] {
        return "rank " + std::to_string(r) + " " + s.buffers[static_cast<std::size_t>(a.out_buf)].name + "[" +
               std::to_string(off + i) + "]";
      };
      auto when = [&] {
        return seg && seg->last_step >= 0 ? " (last written in step " + std::to_string(seg->last_step) + ")"
                                          : std::string(" (never written by the call)");
      };
      if (seg && !seg->content) {
        return make_error("verify.missing_contribution", where() + " holds uninitialised scratch data" + when(),
                          "copy real data into scratch space before using it");
      }
      if (!(seg && holds_exactly(*seg->content.get(), seg->shift + (off + i - seg->start), want, words))) {
        const Seg* ignored = nullptr;
        std::string diff = compare_terms(s, terms_at(r, a.out_buf, off + i, &ignored), want, words);
        if (!diff.empty()) {
          const bool missing = diff.rfind("lacks", 0) == 0;
          return make_error(missing ? "verify.missing_contribution" : "verify.wrong_data",
                            where() + " " + diff + when(),
                            "the " + std::string(name_of(a.coll)) +
                                " postcondition does not hold: check the steps "
                                "that write this element");
        }
      }
      const std::uint32_t scaled = seg && seg->content ? seg->content->scaled : 0;
      if (scaled != (want_scaled ? 1u : 0u)) {
        return make_error("verify.wrong_data",
                          where() +
                              (scaled ? " was divided " + std::to_string(scaled) + " time(s)"
                                      : " was never divided to form the average") +
                              when(),
                          "an average divides the complete sum exactly once");
      }
      i = stop;
    }
  }

  // Every other element of a user buffer must still hold its own input (a program's
  // own collective may use its other buffers as workspace).
  for (std::int32_t r = 0; r < s.ranks; ++r)
    for (std::size_t b = 0; b < s.buffers.size(); ++b) {
      if (s.buffers[b].scratch) continue;
      if (cl.custom && static_cast<std::int32_t>(b) != a.in_buf && static_cast<std::int32_t>(b) != a.out_buf) continue;
      const SegList& m = maps[map_index(r, static_cast<std::int32_t>(b))];
      auto& regions = out_regions[map_index(r, static_cast<std::int32_t>(b))];
      std::sort(regions.begin(), regions.end());
      for (const Seg& seg : m.segs) {
        const std::uint64_t start = seg.start;
        if (seg.last_step < 0) continue;  // untouched
        // Check the parts of this segment outside the output regions.
        std::uint64_t p = start;
        while (p < seg.end) {
          bool inside = false;
          std::uint64_t upto = seg.end;
          for (const auto& [ra, rb] : regions) {
            if (p >= ra && p < rb) {
              inside = true;
              upto = std::min(upto, rb);
              break;
            }
            if (ra > p) upto = std::min(upto, ra);
          }
          if (!inside) {
            const Content* c = seg.content.get();
            const bool ok = c && c->scaled == 0 && c->nterms == 1 && c->buf(0) == static_cast<std::int32_t>(b) &&
                            c->base(0) + seg.shift == start &&
                            only_rank(std::vector<std::uint64_t>(c->ranks(0), c->ranks(0) + words), r);
            if (!ok)
              return make_error("verify.input_modified",
                                "rank " + std::to_string(r) + " " + s.buffers[b].name + "[" + std::to_string(p) +
                                    "] is not an output of " + std::string(name_of(a.coll)) + " but step " +
                                    std::to_string(seg.last_step) + " overwrote it",
                                "keep temporaries in scratch buffers; inputs must survive the call");
          }
          p = upto;
        }
      }
    }
  return ok_status();
}

namespace {

Status check_call(const Schedule& s, std::int32_t call, const CollectiveDescriptor* d) {
  SymbolicState state(s, call, d);
  while (!state.done()) {
    auto st = state.advance();
    if (!st) return st;
  }
  return state.check_postcondition();
}

Status check_schedule(const Schedule& s, const CollectiveDescriptor* d) {
  if (auto st = check_bounds(s); !st) return st;
  if (auto st = check_conflicts(s); !st) return st;
  // Point-to-point runs have no postcondition: the matcher checked their messages.
  // A native call (NCCL's own collective) cannot be seen inside; the numeric check judges it.
  for (std::size_t c = 0; c < s.calls.size(); ++c)
    if (s.calls[c].kind == CallKind::collective && s.calls[c].num_steps > 0 &&
        !s.steps[static_cast<std::size_t>(s.calls[c].first_step)].native) {
      const bool replaced = d && d->coll == s.calls[c].args.coll;
      if (auto st = check_call(s, static_cast<std::int32_t>(c), replaced ? d : nullptr); !st) return st;
    }
  if (!s.expect.empty()) return check_expectations_symbolic(s);
  return ok_status();
}

}  // namespace

Status verify_call_symbolic(const Schedule& s, std::int32_t call) { return check_call(s, call, nullptr); }

Status verify_symbolic(const Schedule& s) { return check_schedule(s, nullptr); }

Status verify_symbolic(const Schedule& s, const CollectiveDescriptor& d) { return check_schedule(s, &d); }

}  // namespace collscope
