// The numeric reference and the #wrong count (docs/ARCHITECTURE.md, "Verification"),
// like nccl-tests' check: outputs are recomputed from the inputs by each collective's
// numeric definition (its descriptor's `reference`, collective.h), never from its
// schedule nor from the postcondition the symbolic check uses, and compared element
// by element.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <thread>

#include "collscope/collective.h"
#include "collscope/elementwise.h"
#include "collscope/run.h"
#include "kernels/host_kernels.h"

namespace collscope {

namespace {

double epsilon(DType t) { return std::ldexp(1.0, 1 - precision_bits(t)); }

template <class T>
T load(const std::vector<std::uint8_t>& v, std::uint64_t i) {
  T x;
  std::memcpy(&x, v.data() + i * sizeof(T), sizeof(T));
  return x;
}
template <class T>
void store(std::vector<std::uint8_t>& v, std::uint64_t i, T x) {
  std::memcpy(v.data() + i * sizeof(T), &x, sizeof(T));
}

template <class T, OpKind K>
void fold_loop(T* __restrict acc, const T* __restrict v, std::uint64_t n) {
  for (std::uint64_t j = 0; j < n; ++j) acc[j] = combine<T>(K, acc[j], v[j]);
}

// acc[j] = acc[j] (op) v[j]: the reference's own loop (not the backends' kernels),
// on the element-wise arithmetic every part of collscope shares (elementwise.h).
template <class T>
void fold(OpKind k, T* acc, const T* v, std::uint64_t n) {
  switch (k) {
    case OpKind::sum:
      fold_loop<T, OpKind::sum>(acc, v, n);
      break;
    case OpKind::prod:
      fold_loop<T, OpKind::prod>(acc, v, n);
      break;
    case OpKind::min:
      fold_loop<T, OpKind::min>(acc, v, n);
      break;
    case OpKind::max:
      fold_loop<T, OpKind::max>(acc, v, n);
      break;
  }
}

// dst[d0, d0+n) takes the tolerances of src[s0, s0+n) (an empty vector: exact).
// Through memmove: dst and src may be one vector.
void carry_tolerance(std::vector<double>& dst, std::size_t dst_elems, std::uint64_t d0, const std::vector<double>& src,
                     std::uint64_t s0, std::uint64_t n) {
  if (src.empty()) {
    if (!dst.empty()) std::fill_n(dst.begin() + static_cast<std::ptrdiff_t>(d0), n, 0.0);
    return;
  }
  if (dst.empty()) dst.assign(dst_elems, 0.0);
  std::memmove(dst.data() + d0, src.data() + s0, n * sizeof(double));
}

// A collective's numeric definition (its descriptor's `reference`) carried out on the
// reference memory, in the dtype's own arithmetic, with a tolerance per element where
// floating inputs make the order of evaluation matter. Everything it knows about the
// collective comes from that definition; it never looks at the schedule, nor at the
// postcondition the symbolic check uses.
template <class T>
class HostDefinition final : public ReferenceBuilder {
 public:
  using Buffers = std::vector<std::vector<std::uint8_t>>;
  using Tolerances = std::vector<std::vector<double>>;

  HostDefinition(const Schedule& s, const CollArgs& a, Reference& ref)
      : a_(a),
        k_(kernels::op_kind(a.op)),
        floating_(is_floating(s.dtype)),
        limit_(std::ldexp(1.0, precision_bits(s.dtype))),
        eps_(epsilon(s.dtype)),
        out_(ref.want[static_cast<std::size_t>(a.out_buf)]),
        tol_out_(ref.tolerance[static_cast<std::size_t>(a.out_buf)]) {
    // Inputs as they were before the call: a copy only in place, which overwrites them.
    const auto in = static_cast<std::size_t>(a.in_buf);
    if (a.in_buf == a.out_buf) {
      before_copy_ = ref.want[in];
      tol_copy_ = ref.tolerance[in];
      before_ = &before_copy_;
      tol_before_ = &tol_copy_;
    } else {
      before_ = &ref.want[in];
      tol_before_ = &ref.tolerance[in];
    }
  }

