// The collective descriptors (collective.h): complete, consistent with each other, and
// the two verifiers built on them independent, so that a mistake in a postcondition is
// still caught by the numeric check and a mistake in a numeric definition by the
// symbolic one.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "collscope/run.h"
#include "collscope/verify.h"
#include "hand_schedules.h"

using namespace collscope;

namespace {

bool has_arg(const MpiCall& m, MpiArg a) { return std::find(m.args.begin(), m.args.end(), a) != m.args.end(); }

// One call of `c` with its buffers and no steps: the numeric reference needs no more.
struct Case {
  Collective coll;
  std::int32_t ranks;
  std::uint64_t count;
  std::int32_t root;
  bool in_place;
  std::vector<std::int32_t> members;  // empty: the whole world
  std::int32_t world;
};

std::string describe(const Case& c) {
  return std::string(name_of(c.coll)) + " ranks=" + std::to_string(c.ranks) + " count=" + std::to_string(c.count) +
         " root=" + std::to_string(c.root) + (c.in_place ? " in place" : " out of place") +
         (c.members.empty() ? "" : " on a group of a world of " + std::to_string(c.world));
}

Schedule one_call(const Case& c) {
  Schedule s;
  s.ranks = c.world;
  s.dtype = DType::int64;
  CollArgs a;
  a.coll = c.coll;
  a.ranks = c.ranks;
  a.count = c.count;
  a.root = c.root;
  a.dtype = DType::int64;
  a.in_buf = 0;
  a.out_buf = c.in_place ? 0 : 1;
  a.in_place = c.in_place;
  a.world_rank = c.members;
  BufferDecl in{"in", std::vector<std::uint64_t>(static_cast<std::size_t>(c.world), 0), false};
  BufferDecl out{"out", std::vector<std::uint64_t>(static_cast<std::size_t>(c.world), 0), false};
  for (std::int32_t g = 0; g < c.ranks; ++g) {
    const auto w = static_cast<std::size_t>(c.members.empty() ? g : c.members[static_cast<std::size_t>(g)]);
    const CollectiveShape sh = shape_of(a, g);
    // One element of slack on every buffer: the definition must leave it alone.
    if (c.in_place) {
      in.count[w] = std::max(a.in_offset(g) + sh.in_count, a.out_offset(g) + sh.out_count) + 1;
    } else {
      in.count[w] = sh.in_count + 1;
      out.count[w] = sh.out_count + 1;
    }
  }
  s.buffers.push_back(in);
  if (!c.in_place) s.buffers.push_back(out);
  Call call;
  call.args = a;
  call.algorithm = "none";
  s.calls.push_back(call);
  return s;
}

std::int64_t value(const HostMemory& m, std::int32_t buf, std::int32_t rank, std::uint64_t i) {
  std::int64_t v;
  std::memcpy(&v, m[static_cast<std::size_t>(buf)][static_cast<std::size_t>(rank)].data() + i * sizeof v, sizeof v);
  return v;
}

}  // namespace

