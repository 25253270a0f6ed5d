/* timer.h - the clock of the hot path.
 *
 * On x86-64 with an invariant TSC that the kernel itself uses as its clock
 * source, sp_begin/sp_end read the timestamp counter (rdtsc: ~10 ns here,
 * against ~24 ns for clock_gettime through the vDSO) and events hold ticks
 * until they leave memory: every conversion (spill, write) maps them to
 * CLOCK_MONOTONIC ns through calibration points (timebase.h), so files hold
 * the same clock as before.  Elsewhere, or with SCOPE_PROFILER_TIMER=clock,
 * ticks are CLOCK_MONOTONIC ns and conversion is the identity.
 *
 * Where ticks live: open-call starts, event start/end in chunks not yet
 * converted (struct sp_chunk.converted), the per-region duration counters
 * (converted when read) and the flush deadline. */
#ifndef SCOPEPROF_TIMER_H
#define SCOPEPROF_TIMER_H

#include <stdint.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "model/capture.h"
#include "base/shim.h"

extern int sp_timer_tsc __attribute__((visibility("hidden")));             /* events are timed in TSC ticks */
extern int64_t sp_timer_next_point;  /* tick of the next calibration point (atomic) */

/* The TSC when there is one, whatever the timer (the fast path reads it
 * before it knows; lanes timed with the clock never keep it). */
static inline int64_t sp_raw_ticks(void)
{
#if defined(__x86_64__)
    return (int64_t)__rdtsc();
#else
    return sp_clock_ns();
#endif
}

static inline int64_t sp_ticks(void)
{
#if defined(__x86_64__)
    if (SP_LIKELY(sp_timer_tsc))
        return (int64_t)__rdtsc();
#endif
    return sp_clock_ns();
}

/* Choose the timer and take the first point (idempotent).  Called on the
 * first region registration: no call can be timed before one, and the
 * processes that never register one (shells, launchers inheriting
 * LD_PRELOAD) pay nothing. */
void sp_timer_init(void);
/* The hot path found its latest tick past sp_timer_next_point: sample a
 * calibration point (one thread does; the others go on). */
void sp_timer_point_due(void);
static inline void sp_timer_check(int64_t now)
{
    if (SP_UNLIKELY(now >= __atomic_load_n(&sp_timer_next_point, __ATOMIC_RELAXED)))
        sp_timer_point_due();
}
/* Ticks to ns (sp_timer_tsc only): begin with the latest tick to convert
 * (points are added up to it, and pinned), convert each tick (*hint starts
 * at 0 and caches the segment), end.  The calibration lock is held from
 * begin to end. */
void sp_timer_convert_begin(int64_t latest);
int64_t sp_timer_convert_tick(int64_t tick, size_t *hint);
void sp_timer_convert_end(void);
/* A duration in ticks as ns (mean rate of the run), and back. */
int64_t sp_timer_duration_ns(int64_t ticks);
int64_t sp_timer_duration_ticks(int64_t ns);
/* "tsc" or "clock_gettime", for the file's metadata. */
const char *sp_timer_name(void);
/* fork.c: the calibration lock is held across fork(). */
void sp_timer_lock(void);
void sp_timer_unlock(void);
void sp_timer_reset_lock(void);

#endif