  void copy(std::int32_t to, std::uint64_t at, std::int32_t from, std::uint64_t index, std::uint64_t n) override {
    if (!rank_ok(to) || !rank_ok(from)) return;
    auto& dst = out_[world(to)];
    const auto& src = (*before_)[world(from)];
    const std::uint64_t d0 = a_.out_offset(to) + at, s0 = a_.in_offset(from) + index;
    n = fit(fit(n, dst, d0), src, s0);
    if (n == 0) return;
    std::memcpy(dst.data() + d0 * sizeof(T), src.data() + s0 * sizeof(T), n * sizeof(T));
    carry_tolerance(tol_out_[world(to)], dst.size() / sizeof(T), d0, (*tol_before_)[world(from)], s0, n);
  }

  void same_as(std::int32_t to, std::uint64_t at, std::int32_t from, std::uint64_t from_at, std::uint64_t n) override {
    if (!rank_ok(to) || !rank_ok(from)) return;
    auto& dst = out_[world(to)];
    const auto& src = out_[world(from)];
    const std::uint64_t d0 = a_.out_offset(to) + at, s0 = a_.out_offset(from) + from_at;
    n = fit(fit(n, dst, d0), src, s0);
    if (n == 0) return;
    std::memmove(dst.data() + d0 * sizeof(T), src.data() + s0 * sizeof(T), n * sizeof(T));
    carry_tolerance(tol_out_[world(to)], dst.size() / sizeof(T), d0, tol_out_[world(from)], s0, n);
  }

  void reduce(std::int32_t to, std::uint64_t at, std::int32_t first, std::int32_t last, std::uint64_t index,
              std::uint64_t n) override {
    first = std::max(0, first);
    last = std::min(a_.ranks, last);
    if (!rank_ok(to) || first >= last) return;
    auto& dst = out_[world(to)];
    const std::uint64_t d0 = a_.out_offset(to) + at;
    n = fit(n, dst, d0);
    for (std::int32_t g = first; g < last; ++g) n = fit(n, (*before_)[world(g)], a_.in_offset(g) + index);
    if (n == 0) return;
    auto src = [&](std::int32_t g) {
      return reinterpret_cast<const T*>((*before_)[world(g)].data()) + a_.in_offset(g) + index;
    };
    // Folded in rank order, one rank's whole range at a time: ((in_first op in_first+1) op ...).
    T* d = reinterpret_cast<T*>(dst.data()) + d0;
    std::memcpy(d, src(first), n * sizeof(T));
    for (std::int32_t g = first + 1; g < last; ++g) fold<T>(k_, d, src(g), n);
    const auto folded = static_cast<std::uint32_t>(last - first);
    const bool avg = a_.op == ReduceOp::avg;
    if (avg)
      for (std::uint64_t j = 0; j < n; ++j) d[j] = divide<T>(d[j], folded);
    if (!floating_) return;

    // Tolerances, a cache-sized chunk at a time: a reduction of integers whose partial
    // results fit the mantissa is exact in any order; anything else may differ from a
    // schedule's order by about one rounding per contribution.
    auto& tol_out = tol_out_[world(to)];
    constexpr std::uint64_t kChunk = 1024;
    double mag[kChunk], prod_mag[kChunk], inherited[kChunk];
    bool integral[kChunk];
    for (std::uint64_t c0 = 0; c0 < n; c0 += kChunk) {
      const std::uint64_t m = std::min(kChunk, n - c0);
      std::fill_n(mag, m, 0.0);
      std::fill_n(prod_mag, m, 1.0);
      std::fill_n(inherited, m, 0.0);
      std::fill_n(integral, m, true);
      for (std::int32_t g = first; g < last; ++g) {
        const T* v = src(g) + c0;
        for (std::uint64_t j = 0; j < m; ++j) {
          const double x = to_double(v[j]);
          integral[j] = integral[j] && std::isfinite(x) && x == std::nearbyint(x);
          mag[j] += std::fabs(x);
          prod_mag[j] *= std::fabs(x);
        }
        const auto& tb = (*tol_before_)[world(g)];
        if (!tb.empty())
          for (std::uint64_t j = 0; j < m; ++j) inherited[j] += tb[a_.in_offset(g) + index + c0 + j];
      }
      for (std::uint64_t j = 0; j < m; ++j) {
        double tol = inherited[j];
        if (folded > 1 && (k_ == OpKind::sum || k_ == OpKind::prod)) {
          const double size = k_ == OpKind::sum ? mag[j] : prod_mag[j];
          const bool exact = integral[j] && size <= limit_ && inherited[j] == 0;
          if (!exact) tol += static_cast<double>(folded) * eps_ * size;
        }
        if (avg && tol > 0) tol = tol / folded + eps_ * std::fabs(to_double(d[c0 + j]));
        if (tol > 0 && tol_out.empty()) tol_out.assign(dst.size() / sizeof(T), 0.0);
        if (!tol_out.empty()) tol_out[d0 + c0 + j] = tol;
      }
    }
  }

