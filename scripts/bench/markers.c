/* markers.c - cost of one sp_begin + sp_end pair, next to a baseline of two
 * bare clock_gettime(CLOCK_MONOTONIC) calls measured in the same process
 * (the machines are shared and noisy: only ratios are comparable).
 *
 *   markers pairs N [THREADS]   ns per pair (median of 7 runs) and ratio
 *   markers memory N            bytes of resident memory per recorded call */
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

static void *thread_pairs(void *arg)
{
    *(double *)arg = median(pairs);
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
        fprintf(stderr, "usage: markers pairs|memory N [THREADS]\n");
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
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    double base = median(bare_clocks);
    double cost;
    if (threads <= 1) {
        cost = median(pairs);
    } else {
        pthread_t t[64];
        double r[64];
        for (int k = 0; k < threads && k < 64; k++)
            pthread_create(&t[k], NULL, thread_pairs, &r[k]);
        cost = 0;
        for (int k = 0; k < threads && k < 64; k++) {
            pthread_join(t[k], NULL);
            cost += r[k] / threads;
        }
    }
    printf("%.2f ns/pair, baseline two clock_gettime %.2f ns, ratio %.2f\n", cost, base, cost / base);
    return 0;
}