TEST_CASE("collectives: every collective has a complete descriptor, found under its own name") {
  for (Collective c : kAllCollectives) {
    const CollectiveDescriptor& d = collective_descriptor(c);
    INFO(name_of(c));
    CHECK(d.coll == c);
    CHECK(!d.name.empty());
    CHECK(parse_collective(d.name) == c);
    CHECK(!d.definition.empty());
    CHECK((d.shape != nullptr));
    CHECK((d.in_place_input != nullptr));
    CHECK((d.in_place_output != nullptr));
    CHECK((d.message_count != nullptr));
    CHECK((d.bus_factor != nullptr));
    CHECK((d.postcondition != nullptr));
    CHECK((d.reference != nullptr));
    // A collective with data runs in one of the two layouts and says what its count counts.
    CHECK(d.moves_data == (d.in_place || d.out_of_place));
    CHECK(d.moves_data == (d.count_of != CountOf::none));
    CHECK(is_reducing(c) == d.reducing);
    CHECK(has_root(c) == d.rooted);
    // The native calls: an NCCL form exactly when there is a function; an MPI call for
    // every collective, with the arguments its kind needs.
    CHECK(d.nccl.function.empty() == (d.nccl.form == NcclForm::none));
    CHECK(has_native(c) == !d.nccl.function.empty());
    if (!d.nccl.function.empty()) {
      CHECK(d.nccl.function.substr(0, 4) == "nccl");
      const bool reducing_form = d.nccl.form == NcclForm::reducing || d.nccl.form == NcclForm::rooted_reducing;
      const bool rooted_form = d.nccl.form == NcclForm::rooted || d.nccl.form == NcclForm::rooted_reducing;
      CHECK(reducing_form == d.reducing);
      CHECK(rooted_form == d.rooted);
    }
    CHECK(mpi_call(c).function.substr(0, 4) == "MPI_");
    CHECK(has_arg(d.mpi, MpiArg::comm));
    CHECK(has_arg(d.mpi, MpiArg::op) == d.reducing);
    CHECK(has_arg(d.mpi, MpiArg::root) == d.rooted);
    // A per-peer collective passes its counts per peer instead of one count.
    CHECK((has_arg(d.mpi, MpiArg::count) || has_arg(d.mpi, MpiArg::send_counts)) == d.moves_data);
    CHECK(has_arg(d.mpi, MpiArg::send_counts) == d.per_peer);
    CHECK(has_arg(d.mpi, MpiArg::recv_displs) == d.per_peer);
    CHECK(has_arg(d.mpi, MpiArg::datatype) == d.moves_data);
    CHECK((d.mpi.in_place == MpiInPlace::unsupported) == !d.in_place);
  }
  // The MPI functions a backend would call, as the MPI standard names them.
  CHECK(mpi_call(Collective::allreduce).function == "MPI_Allreduce");
  CHECK(mpi_call(Collective::reduce_scatter).function == "MPI_Reduce_scatter_block");
  CHECK(mpi_call(Collective::alltoall).function == "MPI_Alltoall");
  CHECK(mpi_call(Collective::broadcast).function == "MPI_Bcast");
  CHECK(mpi_call(Collective::barrier).args.size() == 1);
  CHECK(mpi_call(Collective::scatter).args.size() == 8);  // sendbuf, sendcount, sendtype, recvbuf, ... root, comm
}

TEST_CASE("collectives: bus factors and message sizes follow nccl-tests") {
  for (std::int32_t n : {1, 2, 3, 8}) {
    const double all_but_one = n > 1 ? static_cast<double>(n - 1) / n : 0.0;
    CHECK(bus_factor(Collective::allreduce, n) == doctest::Approx(2 * all_but_one));
    CHECK(bus_factor(Collective::allgather, n) == doctest::Approx(all_but_one));
    CHECK(bus_factor(Collective::reduce_scatter, n) == doctest::Approx(all_but_one));
    CHECK(bus_factor(Collective::alltoall, n) == doctest::Approx(all_but_one));
    CHECK(bus_factor(Collective::broadcast, n) == 1.0);
    // GatherGetBw and ScatterGetBw: (n-1)/n, the root's own block never crossing a link.
    CHECK(bus_factor(Collective::gather, n) == doctest::Approx(all_but_one));
    CHECK(bus_factor(Collective::scatter, n) == doctest::Approx(all_but_one));
    // nccl-tests' size: the larger of one rank's send and receive buffer.
    for (Collective c : kAllCollectives) {
      std::uint64_t largest = 0;
      for (std::int32_t r = 0; r < n; ++r) {
        const auto sh = shape_of(c, n, r, 0, 5);
        largest = std::max({largest, sh.in_count, sh.out_count});
      }
      INFO(name_of(c) << " on " << n << " ranks");
      CHECK(message_bytes(c, n, 5, DType::float32) == largest * 4);
    }
  }
}

