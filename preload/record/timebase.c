/* timebase.c - tick -> ns calibration table (see timebase.h). */
#include <stdlib.h>

#include "timebase.h"

void sp_timebase_init(struct sp_timebase *tb, int64_t tolerance_ns)
{
    *tb = (struct sp_timebase){.tolerance_ns = tolerance_ns > 0 ? tolerance_ns : 1};
}

void sp_timebase_free(struct sp_timebase *tb)
{
    free(tb->points);
    tb->points = NULL;
    tb->num_points = tb->cap = tb->pinned = 0;
}

/* ns per tick << 32 between two points (b later than a in ticks). */
static uint64_t segment_mult(const struct sp_timebase_point *a, const struct sp_timebase_point *b)
{
    unsigned __int128 dns = (unsigned __int128)(uint64_t)(b->ns - a->ns);
    unsigned __int128 m = (dns << 32) / (uint64_t)(b->tick - a->tick);
    return m > UINT64_MAX ? UINT64_MAX : (uint64_t)m;
}

static double slope(const struct sp_timebase_point *a, int64_t tick, int64_t ns)
{
    return (double)(ns - a->ns) / (double)(tick - a->tick);
}

/* The tail point was (re)placed: the slopes from the anchor that keep it
 * within tolerance. */
static void narrow_corridor(struct sp_timebase *tb, int reset)
{
    const struct sp_timebase_point *anchor = &tb->points[tb->num_points - 2];
    const struct sp_timebase_point *tail = &tb->points[tb->num_points - 1];
    double lo = slope(anchor, tail->tick, tail->ns - tb->tolerance_ns);
    double hi = slope(anchor, tail->tick, tail->ns + tb->tolerance_ns);
    if (reset || lo > tb->slope_lo)
        tb->slope_lo = lo;
    if (reset || hi < tb->slope_hi)
        tb->slope_hi = hi;
}

int sp_timebase_add(struct sp_timebase *tb, int64_t tick, int64_t ns)
{
    size_t n = tb->num_points;
    if (n) {
        const struct sp_timebase_point *last = &tb->points[n - 1];
        if (tick <= last->tick || ns < last->ns)
            return 0;
    }
    /* Merge: the tail is not pinned and the line from the anchor to the new
     * point passes within tolerance of every point merged so far. */
    if (n >= 2 && n - 1 >= tb->pinned) {
        double s = slope(&tb->points[n - 2], tick, ns);
        if (s >= tb->slope_lo && s <= tb->slope_hi) {
            tb->points[n - 1].tick = tick;
            tb->points[n - 1].ns = ns;
            tb->points[n - 2].mult = segment_mult(&tb->points[n - 2], &tb->points[n - 1]);
            narrow_corridor(tb, 0);
            return 0;
        }
    }
    if (n == tb->cap) {
        size_t cap = tb->cap ? tb->cap * 2 : 64;
        struct sp_timebase_point *grown = realloc(tb->points, cap * sizeof *grown);
        if (!grown)
            return -1;
        tb->points = grown;
        tb->cap = cap;
    }
    tb->points[n] = (struct sp_timebase_point){tick, ns, 0};
    tb->num_points = n + 1;
    if (n >= 1) {
        tb->points[n - 1].mult = segment_mult(&tb->points[n - 1], &tb->points[n]);
        narrow_corridor(tb, 1);
    }
    return 0;
}

int64_t sp_timebase_ns(const struct sp_timebase *tb, int64_t tick, size_t *hint)
{
    size_t n = tb->num_points;
    if (n == 0)
        return tick;
    if (n == 1)
        return tb->points[0].ns + (tick - tb->points[0].tick);
    /* Segment i covers [points[i].tick, points[i+1].tick); the first
     * segment extends backwards, the last one's rate forwards. */
    size_t i = *hint < n - 1 ? *hint : 0;
    const struct sp_timebase_point *p = tb->points;
    int inside = (i == 0 || tick >= p[i].tick) && (i == n - 2 || tick < p[i + 1].tick);
    if (!inside) {
        size_t lo = 0, hi = n - 2;
        while (lo < hi) {
            size_t mid = lo + (hi - lo + 1) / 2;
            if (tick >= p[mid].tick)
                lo = mid;
            else
                hi = mid - 1;
        }
        i = lo;
        *hint = i;
    }
    /* Past the last point, extend from the point itself: exact there, as
     * the segment a later point starts at it will be. */
    const struct sp_timebase_point *anchor = tick >= p[n - 1].tick ? &p[n - 1] : &p[i];
    __int128 offset = (__int128)(tick - anchor->tick) * (__int128)p[i].mult;
    /* >> on a negative value floors (gcc, clang): monotonic before points[0] too. */
    return anchor->ns + (int64_t)(offset >> 32);
}

uint64_t sp_timebase_mean_mult(const struct sp_timebase *tb)
{
    if (tb->num_points < 2)
        return 0;
    return segment_mult(&tb->points[0], &tb->points[tb->num_points - 1]);
}