 private:
  std::size_t world(std::int32_t g) const {
    return static_cast<std::size_t>(a_.world_rank.empty() ? g : a_.world_rank[static_cast<std::size_t>(g)]);
  }
  bool rank_ok(std::int32_t g) const { return g >= 0 && g < a_.ranks; }
  // n, cut to what fits in `v` from element `at` on: a definition that reaches past a
  // buffer is a mistake the comparison will show, never a write out of bounds.
  static std::uint64_t fit(std::uint64_t n, const std::vector<std::uint8_t>& v, std::uint64_t at) {
    const std::uint64_t size = v.size() / sizeof(T);
    return at >= size ? 0 : std::min(n, size - at);
  }

  const CollArgs& a_;
  OpKind k_;
  bool floating_;
  double limit_, eps_;
  Buffers& out_;
  Tolerances& tol_out_;
  const Buffers* before_ = nullptr;
  const Tolerances* tol_before_ = nullptr;
  Buffers before_copy_;
  Tolerances tol_copy_;
};

void reference_call(const Schedule& s, const Call& call, const CollectiveDescriptor& d, Reference& ref) {
  if (!d.moves_data) return;
  kernels::with_type(s.dtype, [&]<class T>() {
    HostDefinition<T> out(s, call.args, ref);
    d.reference(call.args, out);
  });
}

}  // namespace

HostMemory make_inputs(const Schedule& s, const InitFn& init) {
  HostMemory mem(s.buffers.size());
  const std::size_t e = size_of(s.dtype);
  // Pieces of at most a million elements; large inputs are filled by several threads.
  struct Piece {
    std::int32_t buf, rank;
    std::uint64_t begin, end;
  };
  constexpr std::uint64_t kPiece = 1u << 20;
  std::vector<Piece> pieces;
  for (std::size_t b = 0; b < s.buffers.size(); ++b) {
    mem[b].resize(static_cast<std::size_t>(s.ranks));
    if (s.buffers[b].scratch) continue;
    for (std::int32_t r = 0; r < s.ranks; ++r) {
      const std::uint64_t n = s.buffers[b].count[static_cast<std::size_t>(r)];
      mem[b][static_cast<std::size_t>(r)].resize(n * e);
      for (std::uint64_t i = 0; i < n; i += kPiece)
        pieces.push_back({static_cast<std::int32_t>(b), r, i, std::min(n, i + kPiece)});
    }
  }
  auto fill = [&](const Piece& p) {
    auto& v = mem[static_cast<std::size_t>(p.buf)][static_cast<std::size_t>(p.rank)];
    kernels::with_type(s.dtype, [&]<class T>() {
      for (std::uint64_t i = p.begin; i < p.end; ++i) store<T>(v, i, from_double<T>(init(p.buf, p.rank, i)));
    });
  };
  const std::size_t threads =
      std::min<std::size_t>({pieces.size(), std::max(1u, std::thread::hardware_concurrency()), 16});
  if (threads <= 1) {
    for (const Piece& p : pieces) fill(p);
    return mem;
  }
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t k; (k = next.fetch_add(1)) < pieces.size();) fill(pieces[k]);
  };
  std::vector<std::thread> pool;
  // Under a thread limit fewer helpers start (maybe none): this thread fills what is left.
  try {
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  } catch (const std::system_error&) {
  }
  work();
  for (auto& th : pool) th.join();
  return mem;
}

