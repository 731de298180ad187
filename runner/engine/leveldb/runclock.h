// runclock.h: the clock of the engine.Ops loops. Keep the copies in runner/engine/rocksdb and
// runner/engine/leveldb identical (cgo tracks headers of the package's own directory only).
//
// Every operation of a run is timed on its own, so the clock is read once per operation. Where
// the kernel itself keeps time with the TSC (clocksource "tsc": invariant and synchronised across
// CPUs; engine.TSCClock checks it and the Go side calls kvb_clock_use_tsc), the reading is a bare
// rdtsc (~11ns on the development VM against ~28ns for clock_gettime through the vDSO), and the
// ticks are converted to nanoseconds with the ratio of CLOCK_MONOTONIC to TSC time, accumulated
// over the calling thread's runs (each run is measured with CLOCK_MONOTONIC at both ends).
// Elsewhere every reading is CLOCK_MONOTONIC, the clock Go's own time uses.
#ifndef KVB_RUNCLOCK_H
#define KVB_RUNCLOCK_H
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static int kvb_tsc;  // set once, before any run, by kvb_clock_use_tsc

static inline int64_t kvb_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline uint64_t kvb_ticks(void) {
#if defined(__x86_64__)
  if (kvb_tsc) return __rdtsc();
#endif
  return (uint64_t)kvb_mono_ns();
}

typedef struct {
  int64_t ns0;    // CLOCK_MONOTONIC at the start of the run
  uint64_t t0;    // ticks at the start of the run
  uint64_t prev;  // ticks at the end of the previous operation
} kvb_run_clock;

static inline void kvb_clock_start(kvb_run_clock* c) {
  c->ns0 = kvb_mono_ns();
  c->t0 = c->prev = kvb_tsc ? kvb_ticks() : (uint64_t)c->ns0;
}

// kvb_clock_lap returns the ticks since the end of the previous operation (the start of the run).
static inline int64_t kvb_clock_lap(kvb_run_clock* c) {
  uint64_t t = kvb_ticks();
  int64_t d = (int64_t)(t - c->prev);
  c->prev = t;
  return d;
}

// kvb_clock_finish converts the run's n laps in lat from ticks to nanoseconds.
static inline void kvb_clock_finish(kvb_run_clock* c, int64_t* lat, int n) {
  static __thread double sum_ns, sum_ticks;
  if (!kvb_tsc) return;
  uint64_t t = kvb_ticks();
  int64_t ns = kvb_mono_ns();
  if (t > c->t0 && ns > c->ns0) {
    sum_ticks += (double)(t - c->t0);
    sum_ns += (double)(ns - c->ns0);
  }
  double scale = sum_ticks > 0 ? sum_ns / sum_ticks : 1;
  for (int i = 0; i < n; i++) lat[i] = (int64_t)((double)lat[i] * scale + 0.5);
}
#endif