TEST_CASE("collectives: the postcondition and the numeric definition of every collective say the same thing") {
  // Two statements of each collective, written separately: the symbolic postcondition
  // (which input elements an output holds) and the numeric definition (the values).
  // Here the first is evaluated on numbers and compared with the second, over ranks,
  // counts, roots, both layouts and groups of a larger world.
  std::vector<Case> cases;
  for (Collective c : kAllCollectives) {
    const CollectiveDescriptor& d = collective_descriptor(c);
    if (!d.moves_data) continue;
    for (std::int32_t n : {1, 2, 3, 5})
      for (std::uint64_t count : {0u, 1u, 4u})
        for (std::int32_t root : d.rooted ? std::vector<std::int32_t>{0, n - 1, n / 2} : std::vector<std::int32_t>{0})
          for (bool in_place : {false, true}) {
            if (in_place ? !d.in_place : !d.out_of_place) continue;
            cases.push_back({c, n, count, root, in_place, {}, n});
            std::vector<std::int32_t> members;  // every other rank of a larger world, backwards
            for (std::int32_t g = 0; g < n; ++g) members.push_back(2 * (n - 1 - g) + 1);
            cases.push_back({c, n, count, root, in_place, members, 2 * n + 1});
          }
  }
  for (const Case& c : cases) {
    INFO(describe(c));
    const Schedule s = one_call(c);
    const CollArgs& a = s.calls[0].args;
    const CollectiveDescriptor& d = collective_descriptor(c.coll);
    // Every input element distinct, so that a value names where it came from.
    const HostMemory inputs = make_inputs(s, [](std::int32_t b, std::int32_t r, std::uint64_t i) {
      return static_cast<double>((b + 1) * 1000000 + (r + 1) * 1000 + static_cast<std::int64_t>(i));
    });
    const Reference ref = compute_reference(s, inputs);
    auto world = [&](std::int32_t g) { return c.members.empty() ? g : c.members[static_cast<std::size_t>(g)]; };

    std::vector<std::vector<bool>> is_output(static_cast<std::size_t>(c.world));
    for (std::int32_t w = 0; w < c.world; ++w)
      is_output[static_cast<std::size_t>(w)].assign(
          s.buffers[static_cast<std::size_t>(a.out_buf)].count[static_cast<std::size_t>(w)], false);
    for (std::int32_t g = 0; g < c.ranks; ++g) {
      const std::uint64_t n = shape_of(a, g).out_count;
      ExpectedElement prev{};
      for (std::uint64_t i = 0; i < n; ++i) {
        const ExpectedElement e = d.postcondition(a, g, i);
        REQUIRE(e.run >= 1);
        CHECK(i + e.run <= n);  // a rule never reaches past the output
        REQUIRE(e.first >= 0);
        REQUIRE(e.last <= c.ranks);
        REQUIRE(e.first < e.last);    // every output element holds something
        if (i > 0 && prev.run > 1) {  // the previous rule said it holds here too, one index on
          CHECK(e.first == prev.first);
          CHECK(e.last == prev.last);
          CHECK(e.index == prev.index + 1);
        }
        std::int64_t want = 0;
        for (std::int32_t src = e.first; src < e.last; ++src)
          want += value(inputs, a.in_buf, world(src), a.in_offset(src) + e.index);
        const std::uint64_t at = a.out_offset(g) + i;
        CHECK_MESSAGE(value(ref.want, a.out_buf, world(g), at) == want, "rank " << g << " output " << i);
        is_output[static_cast<std::size_t>(world(g))][at] = true;
        prev = e;
      }
    }
    // What is not an output keeps its input, the slack included.
    for (std::size_t b = 0; b < s.buffers.size(); ++b)
      for (std::int32_t w = 0; w < c.world; ++w)
        for (std::uint64_t i = 0; i < s.buffers[b].count[static_cast<std::size_t>(w)]; ++i) {
          if (static_cast<std::int32_t>(b) == a.out_buf && is_output[static_cast<std::size_t>(w)][i]) continue;
          CHECK(value(ref.want, static_cast<std::int32_t>(b), w, i) ==
                value(inputs, static_cast<std::int32_t>(b), w, i));
        }
    // Integers: the reference is exact.
    for (const auto& per_buf : ref.tolerance)
      for (const auto& t : per_buf) CHECK(t.empty());
  }
}

