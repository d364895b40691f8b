// The table of collective descriptors (collective.h) and the short forms of their
// answers. The descriptors themselves live in collectives/, one file each.
#include "collscope/collective.h"

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
          &collectives::gather(), &collectives::allgather(), &collectives::reduce_scatter(),
          &collectives::alltoall(), &collectives::barrier()})
      x[static_cast<std::size_t>(d->coll)] = d;
    return x;
  }();
  return t;
}

static_assert([] {
  for (std::size_t i = 0; i < std::size(kAllCollectives); ++i)
    if (static_cast<std::size_t>(kAllCollectives[i]) != i) return false;
  return true;
}(), "kAllCollectives lists the collectives in the order of their enum values");

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

CollectiveShape shape_of(Collective c, std::int32_t ranks, std::int32_t rank, std::int32_t root,
                         std::uint64_t count) {
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

std::uint64_t CollArgs::in_offset(std::int32_t r) const {
  return in_place ? collective_descriptor(coll).in_place_input(*this, r) : 0;
}

std::uint64_t CollArgs::out_offset(std::int32_t r) const {
  return in_place ? collective_descriptor(coll).in_place_output(*this, r) : 0;
}

}  // namespace collscope
