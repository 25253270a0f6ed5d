/* markers.c - cost of one sp_begin + sp_end pair, next to a baseline of two
 * bare clock_gettime(CLOCK_MONOTONIC) calls measured in the same process
 * (the machines are shared and noisy: only ratios are comparable).
 *
 *   markers pairs N [THREADS]   ns per pair (median of 7 runs) and ratio
 *   markers memory N            bytes of resident memory per recorded call
 *   markers register N          ns per sp_region of a new name and of an
 *                               existing one (call sites are captured once
 *                               per new region: compare SCOPE_PROFILER_CALLSITES) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scope_profiler.h"

static long iterations;
static int region;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile long sink;

static double bare_clocks(void)
{
    double t0 = now_s();
    for (long i = 0; i < iterations; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        clock_gettime(CLOCK_MONOTONIC, &b);
        sink += a.tv_nsec ^ b.tv_nsec;
    }
    return (now_s() - t0) * 1e9 / iterations;
}

static double pairs(void)
{
    double t0 = now_s();
    for (long i = 0; i < iterations; i++) {
        sp_begin(region);
        sp_end(region);
    }
    return (now_s() - t0) * 1e9 / iterations;
}

static char (*fresh_names)[32];
static long names_used;

/* ns per registration of names never seen before */
static double register_new(void)
{
    for (long i = 0; i < iterations; i++)
        snprintf(fresh_names[i], sizeof fresh_names[i], "region_%ld", names_used + i);
    names_used += iterations;
    double t0 = now_s();
    for (long i = 0; i < iterations; i++)
        sink += sp_region(fresh_names[i]);
    return (now_s() - t0) * 1e9 / iterations;
}

static double register_existing(void)
{
    double t0 = now_s();
    for (long i = 0; i < iterations; i++)
        sink += sp_region("bench");
    return (now_s() - t0) * 1e9 / iterations;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double (*fn)(void))
{
    double v[7];
    for (int i = 0; i < 7; i++)
        v[i] = fn();
    qsort(v, 7, sizeof *v, cmp);
    return v[3];
}

/* One thread of the threaded case: its own baseline and its own pairs,
 * measured while the other threads do the same, so the ratio compares
 * like with like on a loaded machine. */
struct thread_result {
    double base, cost;
};
static pthread_barrier_t start_together;
static void *thread_pairs(void *arg)
{
    struct thread_result *r = arg;
    pthread_barrier_wait(&start_together);
    r->base = median(bare_clocks);
    pthread_barrier_wait(&start_together);
    r->cost = median(pairs);
    return NULL;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: markers pairs|memory|register N [THREADS]\n");
        return 2;
    }
    iterations = atol(argv[2]);
    sp_init("bench", 0);
    region = sp_region("bench");
    if (!strcmp(argv[1], "memory")) {
        long before = rss_kib();
        for (long i = 0; i < iterations; i++) {
            sp_begin(region);
            sp_end(region);
        }
        long after = rss_kib();
        printf("memory: %ld calls, %.1f bytes/call (RSS %ld -> %ld KiB)\n", iterations,
               (after - before) * 1024.0 / iterations, before, after);
        return 0;
    }
    if (!strcmp(argv[1], "register")) {
        fresh_names = malloc((size_t)iterations * sizeof *fresh_names);
        if (!fresh_names)
            return 1;
        double fresh = median(register_new);
        printf("%.1f ns/new name, %.1f ns/existing name\n", fresh, median(register_existing));
        return 0;
    }
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    double base = 0, cost = 0;
    if (threads <= 1) {
        base = median(bare_clocks);
        cost = median(pairs);
    } else {
        /* Per-thread figures, averaged over the threads. */
        threads = threads > 64 ? 64 : threads;
        pthread_t t[64];
        struct thread_result r[64];
        pthread_barrier_init(&start_together, NULL, (unsigned)threads);
        for (int k = 0; k < threads; k++)
            pthread_create(&t[k], NULL, thread_pairs, &r[k]);
        for (int k = 0; k < threads; k++) {
            pthread_join(t[k], NULL);
            base += r[k].base / threads;
            cost += r[k].cost / threads;
        }
    }
    printf("%.2f ns/pair, baseline two clock_gettime %.2f ns, ratio %.2f\n", cost, base, cost / base);
    return 0;
}
