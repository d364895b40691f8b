// How the copy and reduce-copy kernels cut one transfer: a head taken element by element
// up to the 16-byte boundary, a middle of 16-byte accesses, and a tail element by element.
// Plain C++ without CUDA, so that it is unit-tested on machines without a GPU.
#pragma once

#include <algorithm>
#include <cstdint>

namespace collscope::gpu {

struct VectorSplit {
  std::uint64_t head = 0;  // elements before the aligned middle
  std::uint64_t vecs = 0;  // 16-byte accesses in the middle
  std::uint64_t tail = 0;  // elements after it
};

// `n` elements of `esize` bytes (1, 2, 4, 8 or 16) read at address `src` and written at
// `dst`. The middle exists only where both addresses reach a 16-byte boundary after the
// same whole number of elements; otherwise everything is head.
inline VectorSplit split_for_vectors(std::uintptr_t dst, std::uintptr_t src, std::uint64_t n, std::uint64_t esize) {
  VectorSplit v;
  const std::uint64_t to_boundary = (16 - dst % 16) % 16;
  if ((dst - src) % 16 != 0 || to_boundary % esize != 0) {
    v.head = n;
    return v;
  }
  const std::uint64_t per = 16 / esize;
  v.head = std::min<std::uint64_t>(n, to_boundary / esize);
  v.vecs = (n - v.head) / per;
  v.tail = n - v.head - v.vecs * per;
  return v;
}

// The same for a kernel that also reads a second operand at `aux` (reduce-copy): the
// middle exists only where all three addresses reach a 16-byte boundary after the same
// whole number of elements. With aux == dst (a reduce) it is the split of dst and src.
inline VectorSplit split_for_vectors(std::uintptr_t dst, std::uintptr_t aux, std::uintptr_t src, std::uint64_t n,
                                     std::uint64_t esize) {
  if ((dst - aux) % 16 != 0) return VectorSplit{n, 0, 0};
  return split_for_vectors(dst, src, n, esize);
}

}  // namespace collscope::gpu
