/* clock_bracket: nested calls bracketed by clock_gettime(CLOCK_MONOTONIC)
 * readings, so a test can check that the times in the file are that clock.
 * Usage: clock_bracket RECORDS_FILE CALLS_PER_THREAD THREADS [long]
 * Each thread writes one record per call: thread, call, t0..t5 where
 *   t0 <= outer.start <= t1 <= inner.start <= t2 <= inner.end <= t3
 *   ... <= outer.end <= t5 (t4 between the two ends).
 * Every 64th call sleeps 1 ms inside `inner`, so the run spans many
 * calibration points of the shim's timer; thread 0 flushes half-way.
 * With `long`, the middle call of each thread stays in `inner` until the
 * TSC has passed two 2^32-tick epochs: a call the shim must record wide
 * (preload/record/recorder.h, struct sp_slot). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "scope_profiler.h"

struct record {
    int64_t thread, call, t[6];
};

static long calls;
static int long_call;
static int outer_id, inner_id;
static struct record *records;

static int64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *work(void *arg)
{
    int64_t thread = (int64_t)(intptr_t)arg;
    for (long i = 0; i < calls; i++) {
        struct record *r = &records[thread * calls + i];
        r->thread = thread;
        r->call = i;
        r->t[0] = now();
        sp_begin(outer_id);
        r->t[1] = now();
        sp_begin(inner_id);
        r->t[2] = now();
        if (i % 64 == 0) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
#if defined(__x86_64__)
        if (long_call && i == calls / 2) {
            uint64_t epoch = __rdtsc() >> 32;
            while (__rdtsc() >> 32 < epoch + 2) {
                struct timespec ms = {0, 1000000};
                nanosleep(&ms, NULL);
            }
        }
#endif
        r->t[3] = now();
        sp_end(inner_id);
        r->t[4] = now();
        sp_end(outer_id);
        r->t[5] = now();
        /* A flush converts the calls so far; the later ones must join them. */
        if (thread == 0 && i == calls / 2)
            sp_flush();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "long"))) {
        fprintf(stderr, "usage: clock_bracket RECORDS_FILE CALLS_PER_THREAD THREADS [long]\n");
        return 2;
    }
    long_call = argc == 5;
    calls = atol(argv[2]);
    int threads = atoi(argv[3]);
    if (calls <= 0 || threads <= 0 || threads > 64)
        return 2;
    records = calloc((size_t)calls * (size_t)threads, sizeof *records);
    if (!records)
        return 1;
    sp_init("bracket", 0);
    outer_id = sp_region("outer");
    inner_id = sp_region("inner");
    /* Thread 0 is main (the shim's thread 0); the others in creation order. */
    pthread_t tids[64];
    for (int t = 1; t < threads; t++)
        if (pthread_create(&tids[t], NULL, work, (void *)(intptr_t)t) != 0)
            return 1;
    work((void *)(intptr_t)0);
    for (int t = 1; t < threads; t++)
        pthread_join(tids[t], NULL);
    FILE *f = fopen(argv[1], "wb");
    if (!f || fwrite(records, sizeof *records, (size_t)calls * (size_t)threads, f) !=
                  (size_t)calls * (size_t)threads || fclose(f) != 0)
        return 1;
    sp_region_stats stats;
    if (sp_get_region_stats(inner_id, &stats) == 0)
        printf("inner calls=%lld total_ns=%lld min_ns=%lld max_ns=%lld\n", (long long)stats.calls,
               (long long)stats.total_ns, (long long)stats.min_ns, (long long)stats.max_ns);
    sp_finalize();
    return 0;
}
