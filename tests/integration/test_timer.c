/* test_timer.c - the times in the file are CLOCK_MONOTONIC ns whichever
 * timer recorded them (SCOPE_PROFILER_TIMER): every call's start and end lie
 * between the program's own clock_gettime readings around sp_begin/sp_end,
 * in memory, after a flush and after a spill. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

struct record {
    int64_t thread, call, t[6];
};

struct bracket_run {
    struct harness_run run;
    sp_profile *profile;
    struct record *records;
    long calls;
    int threads;
};

static void run_bracket_mode(struct bracket_run *b, long calls, int threads, const char *timer,
                             const char *max_memory, const char *mode)
{
    char n[32], t[32], timer_env[64], mem_env[64];
    snprintf(n, sizeof n, "%ld", calls);
    snprintf(t, sizeof t, "%d", threads);
    snprintf(timer_env, sizeof timer_env, "SCOPE_PROFILER_TIMER=%s", timer);
    snprintf(mem_env, sizeof mem_env, "SCOPE_PROFILER_MAX_MEMORY=%s", max_memory ? max_memory : "1G");
    const char *argv[] = {harness_program("clock_bracket"), "records.bin", n, t, mode, NULL};
    const char *env[] = {timer_env, mem_env, NULL};
    cr_assert_eq(harness_run(&b->run, argv, env, 1), 0);
    cr_assert_eq(b->run.exit_code, 0, "stderr: %s", b->run.err);
    b->calls = calls;
    b->threads = threads;
    b->profile = harness_load(&b->run, "bracket_rank00000.h5");
    FILE *f = fopen(harness_path(&b->run, "records.bin"), "rb");
    cr_assert_not_null(f);
    size_t total = (size_t)calls * (size_t)threads;
    b->records = calloc(total, sizeof *b->records);
    cr_assert_eq(fread(b->records, sizeof *b->records, total, f), total);
    fclose(f);
}

static void run_bracket(struct bracket_run *b, long calls, int threads, const char *timer,
                        const char *max_memory)
{
    run_bracket_mode(b, calls, threads, timer, max_memory, NULL);
}

/* Check `region`'s events against the brackets: its k-th call on thread t is
 * record (t, k); start in [t[lo], t[lo+1]], end in [t[hi], t[hi+1]]. */
static void check_region(const struct bracket_run *b, const char *region, int lo, int hi,
                         int64_t tolerance, int64_t *worst)
{
    const sp_profile *p = b->profile;
    const sp_row *row = harness_row(p, 0, region);
    cr_assert_not_null(row, "no row for %s", region);
    cr_assert_eq(row->count, (uint64_t)(b->calls * b->threads), "%s: %llu calls", region,
                 (unsigned long long)row->count);
    cr_assert_not_null(p->thread_ids);
    long *seen = calloc((size_t)b->threads, sizeof *seen);
    for (uint64_t k = 0; k < row->count; k++) {
        size_t e = row->offset + k;
        int64_t thread = p->thread_ids[e];
        cr_assert(thread >= 0 && thread < b->threads, "thread id %lld", (long long)thread);
        const struct record *r = &b->records[thread * b->calls + seen[thread]++];
        int64_t d[4] = {r->t[lo] - p->start[e], p->start[e] - r->t[lo + 1],
                        r->t[hi] - p->end[e], p->end[e] - r->t[hi + 1]};
        for (int i = 0; i < 4; i++) {
            if (d[i] > *worst)
                *worst = d[i];
            cr_assert_leq(d[i], tolerance,
                          "%s call %lld of thread %lld: [%lld, %lld] is %lld ns outside the "
                          "program's clock readings [%lld..%lld, %lld..%lld]",
                          region, (long long)r->call, (long long)thread,
                          (long long)p->start[e], (long long)p->end[e], (long long)d[i],
                          (long long)r->t[lo], (long long)r->t[lo + 1], (long long)r->t[hi],
                          (long long)r->t[hi + 1]);
        }
    }
    free(seen);
}

static void check_all(struct bracket_run *b, const char *timer_name, int64_t tolerance)
{
    const char *timer = sp_profile_meta_string(b->profile, "timer");
    cr_assert_not_null(timer);
    cr_assert_str_eq(timer, timer_name);
    cr_assert_str_eq(sp_profile_meta_string(b->profile, "clock"), "CLOCK_MONOTONIC");
    int64_t worst = INT64_MIN;
    check_region(b, "outer", 0, 4, tolerance, &worst);
    check_region(b, "inner", 1, 3, tolerance, &worst);
    cr_log_info("%s: worst distance outside the brackets %lld ns", timer_name, (long long)worst);
    /* nesting survives: every inner call has outer as parent */
    const sp_profile *p = b->profile;
    const sp_row *inner = harness_row(p, 0, "inner"), *outer = harness_row(p, 0, "outer");
    cr_assert_not_null(p->parent_ids);
    for (uint64_t k = 0; k < inner->count; k++) {
        int64_t parent = p->parent_ids[inner->offset + k];
        uint64_t j = 0;
        while (j < outer->count && p->call_ids[outer->offset + j] != parent)
            j++;
        cr_assert_lt(j, outer->count, "inner call %llu has no outer parent", (unsigned long long)k);
    }

    /* The live statistics (sp_get_region_stats, kept in ticks and converted
     * at the run's mean rate) agree with the file's events. */
    long long calls, total, mn, mx;
    const char *line = strstr(b->run.out, "inner calls=");
    cr_assert_not_null(line, "stdout: %s", b->run.out);
    cr_assert_eq(sscanf(line, "inner calls=%lld total_ns=%lld min_ns=%lld max_ns=%lld", &calls,
                        &total, &mn, &mx), 4);
    cr_assert_eq(calls, (long long)inner->count);
    long long file_total = 0, file_min = INT64_MAX, file_max = 0;
    for (uint64_t k = 0; k < inner->count; k++) {
        long long d = p->end[inner->offset + k] - p->start[inner->offset + k];
        file_total += d;
        file_min = d < file_min ? d : file_min;
        file_max = d > file_max ? d : file_max;
    }
    long long slack = file_total / 10000 + 1000 * (long long)inner->count / 1000 + 1000;
    cr_assert(llabs(total - file_total) <= slack, "stats total %lld ns, file %lld ns", total,
              file_total);
    cr_assert(llabs(mx - file_max) <= file_max / 10000 + 100, "stats max %lld, file %lld", mx,
              file_max);
    cr_assert(llabs(mn - file_min) <= 100, "stats min %lld, file %lld", mn, file_min);
}

