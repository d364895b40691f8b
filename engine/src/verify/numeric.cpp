// The numeric reference and the #wrong count (DESIGN §4), like nccl-tests' check:
// outputs are recomputed from the inputs by each collective's definition, never
// from its schedule, and compared element by element.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <system_error>
#include <thread>
#include <tuple>

#include "collscope/elementwise.h"
#include "collscope/run.h"
#include "expect.h"
#include "kernels/host_kernels.h"

namespace collscope {

namespace {

// Bits of precision: integers up to 2^p are exact in this floating type.
int precision_bits(DType t) {
  switch (t) {
    case DType::float16: return 11;
    case DType::bfloat16: return 8;
    case DType::float32: return 24;
    case DType::float64: return 53;
    default: return 63;
  }
}

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

std::vector<std::int32_t> ranks_of(const std::vector<std::uint64_t>& bits) {
  std::vector<std::int32_t> out;
  for (std::size_t w = 0; w < bits.size(); ++w)
    for (std::uint64_t b = bits[w]; b; b &= b - 1)
      out.push_back(static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(b))));
  return out;
}

template <class T>
void reference_call(const Schedule& s, const Call& call, Reference& ref) {
  const CollArgs& a = call.args;
  if (a.coll == Collective::barrier) return;
  const OpKind k = kernels::op_kind(a.op);
  const bool floating = is_floating(s.dtype);
  const double limit = std::ldexp(1.0, precision_bits(s.dtype));
  const double eps = epsilon(s.dtype);
  // Inputs as they were before the call: a copy only in place, which overwrites them.
  const auto in = static_cast<std::size_t>(a.in_buf);
  const bool in_place = a.in_buf == a.out_buf;
  const auto before_copy = in_place ? ref.want[in] : std::vector<std::vector<std::uint8_t>>{};
  const auto tol_copy = in_place ? ref.tolerance[in] : std::vector<std::vector<double>>{};
  const auto& before = in_place ? before_copy : ref.want[in];
  const auto& tol_before = in_place ? tol_copy : ref.tolerance[in];
  ExpectedContents expect(s, a);
  // Ranks whose outputs follow the same rule (every rank of an all-reduce) get a copy
  // of the first one's values and tolerances instead of a second reduction.
  struct Done {
    std::int32_t rank;
    std::uint64_t at, run;
  };
  std::map<std::vector<std::tuple<std::int32_t, std::uint64_t, std::vector<std::uint64_t>>>, Done> done;
  for (std::int32_t g = 0; g < a.ranks; ++g) {
    const std::uint64_t n = expect.output_count(g);
    const std::int32_t r = expect.world(g);
    auto& out = ref.want[static_cast<std::size_t>(a.out_buf)][static_cast<std::size_t>(r)];
    auto& tol_out = ref.tolerance[static_cast<std::size_t>(a.out_buf)][static_cast<std::size_t>(r)];
    const std::uint64_t off = a.out_offset(g);
    std::uint64_t i = 0;
    while (i < n) {
      std::uint64_t run = 0;
      const auto terms = expect.at(g, i, run);
      run = std::min(run, n - i);
      std::vector<std::tuple<std::int32_t, std::uint64_t, std::vector<std::uint64_t>>> key;
      for (const auto& t : terms) key.emplace_back(t.buf, t.base, t.ranks);
      if (auto it = done.find(key); it != done.end() && it->second.run >= run) {
        const Done& d = it->second;
        const auto& from = ref.want[static_cast<std::size_t>(a.out_buf)][static_cast<std::size_t>(d.rank)];
        std::memmove(out.data() + (off + i) * sizeof(T), from.data() + d.at * sizeof(T), run * sizeof(T));
        const auto& tol_from = ref.tolerance[static_cast<std::size_t>(a.out_buf)][static_cast<std::size_t>(d.rank)];
        if (!tol_from.empty() && tol_out.empty()) tol_out.assign(out.size() / sizeof(T), 0.0);
        for (std::uint64_t j = 0; j < run && !tol_out.empty(); ++j)
          tol_out[off + i + j] = tol_from.empty() ? 0.0 : tol_from[d.at + j];
        i += run;
        continue;
      }
      done[key] = Done{r, off + i, run};
      std::vector<std::pair<std::int32_t, std::vector<std::int32_t>>> sources;  // (buf, ranks) per term
      for (const auto& t : terms) sources.push_back({t.buf, ranks_of(t.ranks)});
      for (std::uint64_t j = 0; j < run; ++j) {
        T acc{};
        bool first = true;
        bool integral = true;
        double mag = 0, inherited = 0, prod_mag = 1;
        std::uint64_t contributions = 0;
        for (std::size_t ti = 0; ti < terms.size(); ++ti) {
          const std::uint64_t idx = terms[ti].base + j;
          for (std::int32_t src : sources[ti].second) {
            const T v = load<T>(before[static_cast<std::size_t>(src)], idx);
            acc = first ? v : combine<T>(k, acc, v);
            first = false;
            ++contributions;
            if (floating) {
              const double d = to_double(v);
              integral = integral && std::isfinite(d) && d == std::nearbyint(d);
              mag += std::fabs(d);
              prod_mag *= std::fabs(d);
              const auto& tb = tol_before[static_cast<std::size_t>(src)];
              if (!tb.empty()) inherited += tb[idx];
            }
          }
        }
        if (a.op == ReduceOp::avg && is_reducing(a.coll)) acc = divide<T>(acc, static_cast<std::uint32_t>(a.ranks));
        store<T>(out, off + i + j, acc);
        if (!floating) continue;
        double tol = inherited;
        if (contributions > 1 && (k == OpKind::sum || k == OpKind::prod)) {
          const double m = k == OpKind::sum ? mag : prod_mag;
          const bool exact = integral && m <= limit && inherited == 0;
          if (!exact) tol += static_cast<double>(contributions) * eps * m;
        }
        if (a.op == ReduceOp::avg && tol > 0) tol = tol / a.ranks + eps * std::fabs(to_double(acc));
        if (tol > 0 && tol_out.empty()) tol_out.assign(out.size() / sizeof(T), 0.0);
        if (!tol_out.empty()) tol_out[off + i + j] = tol;
      }
      i += run;
    }
  }
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
  const std::size_t threads = std::min<std::size_t>({pieces.size(), std::max(1u, std::thread::hardware_concurrency()), 16});
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
  for (std::int32_t i = call.first_step; i < call.first_step + call.num_steps; ++i)
    for (const Transfer& t : s.steps[static_cast<std::size_t>(i)].transfers) {
      if (t.count == 0 || t.action == Action::compute) continue;
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
          for (std::uint64_t j = 0; j < t.count; ++j) dtol[t.dst.offset + j] = atol.empty() ? 0.0 : atol[t.aux.offset + j];
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

Reference compute_reference(const Schedule& s, const HostMemory& inputs) {
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
    if (!call.custom) {
      kernels::with_type(s.dtype, [&]<class T>() { reference_call<T>(s, call, ref); });
      continue;
    }
    // A collective the program wrote itself: its output comes from the collective's
    // definition; the workspace buffers it used hold whatever its steps left there.
    Reference def = ref;
    kernels::with_type(s.dtype, [&]<class T>() { reference_call<T>(s, call, def); });
    replay_call(s, call, ref);
    const auto out = static_cast<std::size_t>(call.args.out_buf);
    if (call.args.out_buf >= 0) {
      ref.want[out] = std::move(def.want[out]);
      ref.tolerance[out] = std::move(def.tolerance[out]);
    }
  }
  return ref;
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
