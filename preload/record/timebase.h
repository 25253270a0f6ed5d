/* timebase.h - conversion of CPU timestamp-counter ticks to CLOCK_MONOTONIC
 * nanoseconds through calibration points (tick, ns) sampled during the run.
 *
 * Between two points a tick count is mapped linearly; the map is monotonic
 * (a later tick never gets an earlier time), so nesting recorded in ticks
 * survives the conversion.  Points that lie on one straight line (within
 * tolerance_ns) are merged as they arrive ("swing door"): a steady clock
 * keeps a handful of points however long the run, a clock being slewed by
 * NTP keeps a point at every bend.  A point used by a conversion is pinned:
 * later points never change how an already converted tick maps.
 *
 * Plain data, no locking: the caller serialises (timer.c). */
#ifndef SCOPEPROF_TIMEBASE_H
#define SCOPEPROF_TIMEBASE_H

#include <stddef.h>
#include <stdint.h>

struct sp_timebase_point {
    int64_t tick;
    int64_t ns;
    uint64_t mult; /* ns per tick << 32 from this point to the next (0: last point) */
};

struct sp_timebase {
    struct sp_timebase_point *points;
    size_t num_points, cap;
    size_t pinned;          /* points[0, pinned) are final */
    int64_t tolerance_ns;   /* largest error merging points may add */
    double slope_lo, slope_hi; /* slopes from points[num_points-2] the tail may take */
};

/* An empty time base; tolerance_ns > 0. */
void sp_timebase_init(struct sp_timebase *tb, int64_t tolerance_ns);
void sp_timebase_free(struct sp_timebase *tb);

/* Add a point.  Points not strictly later in ticks, or earlier in ns, than
 * the last one are ignored.  Returns -1 if no memory was left for it (the
 * time base stays usable, only less precise), else 0. */
int sp_timebase_add(struct sp_timebase *tb, int64_t tick, int64_t ns);

/* ns of `tick` (needs two points; outside them the nearest segment is
 * extended).  *hint caches the segment between calls (start it at 0). */
int64_t sp_timebase_ns(const struct sp_timebase *tb, int64_t tick, size_t *hint);

/* Mark every point so far as final (call before converting with them). */
static inline void sp_timebase_pin(struct sp_timebase *tb)
{
    tb->pinned = tb->num_points;
}

/* ns per tick << 32 over the whole time base (durations); 0 if < 2 points. */
uint64_t sp_timebase_mean_mult(const struct sp_timebase *tb);

#endif
