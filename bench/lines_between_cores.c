/* What a cache line costs when it moves between the machine's first two cores: two
 * threads, one pinned to each, take turns on one buffer, and the second thread's part
 * is timed (the median of many turns), in GB/s written, for buffers of 128 KiB to
 * 4 MiB. Six rows:
 *
 *   overwrite held      the second core overwrites (memcpy) what the first has just read
 *   ... first moved on  the same, after the first core streamed 8 MiB of other bytes
 *   overwrite free      the second core overwrites what nobody else touched
 *   read memcpy'd       the second core copies out what the first just wrote with memcpy
 *   read stored         the same, written with a plain store loop (as the reduce kernels write)
 *   read own            the second core copies out what it read itself the turn before
 *
 * The cost model prices the same cases (engine/src/model/cost_model.cpp), and
 * `collscope calibrate` measures the first two; bench/RESULTS.md has runs ("Lines
 * beyond another core's own cache, and a core's own clock"). On a virtual machine the
 * numbers change when the host moves the cores apart (bench/pingpong.c tells), and the
 * copy-out rows halve for minutes at a time.
 *
 *   cc -O2 -pthread bench/lines_between_cores.c -o lines && ./lines */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { OVERWRITE_HELD, OVERWRITE_MOVED_ON, OVERWRITE_FREE, READ_MEMCPY, READ_STORED, READ_OWN, CASES };
static const char *names[CASES] = {"overwrite held", "... first moved on", "overwrite free",
                                   "read memcpy'd",  "read stored",        "read own"};

enum { AWAY = 4 << 20 }; /* what the first core streams to move on: 4 MiB copied, 8 moved */

struct turn {
  int what;
  size_t bytes;
  int rounds;
  float *src, *line, *copy, *other, *away, *away_to;
  double *us;
  _Alignas(64) atomic_int step; /* 2i: the first core's i-th turn, 2i + 1: the second's */
};

static void pin(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void store_loop(float *dst, const float *src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = src[i] + 1.0f;
}

static void *first_core(void *arg) {
  struct turn *t = arg;
  pin(0);
  const size_t n = t->bytes / sizeof(float);
  for (int i = 0; i < t->rounds; ++i) {
    while (atomic_load_explicit(&t->step, memory_order_acquire) != 2 * i) {
    }
    switch (t->what) {
      case OVERWRITE_HELD:
        memcpy(t->copy, t->line, t->bytes);
        break;
      case OVERWRITE_MOVED_ON:
        memcpy(t->copy, t->line, t->bytes);
        memcpy(t->away_to, t->away, AWAY);
        break;
      case OVERWRITE_FREE:
        memcpy(t->copy, t->other, t->bytes);
        break;
      case READ_MEMCPY:
        memcpy(t->line, t->src, t->bytes);
        break;
      case READ_STORED:
        store_loop(t->line, t->src, n);
        break;
      default:
        break; /* READ_OWN: the first core does nothing */
    }
    atomic_store_explicit(&t->step, 2 * i + 1, memory_order_release);
  }
  return NULL;
}

static void *second_core(void *arg) {
  struct turn *t = arg;
  pin(1);
  for (int i = 0; i < t->rounds; ++i) {
    while (atomic_load_explicit(&t->step, memory_order_acquire) != 2 * i + 1) {
    }
    const double t0 = now_us();
    if (t->what <= OVERWRITE_FREE) memcpy(t->line, t->src, t->bytes);
    else memcpy(t->copy, t->what == READ_OWN ? t->other : t->line, t->bytes);
    t->us[i] = now_us() - t0;
    atomic_store_explicit(&t->step, 2 * i + 2, memory_order_release);
  }
  return NULL;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static float *buffer(size_t bytes) {
  float *p = aligned_alloc(64, bytes);
  if (!p) {
    fprintf(stderr, "lines_between_cores: out of memory\n");
    exit(1);
  }
  memset(p, 1, bytes);
  return p;
}

static double gbps(int what, size_t bytes) {
  struct turn t = {.what = what, .bytes = bytes, .rounds = bytes <= (1 << 20) ? 300 : 80};
  t.src = buffer(bytes);
  t.line = buffer(bytes);
  t.copy = buffer(bytes);
  t.other = buffer(bytes);
  t.away = buffer(AWAY);
  t.away_to = buffer(AWAY);
  t.us = calloc((size_t)t.rounds, sizeof(double));
  atomic_init(&t.step, 0);
  pthread_t a, b;
  pthread_create(&a, NULL, first_core, &t);
  pthread_create(&b, NULL, second_core, &t);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  qsort(t.us, (size_t)t.rounds, sizeof(double), by_value);
  const double median = t.us[t.rounds / 2];
  free(t.src), free(t.line), free(t.copy), free(t.other), free(t.away), free(t.away_to), free(t.us);
  return median > 0 ? (double)bytes / median / 1e3 : 0;
}

int main(void) {
  static const size_t sizes[] = {128 << 10, 1 << 20, 2 << 20, 4 << 20};
  const int count = (int)(sizeof sizes / sizeof sizes[0]);
  printf("%-20s", "GB/s written");
  for (int s = 0; s < count; ++s) printf(" %8zu KiB", sizes[s] >> 10);
  printf("\n");
  for (int what = 0; what < CASES; ++what) {
    printf("%-20s", names[what]);
    for (int s = 0; s < count; ++s) printf(" %12.1f", gbps(what, sizes[s]));
    printf("\n");
    fflush(stdout);
  }
  return 0;
}