namespace {

// A program's own steps, replayed on the host one transfer at a time. Point-to-point
// programs have no definition other than their messages, so this is their reference;
// the backend's bytes are still checked against it independently of the backend.
// Tolerances travel with the data they describe.
void replay_call(const Schedule& s, const Call& call, Reference& ref) {
  const std::size_t e = size_of(s.dtype);
  const OpKind k = kernels::op_kind(call.args.op);
  // A step shared with the other parts of a split group also holds their transfers.
  std::vector<char> member(call.args.world_rank.empty() ? 0 : static_cast<std::size_t>(s.ranks), 0);
  for (const std::int32_t r : call.args.world_rank) member[static_cast<std::size_t>(r)] = 1;
  for (std::int32_t i = call.first_step; i < call.first_step + call.num_steps; ++i)
    for (const Transfer& t : s.steps[static_cast<std::size_t>(i)].transfers) {
      if (t.count == 0 || t.action == Action::compute) continue;
      if (!member.empty() && !s.steps[static_cast<std::size_t>(i)].shared.empty() &&
          !member[static_cast<std::size_t>(t.dst.rank)])
        continue;
      auto& dst = ref.want[static_cast<std::size_t>(t.dst.buf)][static_cast<std::size_t>(t.dst.rank)];
      auto& dtol = ref.tolerance[static_cast<std::size_t>(t.dst.buf)][static_cast<std::size_t>(t.dst.rank)];
      std::uint8_t* d = dst.data() + t.dst.offset * e;
      if (t.action == Action::scale) {
        kernels::scale_bytes(s.dtype, d, t.count, t.divisor);
        continue;
      }
      const auto& src = ref.want[static_cast<std::size_t>(t.src.buf)][static_cast<std::size_t>(t.src.rank)];
      const auto& stol = ref.tolerance[static_cast<std::size_t>(t.src.buf)][static_cast<std::size_t>(t.src.rank)];
      // Through a copy: the source and destination may be the same buffer.
      const std::vector<std::uint8_t> from(src.begin() + static_cast<std::ptrdiff_t>(t.src.offset * e),
                                           src.begin() + static_cast<std::ptrdiff_t>((t.src.offset + t.count) * e));
      const std::vector<double> from_tol =
          stol.empty() ? std::vector<double>{}
                       : std::vector<double>(stol.begin() + static_cast<std::ptrdiff_t>(t.src.offset),
                                             stol.begin() + static_cast<std::ptrdiff_t>(t.src.offset + t.count));
      if (t.action == Action::reduce_copy) {  // dst = aux op src: the aux first, as a copy
        const auto& aux = ref.want[static_cast<std::size_t>(t.aux.buf)][static_cast<std::size_t>(t.aux.rank)];
        const auto& atol = ref.tolerance[static_cast<std::size_t>(t.aux.buf)][static_cast<std::size_t>(t.aux.rank)];
        std::memmove(d, aux.data() + t.aux.offset * e, t.count * e);
        if (!atol.empty() || !dtol.empty()) {
          if (dtol.empty()) dtol.assign(dst.size() / e, 0.0);
          for (std::uint64_t j = 0; j < t.count; ++j)
            dtol[t.dst.offset + j] = atol.empty() ? 0.0 : atol[t.aux.offset + j];
        }
      }
      if (t.action == Action::copy) {
        if (!from.empty()) std::memcpy(d, from.data(), from.size());
      } else {
        kernels::reduce_bytes(s.dtype, k, d, from.data(), t.count);
      }
      if (from_tol.empty() && dtol.empty()) continue;
      if (dtol.empty()) dtol.assign(dst.size() / e, 0.0);
      for (std::uint64_t j = 0; j < t.count; ++j) {
        const double add = from_tol.empty() ? 0.0 : from_tol[j];
        dtol[t.dst.offset + j] = t.action == Action::copy ? add : dtol[t.dst.offset + j] + add;
      }
    }
}

}  // namespace