namespace {

// All-to-all on three ranks, written by hand. Right: block d of rank s goes to rank d
// as block s. Wrong, a classic slip: rank d's block s gets block s of rank s (the
// sender's own block instead of the receiver's), so every rank ends up with the
// diagonal.
Schedule hand_alltoall(bool wrong) {
  constexpr std::int32_t n = 3;
  constexpr std::uint64_t c = 2;
  Schedule s;
  s.ranks = n;
  s.dtype = DType::float32;
  s.buffers.push_back({"send", {n * c, n * c, n * c}, false});
  s.buffers.push_back({"recv", {n * c, n * c, n * c}, false});
  Call call;
  call.args.coll = Collective::alltoall;
  call.args.ranks = n;
  call.args.count = c;
  call.args.in_buf = 0;
  call.args.out_buf = 1;
  call.algorithm = "by hand";
  s.calls.push_back(call);
  std::vector<Transfer> ts;
  for (std::int32_t src = 0; src < n; ++src)
    for (std::int32_t dst = 0; dst < n; ++dst)
      ts.push_back(testing::copy(src, 0, (wrong ? src : dst) * c, dst, 1, static_cast<std::uint64_t>(src) * c, c));
  testing::add_step(s, ts);
  return s;
}

// The same slip, made in a descriptor instead of a schedule.
ExpectedElement diagonal_postcondition(const CollArgs& a, std::int32_t, std::uint64_t i) {
  const auto s = static_cast<std::int32_t>(i / a.count);
  return {s, s + 1, static_cast<std::uint64_t>(s) * a.count + i % a.count, a.count - i % a.count};
}
void diagonal_reference(const CollArgs& a, ReferenceBuilder& out) {
  for (std::int32_t g = 0; g < a.ranks; ++g)
    for (std::int32_t s = 0; s < a.ranks; ++s) out.copy(g, s * a.count, s, s * a.count, a.count);
}

RunOutcome run_on_cpu(const Schedule& s) {
  auto r = execute(
      s, [](std::int32_t b, std::int32_t rank, std::uint64_t i) { return (b + 1) * 100.0 + rank * 10.0 + i; },
      RunOptions{});
  REQUIRE(r);
  return std::move(*r);
}

HostMemory inputs_of(const Schedule& s) {
  return make_inputs(
      s, [](std::int32_t b, std::int32_t rank, std::uint64_t i) { return (b + 1) * 100.0 + rank * 10.0 + i; });
}

}  // namespace

TEST_CASE("collectives: with a wrong postcondition the numeric check still catches a wrong schedule") {
  CollectiveDescriptor broken = collective_descriptor(Collective::alltoall);
  broken.postcondition = diagonal_postcondition;

  // The right schedule passes both checks; the wrong one fails both.
  const Schedule right = hand_alltoall(false), wrong = hand_alltoall(true);
  CHECK(verify_symbolic(right).ok());
  CHECK(run_on_cpu(right).numeric.wrong == 0);
  CHECK_FALSE(verify_symbolic(wrong).ok());

  // The broken postcondition is fooled by the wrong schedule (and now rejects the right one)...
  CHECK(verify_symbolic(wrong, broken).ok());
  CHECK_FALSE(verify_symbolic(right, broken).ok());
  // ...but the numeric reference never reads it: the wrong schedule's numbers are still wrong.
  const RunOutcome out = run_on_cpu(wrong);
  const NumericReport rep = compare_numeric(wrong, out.result, compute_reference(wrong, inputs_of(wrong)));
  CHECK(rep.wrong == 3 * 2 * 2);  // every off-diagonal block of every rank
  CHECK(rep.message().find("recv") != std::string::npos);
}

TEST_CASE("collectives: with a wrong numeric definition the symbolic check still catches a wrong schedule") {
  CollectiveDescriptor broken = collective_descriptor(Collective::alltoall);
  broken.reference = diagonal_reference;

  const Schedule wrong = hand_alltoall(true);
  const RunOutcome out = run_on_cpu(wrong);
  // The broken definition is fooled: the wrong schedule's numbers match it exactly...
  CHECK(compare_numeric(wrong, out.result, compute_reference(wrong, inputs_of(wrong), broken)).wrong == 0);
  // ...while the true one is not,
  CHECK(out.numeric.wrong > 0);
  // and the postcondition, which does not read the numeric definition, still rejects the schedule.
  const Status st = verify_symbolic(wrong);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().id == "verify.missing_contribution");
  CHECK_MESSAGE(st.error().message.find("rank 0 recv[2] lacks rank 1's send[0]") != std::string::npos,
                st.error().message);
}
