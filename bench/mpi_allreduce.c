/* The peer baseline for collscope's allreduce benchmark: MPI_Allreduce on float32
 * sums, timed the way `collscope bench` times its own runs, so the two can be put
 * side by side in one run (bench/peer.sh builds and runs it).
 *
 *   mpirun -np R mpi_allreduce MINBYTES MAXBYTES FACTOR ITERS WARMUP
 *
 * For each size it prints one line: bytes, then time per iteration (us), algbw and
 * busbw (GB/s) and the number of wrong elements, out of place and then in place.
 * Time is the slowest rank's wall time for ITERS back-to-back calls, divided by
 * ITERS; busbw = algbw * 2 (R - 1) / R, as nccl-tests define it for allreduce. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double timed(float *send, float *recv, int count, int iters, int warmup) {
  for (int i = 0; i < warmup; ++i) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double mine = MPI_Wtime() - t0, slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest / iters;
}

/* Every rank holds (rank + 1 + i % 7) at element i, so element i of the sum is
 * R (R + 1) / 2 + R (i % 7): small integers, exact in float32. */
static void fill(float *v, int count, int rank) {
  for (int i = 0; i < count; ++i) v[i] = (float)(rank + 1 + i % 7);
}

static long wrong(const float *v, int count, int ranks) {
  long bad = 0;
  for (int i = 0; i < count; ++i)
    if (v[i] != (float)(ranks * (ranks + 1) / 2 + ranks * (i % 7))) ++bad;
  long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc != 6) {
    if (rank == 0) fprintf(stderr, "usage: mpi_allreduce MINBYTES MAXBYTES FACTOR ITERS WARMUP\n");
    MPI_Finalize();
    return 2;
  }
  long lo = atol(argv[1]), hi = atol(argv[2]);
  double factor = atof(argv[3]);
  int iters = atoi(argv[4]), warmup = atoi(argv[5]);
  if (lo < 4 || hi < lo || factor <= 1.0 || iters < 1 || warmup < 0) {
    if (rank == 0) fprintf(stderr, "mpi_allreduce: bad arguments\n");
    MPI_Finalize();
    return 2;
  }
  float *send = malloc((size_t)hi), *recv = malloc((size_t)hi);
  if (!send || !recv) MPI_Abort(MPI_COMM_WORLD, 3);
  if (rank == 0)
    printf(
        "# Open MPI MPI_Allreduce, %d ranks, float32 sum, iters %d, warmup %d\n"
        "#  size(B)  oop time(us) algbw busbw #wrong   ip time(us) algbw busbw #wrong\n",
        ranks, iters, warmup);
  double bus = ranks > 1 ? 2.0 * (ranks - 1) / ranks : 0.0;
  for (long bytes = lo; bytes <= hi;) {
    int count = (int)(bytes / 4);
    fill(send, count, rank);
    double t_oop = timed(send, recv, count, iters, warmup);
    long bad_oop = wrong(recv, count, ranks);
    fill(recv, count, rank);
    double t_ip = timed(MPI_IN_PLACE, recv, count, 1, 0);
    long bad_ip = wrong(recv, count, ranks);
    t_ip = timed(MPI_IN_PLACE, recv, count, iters, warmup); /* values grow; only timed */
    if (rank == 0) {
      double a_oop = bytes / t_oop / 1e9, a_ip = bytes / t_ip / 1e9;
      printf("%10ld  %12.2f %5.2f %5.2f %6ld  %12.2f %5.2f %5.2f %6ld\n", bytes, t_oop * 1e6, a_oop, a_oop * bus,
             bad_oop, t_ip * 1e6, a_ip, a_ip * bus, bad_ip);
      fflush(stdout);
    }
    long next = (long)(bytes * factor);
    bytes = next > bytes ? next : bytes + 1;
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