namespace {

Reference reference_of(const Schedule& s, const HostMemory& inputs, const CollectiveDescriptor* over) {
  Reference ref;
  ref.want = inputs;
  ref.tolerance.assign(s.buffers.size(), std::vector<std::vector<double>>(static_cast<std::size_t>(s.ranks)));
  // Scratch space starts as zeros in every backend; programs may read it back.
  for (std::size_t b = 0; b < s.buffers.size(); ++b)
    if (s.buffers[b].scratch)
      for (std::size_t r = 0; r < static_cast<std::size_t>(s.ranks); ++r)
        ref.want[b][r].assign(s.buffers[b].count[r] * size_of(s.dtype), 0);
  for (const auto& call : s.calls) {
    if (call.kind == CallKind::program) {
      replay_call(s, call, ref);
      continue;
    }
    const CollectiveDescriptor& d =
        over && over->coll == call.args.coll ? *over : collective_descriptor(call.args.coll);
    if (!call.custom) {
      reference_call(s, call, d, ref);
      continue;
    }
    // A collective the program wrote itself: its output comes from the collective's
    // definition; the workspace buffers it used hold whatever its steps left there.
    Reference def = ref;
    reference_call(s, call, d, def);
    replay_call(s, call, ref);
    const auto out = static_cast<std::size_t>(call.args.out_buf);
    if (call.args.out_buf >= 0) {
      ref.want[out] = std::move(def.want[out]);
      ref.tolerance[out] = std::move(def.tolerance[out]);
    }
  }
  return ref;
}

}  // namespace

Reference compute_reference(const Schedule& s, const HostMemory& inputs) { return reference_of(s, inputs, nullptr); }

Reference compute_reference(const Schedule& s, const HostMemory& inputs, const CollectiveDescriptor& d) {
  return reference_of(s, inputs, &d);
}

namespace {

std::int32_t last_writer(const Schedule& s, std::int32_t rank, std::int32_t buf, std::uint64_t index) {
  for (auto k = static_cast<std::int32_t>(s.steps.size()) - 1; k >= 0; --k)
    for (const auto& t : s.steps[static_cast<std::size_t>(k)].transfers)
      if (t.count && t.dst.rank == rank && t.dst.buf == buf && index >= t.dst.offset && index < t.dst.offset + t.count)
        return k;
  return -1;
}

}  // namespace

NumericReport compare_numeric(const Schedule& s, const HostMemory& got, const Reference& ref) {
  NumericReport rep;
  for (std::size_t b = 0; b < s.buffers.size(); ++b) {
    if (s.buffers[b].scratch) continue;
    for (std::size_t r = 0; r < static_cast<std::size_t>(s.ranks); ++r) {
      const auto& g = got[b][r];
      const auto& w = ref.want[b][r];
      const auto& tol = ref.tolerance[b][r];
      kernels::with_type(s.dtype, [&]<class T>() {
        const std::uint64_t n = w.size() / sizeof(T);
        rep.checked += n;
        // (memcmp on an empty buffer's null data() is undefined, even for 0 bytes.)
        if (g.size() == w.size() && (w.empty() || std::memcmp(g.data(), w.data(), w.size()) == 0)) return;
        for (std::uint64_t i = 0; i < n; ++i) {
          const double gv = i * sizeof(T) < g.size() ? to_double(load<T>(g, i)) : std::nan("");
          const double wv = to_double(load<T>(w, i));
          bool ok = gv == wv || (std::isnan(gv) && std::isnan(wv));
          if (!ok && !tol.empty()) ok = std::fabs(gv - wv) <= tol[i];
          if (ok) continue;
          if (rep.wrong == 0) {
            rep.rank = static_cast<std::int32_t>(r);
            rep.buf = static_cast<std::int32_t>(b);
            rep.buffer_name = s.buffers[b].name;
            rep.index = i;
            rep.expected = wv;
            rep.got = gv;
          }
          ++rep.wrong;
        }
      });
    }
  }
  if (rep.wrong) rep.last_step = last_writer(s, rep.rank, rep.buf, rep.index);
  return rep;
}

}  // namespace collscope

namespace collscope {

std::string NumericReport::message() const {
  if (wrong == 0) return "";
  auto num = [](double v) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", v);
    return std::string(text);
  };
  std::string m = std::to_string(wrong) + " of " + std::to_string(checked) + " elements wrong; first: rank " +
                  std::to_string(rank) + " " + buffer_name + "[" + std::to_string(index) + "] = " + num(got) +
                  ", expected " + num(expected);
  if (last_step >= 0) m += " (last written in step " + std::to_string(last_step) + ")";
  return m;
}

}  // namespace collscope
