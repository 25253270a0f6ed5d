/* test_timebase.c - the tick -> ns calibration table of the shim's TSC
 * timer (preload/timebase.c): exact at its points, linear between them,
 * monotonic everywhere, merged while straight, stable once pinned. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "record/timebase.h"

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

Test(timebase, exact_at_points_and_linear_between)
{
    struct sp_timebase tb;
    sp_timebase_init(&tb, 100);
    cr_assert_eq(sp_timebase_add(&tb, 1000, 5000), 0);
    cr_assert_eq(sp_timebase_add(&tb, 3000, 6000), 0); /* 0.5 ns per tick */
    size_t hint = 0;
    cr_assert_eq(sp_timebase_ns(&tb, 1000, &hint), 5000);
    cr_assert_eq(sp_timebase_ns(&tb, 3000, &hint), 6000);
    cr_assert_eq(sp_timebase_ns(&tb, 2000, &hint), 5500);
    cr_assert_eq(sp_timebase_ns(&tb, 1001, &hint), 5000); /* floors */
    /* extended on both sides */
    cr_assert_eq(sp_timebase_ns(&tb, 5000, &hint), 7000);
    cr_assert_eq(sp_timebase_ns(&tb, 0, &hint), 4500);
    cr_assert_eq(sp_timebase_mean_mult(&tb), (uint64_t)1 << 31);
    sp_timebase_free(&tb);
}

Test(timebase, ignores_points_that_go_back)
{
    struct sp_timebase tb;
    sp_timebase_init(&tb, 100);
    sp_timebase_add(&tb, 1000, 5000);
    sp_timebase_add(&tb, 1000, 9000); /* same tick */
    sp_timebase_add(&tb, 2000, 4000); /* ns going back */
    cr_assert_eq(tb.num_points, 1);
    sp_timebase_free(&tb);
}

/* A clock whose rate changes at random points, sampled with noise; ticks
 * converted in random order must keep their order. */
Test(timebase, monotonic_over_random_rates)
{
    for (int round = 0; round < 50; round++) {
        struct sp_timebase tb;
        sp_timebase_init(&tb, 100);
        int64_t tick = 1000000 + (int64_t)(rnd() % 1000000), ns = (int64_t)(rnd() % 1000000000);
        int64_t first = tick;
        for (int i = 0; i < 200; i++) {
            sp_timebase_add(&tb, tick, ns);
            if (rnd() % 7 == 0)
                sp_timebase_pin(&tb);
            int64_t dt = 1 + (int64_t)(rnd() % 3000000);
            tick += dt;
            ns += (int64_t)((double)dt * (0.2 + (double)(rnd() % 1000) / 2500.0));
        }
        size_t hint = 0;
        int64_t previous = INT64_MIN;
        for (int64_t t = first - 1000; t < tick + 1000; t += 1 + (int64_t)(rnd() % 40000)) {
            int64_t v = sp_timebase_ns(&tb, t, &hint);
            cr_assert_geq(v, previous, "round %d: tick %lld maps to %lld, before %lld", round,
                          (long long)t, (long long)v, (long long)previous);
            previous = v;
        }
        sp_timebase_free(&tb);
    }
}

/* Points on a straight line (with +-20 ns of reading noise) merge into a
 * handful, and every sampled point stays within the tolerance. */
Test(timebase, straight_clock_keeps_few_points)
{
    struct sp_timebase tb;
    sp_timebase_init(&tb, 100);
    enum { N = 20000 };
    int64_t *ticks = malloc(N * sizeof *ticks), *nss = malloc(N * sizeof *nss);
    for (int i = 0; i < N; i++) {
        ticks[i] = 5000000 + (int64_t)i * 2600000;     /* 1 ms at 2.6 GHz */
        nss[i] = 77000000 + (int64_t)i * 1000000 + (int64_t)(rnd() % 41) - 20;
        sp_timebase_add(&tb, ticks[i], nss[i]);
    }
    cr_assert_leq(tb.num_points, 4, "%zu points kept", tb.num_points);
    size_t hint = 0;
    for (int i = 0; i < N; i++) {
        int64_t err = sp_timebase_ns(&tb, ticks[i], &hint) - nss[i];
        cr_assert(err >= -101 && err <= 101, "point %d off by %lld ns", i, (long long)err);
    }
    free(ticks);
    free(nss);
    sp_timebase_free(&tb);
}

/* A rate change of 500 ppm (an NTP slew) half-way: the bend is kept. */
Test(timebase, bend_is_kept)
{
    struct sp_timebase tb;
    sp_timebase_init(&tb, 100);
    enum { N = 4000 };
    int64_t ticks[N], nss[N];
    int64_t ns = 0;
    for (int i = 0; i < N; i++) {
        ticks[i] = (int64_t)i * 1000000;
        nss[i] = ns;
        sp_timebase_add(&tb, ticks[i], nss[i]);
        ns += i < N / 2 ? 1000000 : 1000500;
    }
    cr_assert_geq(tb.num_points, 3);
    size_t hint = 0;
    for (int i = 0; i < N; i++) {
        int64_t err = sp_timebase_ns(&tb, ticks[i], &hint) - nss[i];
        cr_assert(err >= -101 && err <= 101, "point %d off by %lld ns", i, (long long)err);
    }
    sp_timebase_free(&tb);
}

/* Once pinned, later points (merging or not) never change a conversion of
 * a tick up to the last pinned point. */
Test(timebase, pinned_conversions_never_change)
{
    struct sp_timebase tb;
    sp_timebase_init(&tb, 100);
    int64_t tick = 0, ns = 0;
    for (int i = 0; i < 50; i++) {
        sp_timebase_add(&tb, tick, ns);
        tick += 1000000;
        ns += 400000 + (int64_t)(rnd() % 3);
    }
    sp_timebase_pin(&tb);
    int64_t last = tb.points[tb.num_points - 1].tick;
    enum { M = 1000 };
    int64_t before[M];
    size_t hint = 0;
    for (int i = 0; i < M; i++)
        before[i] = sp_timebase_ns(&tb, last * i / (M - 1), &hint);
    for (int i = 0; i < 500; i++) {
        sp_timebase_add(&tb, tick, ns);
        tick += 1000000;
        ns += i % 100 < 50 ? 400000 : 400300;
    }
    hint = 0;
    for (int i = 0; i < M; i++)
        cr_assert_eq(sp_timebase_ns(&tb, last * i / (M - 1), &hint), before[i], "tick %lld",
                     (long long)(last * i / (M - 1)));
    sp_timebase_free(&tb);
}
