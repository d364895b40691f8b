// How the GPU kernels cut a transfer into head, 16-byte middle and tail: checked on the
// host for every alignment of both pointers, every element size and small counts.
#include <doctest/doctest.h>

#include <cstdint>

#include "backends/cuda/vector_split.h"

using collscope::gpu::split_for_vectors;

TEST_CASE("gpu kernels: head, vector middle and tail cover a transfer exactly, with aligned vectors") {
  for (std::uint64_t esize : {1u, 2u, 4u, 8u, 16u}) {
    const std::uint64_t per = 16 / esize;
    for (std::uintptr_t d = 0; d < 32; d += esize)
      for (std::uintptr_t s = 0; s < 32; s += esize)
        for (std::uint64_t n = 0; n < 70; ++n) {
          const std::uintptr_t dst = 4096 + d, src = 65536 + s;
          CAPTURE(esize);
          CAPTURE(d);
          CAPTURE(s);
          CAPTURE(n);
          const auto v = split_for_vectors(dst, src, n, esize);
          // Every element exactly once.
          REQUIRE(v.head + v.vecs * per + v.tail == n);
          if (v.vecs > 0) {
            // The middle starts on a 16-byte boundary for both pointers...
            CHECK((dst + v.head * esize) % 16 == 0);
            CHECK((src + v.head * esize) % 16 == 0);
            // ...right after the shortest head, and leaves less than a vector.
            CHECK(v.head * esize < 16);
            CHECK(v.tail < per);
          }
          // Vectors are used whenever both pointers can reach a boundary together and a
          // whole vector fits after it.
          const std::uint64_t to_boundary = (16 - dst % 16) % 16;
          if ((dst - src) % 16 == 0 && n * esize >= to_boundary + 16) CHECK(v.vecs > 0);
          if ((dst - src) % 16 != 0) CHECK(v.vecs == 0);
        }
  }
}

TEST_CASE("gpu kernels: aligned buffers are all middle") {
  const auto v = split_for_vectors(1 << 20, 1 << 24, 1000, 4);
  CHECK(v.head == 0);
  CHECK(v.vecs == 250);
  CHECK(v.tail == 0);
  const auto w = split_for_vectors((1 << 20) + 4, (1 << 24) + 4, 1003, 4);  // offset by one float
  CHECK(w.head == 3);
  CHECK(w.vecs == 250);
  CHECK(w.tail == 0);
}

TEST_CASE("gpu kernels: a reduce-copy's split needs all three pointers to line up") {
  for (std::uint64_t esize : {1u, 2u, 4u, 8u})
    for (std::uintptr_t d = 0; d < 32; d += esize)
      for (std::uintptr_t a = 0; a < 32; a += esize)
        for (std::uintptr_t s = 0; s < 32; s += esize) {
          const std::uintptr_t dst = 4096 + d, aux = 8192 + a, src = 65536 + s;
          CAPTURE(esize);
          CAPTURE(d);
          CAPTURE(a);
          CAPTURE(s);
          const std::uint64_t n = 67;
          const auto three = split_for_vectors(dst, aux, src, n, esize);
          const auto two = split_for_vectors(dst, src, n, esize);
          REQUIRE(three.head + three.vecs * (16 / esize) + three.tail == n);
          if ((dst - aux) % 16 == 0) {
            // aux moves with dst: the split of dst and src (as for a reduce, aux == dst).
            CHECK(three.head == two.head);
            CHECK(three.vecs == two.vecs);
            CHECK(three.tail == two.tail);
          } else {
            CHECK(three.vecs == 0);  // element by element
          }
          if (three.vecs > 0) CHECK((aux + three.head * esize) % 16 == 0);
        }
  // aux == dst is exactly the two-pointer split.
  const auto r = split_for_vectors((1 << 20) + 4, (1 << 20) + 4, (1 << 24) + 4, 1003, 4);
  CHECK(r.head == 3);
  CHECK(r.vecs == 250);
}
