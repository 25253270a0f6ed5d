/* empty_parallel.c - ns per empty `#pragma omp parallel` region, for
 * scripts/bench/openmp/run.sh.  usage: empty_parallel REGIONS THREADS */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int seen[64];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long regions = argc > 1 ? atol(argv[1]) : 100000;
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    /* the pool exists before timing starts; the body only reads the
     * thread number (an empty body lets clang drop the fork altogether) */
#pragma omp parallel num_threads(threads)
    seen[omp_get_thread_num() & 63] = 1;
    double t0 = now_s();
    for (long r = 0; r < regions; r++) {
#pragma omp parallel num_threads(threads)
        seen[omp_get_thread_num() & 63] = 1;
    }
    double t1 = now_s();
    printf("%.0f\n", (t1 - t0) * 1e9 / (double)regions);
    return 0;
}
