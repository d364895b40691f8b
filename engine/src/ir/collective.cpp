// The table of collective descriptors (collective.h) and the short forms of their
// answers. The descriptors themselves live in collectives/, one file each.
#include "collscope/collective.h"

#include <algorithm>
#include <array>

#include "collectives/collectives.h"
#include "collscope/schedule.h"

namespace collscope {

namespace {

using Table = std::array<const CollectiveDescriptor*, std::size(kAllCollectives)>;

// Indexed by the enum's value; kAllCollectives lists every value in order.
const Table& table() {
  static const Table t = [] {
    Table x{};
    for (const CollectiveDescriptor* d :
         {&collectives::broadcast(), &collectives::reduce(), &collectives::allreduce(), &collectives::scatter(),
          &collectives::gather(), &collectives::allgather(), &collectives::reduce_scatter(), &collectives::alltoall(),
          &collectives::alltoallv(), &collectives::barrier()})
      x[static_cast<std::size_t>(d->coll)] = d;
    return x;
  }();
  return t;
}

static_assert(
    [] {
      for (std::size_t i = 0; i < std::size(kAllCollectives); ++i)
        if (static_cast<std::size_t>(kAllCollectives[i]) != i) return false;
      return true;
    }(),
    "kAllCollectives lists the collectives in the order of their enum values");

}  // namespace

const CollectiveDescriptor& collective_descriptor(Collective c) { return *table()[static_cast<std::size_t>(c)]; }

std::string_view name_of(Collective c) { return collective_descriptor(c).name; }

std::optional<Collective> parse_collective(std::string_view s) {
  for (Collective c : kAllCollectives)
    if (collective_descriptor(c).name == s) return c;
  return std::nullopt;
}

bool is_reducing(Collective c) { return collective_descriptor(c).reducing; }
bool has_root(Collective c) { return collective_descriptor(c).rooted; }
bool supports_in_place(Collective c) { return collective_descriptor(c).in_place; }
bool supports_out_of_place(Collective c) { return collective_descriptor(c).out_of_place; }

CollectiveShape shape_of(const CollArgs& a, std::int32_t g) { return collective_descriptor(a.coll).shape(a, g); }

CollectiveShape shape_of(Collective c, std::int32_t ranks, std::int32_t rank, std::int32_t root, std::uint64_t count) {
  CollArgs a;
  a.coll = c;
  a.ranks = ranks;
  a.root = root;
  a.count = count;
  return shape_of(a, rank);
}

std::uint64_t message_bytes(Collective c, std::int32_t ranks, std::uint64_t count, DType t) {
  CollArgs a;
  a.coll = c;
  a.ranks = ranks;
  a.count = count;
  a.dtype = t;
  return collective_descriptor(c).message_count(a) * size_of(t);
}

double bus_factor(Collective c, std::int32_t ranks) { return collective_descriptor(c).bus_factor(ranks); }

const NcclCall& nccl_call(Collective c) { return collective_descriptor(c).nccl; }
const MpiCall& mpi_call(Collective c) { return collective_descriptor(c).mpi; }

void PeerCounts::finish() {
  const auto n = static_cast<std::size_t>(ranks);
  if (send_offsets.empty()) {
    send_offsets.assign(n * n, 0);
    for (std::int32_t s = 0; s < ranks; ++s)
      for (std::int32_t d = 1; d < ranks; ++d) send_offsets[at(s, d)] = send_offsets[at(s, d - 1)] + count(s, d - 1);
  }
  if (recv_offsets.empty()) {
    recv_offsets.assign(n * n, 0);
    for (std::int32_t d = 0; d < ranks; ++d)
      for (std::int32_t s = 1; s < ranks; ++s) recv_offsets[at(d, s)] = recv_offsets[at(d, s - 1)] + count(s - 1, d);
  }
  in_need.assign(n, 0);
  out_need.assign(n, 0);
  for (std::int32_t s = 0; s < ranks; ++s)
    for (std::int32_t d = 0; d < ranks; ++d) {
      const std::uint64_t c = count(s, d);
      if (c == 0) continue;  // an empty block needs no room, wherever its offset points
      in_need[static_cast<std::size_t>(s)] = std::max(in_need[static_cast<std::size_t>(s)], send_at(s, d) + c);
      out_need[static_cast<std::size_t>(d)] = std::max(out_need[static_cast<std::size_t>(d)], recv_at(d, s) + c);
    }
}

std::uint64_t alltoallv_default_count(std::uint64_t count, std::int32_t rank, std::int32_t peer) {
  return count * static_cast<std::uint64_t>((static_cast<std::int64_t>(rank) + peer + 1) % 3);
}

std::string alltoallv_default_counts_text(std::uint64_t count) {
  return std::to_string(count) + " * ((rank + peer + 1) % 3)";
}

std::shared_ptr<const PeerCounts> peers_of(const CollArgs& a) {
  if (a.peers) return a.peers;
  if (!collective_descriptor(a.coll).per_peer) return nullptr;
  // The default pattern, for calls built from a count alone. Kept per thread: the
  // descriptor's functions ask for it once per rank or element.
  thread_local std::shared_ptr<const PeerCounts> last;
  thread_local std::uint64_t last_count = 0;
  if (last && last->ranks == a.ranks && last_count == a.count) return last;
  auto p = std::make_shared<PeerCounts>();
  p->ranks = std::max(a.ranks, 0);
  p->counts.resize(static_cast<std::size_t>(p->ranks) * static_cast<std::size_t>(p->ranks));
  for (std::int32_t s = 0; s < p->ranks; ++s)
    for (std::int32_t d = 0; d < p->ranks; ++d) p->counts[p->at(s, d)] = alltoallv_default_count(a.count, s, d);
  p->finish();
  last = std::move(p);
  last_count = a.count;
  return last;
}

std::uint64_t CollArgs::in_offset(std::int32_t r) const {
  return in_place ? collective_descriptor(coll).in_place_input(*this, r) : 0;
}

std::uint64_t CollArgs::out_offset(std::int32_t r) const {
  return in_place ? collective_descriptor(coll).in_place_output(*this, r) : 0;
}

}  // namespace collscope
