/* How far apart the machine's first two cores are right now: two threads, one on
 * each, hand a cache line back and forth, and the time of a round trip is printed in
 * ns. On a virtual machine it changes when the host moves the virtual cores (about
 * 100 ns on one physical core complex, 400 ns across two on the machine of
 * bench/RESULTS.md), and every exchange between ranks on those cores changes with it.
 * bench/latency_spread.sh builds and runs it before each of its invocations.
 *
 *   pingpong [ROUNDS]   (default 200000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) atomic_int ping;
static _Alignas(64) atomic_int pong;
static int rounds = 200000;
static int cores[2];

static void pin(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *answer(void *unused) {
  (void)unused;
  pin(cores[1]);
  for (int i = 1; i <= rounds; ++i) {
    while (atomic_load_explicit(&ping, memory_order_acquire) != i) {
    }
    atomic_store_explicit(&pong, i, memory_order_release);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) rounds = atoi(argv[1]);
  if (rounds < 1) rounds = 1;
  cpu_set_t allowed;
  sched_getaffinity(0, sizeof allowed, &allowed);
  int found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; ++c)
    if (CPU_ISSET(c, &allowed)) cores[found++] = c;
  if (found < 2) {
    fprintf(stderr, "pingpong: needs two cores, this process may use %d\n", found);
    return 2;
  }
  pthread_t t;
  pthread_create(&t, NULL, answer, NULL);
  pin(cores[0]);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 1; i <= rounds; ++i) {
    atomic_store_explicit(&ping, i, memory_order_release);
    while (atomic_load_explicit(&pong, memory_order_acquire) != i) {
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  pthread_join(t, NULL);
  printf("%.0f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / rounds);
  return 0;
}
