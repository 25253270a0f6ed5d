/* timer.c - choosing the hot path's clock and calibrating TSC ticks against
 * CLOCK_MONOTONIC (see timer.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "timebase.h"
#include "timer.h"

int sp_timer_tsc;
int64_t sp_timer_next_point = INT64_MAX;

/* A point at least every millisecond of recording bounds the distance from
 * any event to the nearest point, hence the error of interpolating across
 * a change of the clock's rate (NTP slewing CLOCK_MONOTONIC); merging
 * collinear points (timebase.c) keeps the table small when it is steady. */
#define POINT_INTERVAL_NS 1000000
#define MERGE_TOLERANCE_NS 100

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sp_timebase base;
/* Until two points give the rate: about 0.3 ms at 3 GHz. */
static int64_t interval_ticks = 1000000;
static uint64_t mean_mult; /* atomic: ns per tick << 32 */

#if defined(__x86_64__)
static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if ((unsigned)__get_cpuid_max(0x80000000, NULL) < 0x80000007u)
        return 0;
    __cpuid(0x80000007, a, b, c, d);
    return (d >> 8) & 1;
}

/* The kernel keeps checking the TSC against other clocks and leaves it as
 * clock source only while it is synchronised across CPUs. */
static int kernel_clock_is_tsc(void)
{
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return 0;
    char name[32] = "";
    int ok = fgets(name, sizeof name, f) != NULL && !strcmp(name, "tsc\n");
    fclose(f);
    return ok;
}
#endif

/* One (tick, ns) pair: the ns read between two tick reads.  An interrupt
 * between the reads would blur the pair, so it is read again (a few times
 * at most) until its window is close to the narrowest seen. */
static int64_t narrowest = INT64_MAX;

static void sample(int64_t *tick, int64_t *ns)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < 10; i++) {
        int64_t t0 = sp_ticks();
        int64_t n = sp_clock_ns();
        int64_t t1 = sp_ticks();
        if (t1 - t0 < best) {
            best = t1 - t0;
            *tick = t0 + (t1 - t0) / 2;
            *ns = n;
        }
        if (best < narrowest)
            narrowest = best;
        if (i >= 2 && best <= narrowest + narrowest / 2)
            break;
    }
}

/* Lock held. */
static void add_point_locked(void)
{
    int64_t tick = 0, ns = 0;
    sample(&tick, &ns);
    sp_timebase_add(&base, tick, ns);
    uint64_t m = sp_timebase_mean_mult(&base);
    if (m) {
        __atomic_store_n(&mean_mult, m, __ATOMIC_RELAXED);
        interval_ticks = (int64_t)(((__int128)POINT_INTERVAL_NS << 32) / m);
    }
    __atomic_store_n(&sp_timer_next_point, tick + interval_ticks, __ATOMIC_RELAXED);
}

static void choose(void)
{
    const char *why = NULL;
    int want = sp_cfg.timer;
#if defined(__x86_64__)
    if (want == SP_TIMER_TSC && !tsc_invariant())
        why = "this CPU's time-stamp counter is not invariant";
    else if (want == SP_TIMER_AUTO)
        sp_timer_tsc = tsc_invariant() && kernel_clock_is_tsc();
    if (want == SP_TIMER_TSC && !why)
        sp_timer_tsc = 1;
#else
    if (want == SP_TIMER_TSC)
        why = "this is not an x86-64 CPU";
#endif
    if (why)
        sp_log("SCOPE_PROFILER_TIMER=tsc: %s; timing with clock_gettime", why);
    if (!sp_timer_tsc)
        return;
    sp_timebase_init(&base, MERGE_TOLERANCE_NS);
    pthread_mutex_lock(&lock);
    add_point_locked();
    pthread_mutex_unlock(&lock);
}

void sp_timer_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, choose);
}

void sp_timer_point_due(void)
{
    /* One thread samples; the others go on recording. */
    if (pthread_mutex_trylock(&lock) != 0)
        return;
    if (sp_ticks() >= __atomic_load_n(&sp_timer_next_point, __ATOMIC_RELAXED))
        add_point_locked();
    pthread_mutex_unlock(&lock);
}

void sp_timer_convert_begin(int64_t latest)
{
    pthread_mutex_lock(&lock);
    /* Every tick converted lies before the last point: a later point never
     * changes its mapping (extending past the last point would). */
    for (int tries = 0; tries < 1000 && (base.num_points < 2 ||
                                         base.points[base.num_points - 1].tick < latest);
         tries++)
        add_point_locked();
    sp_timebase_pin(&base);
}

int64_t sp_timer_convert_tick(int64_t tick, size_t *hint)
{
    return sp_timebase_ns(&base, tick, hint);
}

void sp_timer_convert_end(void)
{
    pthread_mutex_unlock(&lock);
}

/* The mean rate, sampling a second point if there is none yet. */
static uint64_t rate(void)
{
    uint64_t m = __atomic_load_n(&mean_mult, __ATOMIC_RELAXED);
    if (!m) {
        pthread_mutex_lock(&lock);
        add_point_locked();
        m = __atomic_load_n(&mean_mult, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&lock);
    }
    return m;
}

int64_t sp_timer_duration_ns(int64_t ticks)
{
    if (!sp_timer_tsc)
        return ticks;
    uint64_t m = rate();
    return (int64_t)(((__int128)ticks * (__int128)m) >> 32);
}

int64_t sp_timer_duration_ticks(int64_t ns)
{
    if (!sp_timer_tsc)
        return ns;
    uint64_t m = rate();
    if (!m)
        return ns;
    __int128 t = ((__int128)ns << 32) / m;
    return t > INT64_MAX ? INT64_MAX : (int64_t)t;
}

const char *sp_timer_name(void)
{
    return sp_timer_tsc ? "tsc" : "clock_gettime";
}

void sp_timer_lock(void)
{
    pthread_mutex_lock(&lock);
}

void sp_timer_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

void sp_timer_reset_lock(void)
{
    pthread_mutex_init(&lock, NULL);
}
