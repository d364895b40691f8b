// Human-readable names of transfers and slices, for error messages.
#pragma once

#include <string>

#include "collscope/schedule.h"

namespace collscope {

inline std::string describe_slice(const Schedule& s, const Loc& l, std::uint64_t count) {
  const std::string name = l.buf >= 0 && l.buf < static_cast<std::int32_t>(s.buffers.size())
                               ? s.buffers[static_cast<std::size_t>(l.buf)].name
                               : "?";
  return "rank " + std::to_string(l.rank) + " " + name + "[" + std::to_string(l.offset) + ":" +
         std::to_string(l.offset + count) + "]";
}

inline std::string describe_transfer(const Schedule& s, const Transfer& t) {
  if (t.action == Action::compute)
    return "compute on rank " + std::to_string(t.dst.rank) + " for " + std::to_string(t.duration_us) + " us" +
           (t.count ? " writing " + describe_slice(s, t.dst, t.count) : std::string());
  if (t.count == 0) return "signal rank " + std::to_string(t.src.rank) + " -> rank " + std::to_string(t.dst.rank);
  if (t.action == Action::scale)
    return "divide " + describe_slice(s, t.dst, t.count) + " by " + std::to_string(t.divisor);
  if (t.action == Action::reduce_copy)
    return describe_slice(s, t.src, t.count) + " + " + describe_slice(s, t.aux, t.count) + " -> " +
           describe_slice(s, t.dst, t.count);
  return describe_slice(s, t.src, t.count) + (t.action == Action::copy ? " -> " : " +> ") +
         describe_slice(s, t.dst, t.count);
}

inline const Transfer& st_transfer(const Schedule& s, std::size_t step, std::uint32_t t) {
  return s.steps[step].transfers[t];
}

}  // namespace collscope
