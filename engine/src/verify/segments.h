// The data structures of the symbolic state (verify/symbolic.cpp): contribution sets
// (Content), the segments of one (rank, buffer) (SegList), and reading and writing a
// slice of them (docs/ARCHITECTURE.md, "Verification").
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
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

namespace collscope::symbolic {

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
inline void read_slice(const SegList& m, std::uint64_t off, std::uint64_t count, std::vector<Piece>& out) {
  const std::uint64_t end = off + count;
  for (std::size_t i = m.first_ending_after(off); i < m.size() && m.segs[i].start < end; ++i) {
    const Seg& sg = m.segs[i];
    const std::uint64_t a = std::max(sg.start, off), b = std::min(sg.end, end);
    out.push_back({a - off, b - off, sg.content, sg.shift + (a - sg.start)});
  }
}

// Replaces [off, off+count) of `m` by `pieces` (moved from), written in `step`.
inline void write_slice(SegList& m, std::uint64_t off, std::uint64_t count, Piece* pieces, std::size_t npieces,
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

}  // namespace collscope::symbolic