static void free_bracket(struct bracket_run *b)
{
    sp_profile_free(b->profile);
    free(b->records);
    harness_run_free(&b->run);
}

/* The TSC is converted through calibration points: within 2 us of the
 * program's own readings (tolerance of merging points, 100 ns, plus the
 * reading windows; a wrong rate or origin is off by milliseconds). */
#define TSC_TOLERANCE_NS 2000

static int tsc_refused(const struct bracket_run *b)
{
    return strstr(b->run.err, "SCOPE_PROFILER_TIMER=tsc:") != NULL;
}

Test(timer, tsc_times_are_clock_monotonic)
{
    struct bracket_run b;
    run_bracket(&b, 3000, 2, "tsc", NULL);
    if (tsc_refused(&b)) {
        free_bracket(&b);
        cr_skip_test("this CPU has no invariant TSC");
    }
    cr_assert_str_eq(b.run.err, "", "stderr: %s", b.run.err);
    check_all(&b, "tsc", TSC_TOLERANCE_NS);
    free_bracket(&b);
}

Test(timer, clock_timer_is_exact)
{
    struct bracket_run b;
    run_bracket(&b, 2000, 2, "clock", NULL);
    cr_assert_str_eq(b.run.err, "", "stderr: %s", b.run.err);
    check_all(&b, "clock_gettime", 0);
    free_bracket(&b);
}

/* 2 x 40,000 x 2 calls (3.8 MB of events) under a 1 MiB cap: most events
 * are converted when spilled, the rest at the flush and at finalize. */
Test(timer, spilled_calls_are_converted)
{
    struct bracket_run b;
    run_bracket(&b, 40000, 2, "tsc", "1M");
    if (tsc_refused(&b)) {
        free_bracket(&b);
        cr_skip_test("this CPU has no invariant TSC");
    }
    cr_assert_str_eq(b.run.err, "", "stderr: %s", b.run.err);
    check_all(&b, "tsc", TSC_TOLERANCE_NS);
    free_bracket(&b);
}

/* A call of 2^32 ticks or more, or one that ends in a later 2^32-tick epoch
 * than it began, is recorded "wide" (preload/record/recorder.h): in memory,
 * and spilled under a small cap.  Each thread's middle call waits two
 * epochs (1-3 s); its times are checked like the others'. */
static void check_long_calls(long calls, const char *max_memory)
{
#if !defined(__x86_64__)
    cr_skip_test("no TSC");
#endif
    struct bracket_run b;
    run_bracket_mode(&b, calls, 2, "tsc", max_memory, "long");
    if (tsc_refused(&b)) {
        free_bracket(&b);
        cr_skip_test("this CPU has no invariant TSC");
    }
    cr_assert_str_eq(b.run.err, "", "stderr: %s", b.run.err);
    check_all(&b, "tsc", TSC_TOLERANCE_NS);
    const sp_profile *p = b.profile;
    const sp_row *inner = harness_row(p, 0, "inner");
    int longest = 0;
    for (uint64_t k = 0; k < inner->count; k++)
        longest += p->end[inner->offset + k] - p->start[inner->offset + k] > 1000000000;
    cr_assert_eq(longest, 2, "%d calls of more than 2^32 ticks (one per thread)", longest);
    free_bracket(&b);
}

Test(timer, long_calls_keep_their_times, .timeout = 120)
{
    check_long_calls(2000, NULL);
}

Test(timer, long_calls_spilled_keep_their_times, .timeout = 120)
{
    check_long_calls(40000, "1M");
}

Test(timer, malformed_timer_value)
{
    struct harness_run run;
    const char *argv[] = {harness_program("clock_bracket"), "records.bin", "10", "1", NULL};
    const char *env[] = {"SCOPE_PROFILER_TIMER=rdtsc", NULL};
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert_str_eq(run.err,
                     "scopeprof: SCOPE_PROFILER_TIMER='rdtsc' is not 'auto', 'tsc' or 'clock'; "
                     "using 'auto'\n");
    sp_profile *p = harness_load(&run, "bracket_rank00000.h5");
    cr_assert_eq(harness_calls(p, "outer"), 10);
    sp_profile_free(p);
    harness_run_free(&run);
}
