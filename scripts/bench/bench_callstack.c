/* Benchmark of the call-tree reconstruction (sp_calls_build) against
 * qsort() of the same start times, measured in the same run.
 *
 * The calls imitate a solver run on two threads: main > time step >
 * {assemble, solve > iteration > {matvec, precond > vcycle (recursive
 * multigrid levels) > smooth, dot}, occasional output}, with gaps of
 * 20-2000 ns between events.  Each thread's calls are stored in recording
 * order (a call is appended when it ends), thread after thread, exactly as
 * the shim hands them over.
 *
 * Each size is measured twice.  "cold": every build gets fresh pages from
 * the kernel, as the one build at the end of a real run does; on virtual
 * machines zeroing the 64 bytes per call of output columns can cost as
 * much as the reconstruction itself.  "warm": malloc is told to keep freed
 * memory (mallopt), so the figure is the reconstruction's own work.  qsort
 * runs under the same conditions each time.
 *
 * usage: bench_callstack [calls...]   (default: 1000000 10000000) */
#include "scopeprof/callstack.h"

#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAIN, STEP, ASSEMBLE, SOLVE, ITERATION, MATVEC, PRECOND, VCYCLE, SMOOTH, DOT, OUTPUT,
       NUM_REGIONS };
static const char *const region_names[NUM_REGIONS] = {
    "main", "time_step", "assemble", "solve", "iteration", "matvec",
    "precond", "vcycle", "smooth", "dot", "output"};

typedef struct trace {
    size_t n, cap;
    int64_t *start, *end, *thread;
    uint32_t *region;
    int64_t now;
    uint64_t rng;
} trace;

static uint64_t next_random(trace *t)
{
    t->rng ^= t->rng << 13;
    t->rng ^= t->rng >> 7;
    t->rng ^= t->rng << 17;
    return t->rng;
}

/* Time passing between two events: 20-2000 ns. */
static void tick(trace *t)
{
    t->now += 20 + (int64_t)(next_random(t) % 1981);
}

static void record(trace *t, uint32_t region, int64_t start, int64_t thread)
{
    if (t->n == t->cap)
        return; /* the caller stops once full; outer calls still close below */
    t->start[t->n] = start;
    t->end[t->n] = t->now;
    t->region[t->n] = region;
    t->thread[t->n] = thread;
    t->n++;
}

static void leaf(trace *t, uint32_t region, int64_t thread)
{
    tick(t);
    int64_t s = t->now;
    tick(t);
    record(t, region, s, thread);
}

static void vcycle(trace *t, int level, int64_t thread)
{
    tick(t);
    int64_t s = t->now;
    leaf(t, SMOOTH, thread);
    if (level > 0)
        vcycle(t, level - 1, thread);
    leaf(t, SMOOTH, thread);
    tick(t);
    record(t, VCYCLE, s, thread);
}

/* One time step; roughly 60-140 calls. */
static void time_step(trace *t, int64_t thread, int step)
{
    tick(t);
    int64_t s_step = t->now;
    leaf(t, ASSEMBLE, thread);
    tick(t);
    int64_t s_solve = t->now;
    int iterations = 3 + (int)(next_random(t) % 8);
    for (int i = 0; i < iterations; i++) {
        tick(t);
        int64_t s_it = t->now;
        leaf(t, MATVEC, thread);
        tick(t);
        int64_t s_pre = t->now;
        vcycle(t, 2 + (int)(next_random(t) % 3), thread);
        tick(t);
        record(t, PRECOND, s_pre, thread);
        leaf(t, DOT, thread);
        leaf(t, DOT, thread);
        tick(t);
        record(t, ITERATION, s_it, thread);
    }
    tick(t);
    record(t, SOLVE, s_solve, thread);
    if (step % 10 == 9)
        leaf(t, OUTPUT, thread);
    tick(t);
    record(t, STEP, s_step, thread);
}

/* Fills `count` calls of one thread, ending with its enclosing main. */
static void run_thread(trace *t, size_t count, int64_t thread, int64_t t0)
{
    size_t limit = t->n + count;
    size_t saved_cap = t->cap;
    t->cap = limit - 1; /* keep room for main */
    t->now = t0;
    int64_t s_main = t->now;
    for (int step = 0; t->n < t->cap; step++)
        time_step(t, thread, step);
    t->cap = saved_cap;
    tick(t);
    record(t, MAIN, s_main, thread);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Best of `reps` runs of each, interleaved so drift hits both alike. */
static int measure(size_t n, int reps, const char *memory)
{
    trace t = {.cap = n, .rng = 0x9E3779B97F4A7C15u};
    t.start = malloc(n * sizeof *t.start);
    t.end = malloc(n * sizeof *t.end);
    t.thread = malloc(n * sizeof *t.thread);
    t.region = malloc(n * sizeof *t.region);
    int64_t *copy = malloc(n * sizeof *copy);
    if (!t.start || !t.end || !t.thread || !t.region || !copy) {
        fprintf(stderr, "bench_callstack: out of memory for %zu calls\n", n);
        return -1;
    }
    run_thread(&t, n / 2, 0, 1000000000);
    run_thread(&t, n - n / 2, 1, 1000000000 + 12345);

    sp_call_input in = {.n = t.n, .start = t.start, .end = t.end, .region = t.region,
                        .thread_ids = t.thread, .region_names = region_names,
                        .num_regions = NUM_REGIONS};
    double best_build = 1e30, best_qsort = 1e30;
    uint32_t max_depth = 0;
    size_t roots = 0;
    for (int r = 0; r < reps; r++) {
        char err[512];
        sp_calls calls;
        double t0 = seconds_now();
        int rc = sp_calls_build(&in, &calls, err, sizeof err);
        double t1 = seconds_now();
        if (rc != 0) {
            fprintf(stderr, "bench_callstack: %s\n", err);
            return -1;
        }
        if (t1 - t0 < best_build)
            best_build = t1 - t0;
        roots = 0;
        for (size_t k = 0; k < calls.n; k++) {
            roots += calls.parent[k] < 0;
            if (calls.depth[k] > max_depth)
                max_depth = calls.depth[k];
        }
        sp_calls_free(&calls);

        memcpy(copy, t.start, t.n * sizeof *copy);
        t0 = seconds_now();
        qsort(copy, t.n, sizeof *copy, compare_i64);
        t1 = seconds_now();
        if (t1 - t0 < best_qsort)
            best_qsort = t1 - t0;
    }
    printf("| %10zu | %6s | %5zu | %9u | %10.1f | %12.3g | %10.1f | %11.2f |\n", t.n, memory,
           roots, max_depth, best_build * 1e3, (double)t.n / best_build, best_qsort * 1e3,
           best_qsort / best_build);
    free(t.start);
    free(t.end);
    free(t.thread);
    free(t.region);
    free(copy);
    return 0;
}

int main(int argc, char **argv)
{
    size_t defaults[] = {1000000, 10000000};
    printf("sp_calls_build vs qsort of the same start times "
           "(2 threads, recording order, best of 3)\n\n");
    printf("| %10s | %6s | %5s | %9s | %10s | %12s | %10s | %11s |\n", "calls", "memory",
           "roots", "max depth", "build ms", "calls/s", "qsort ms", "qsort/build");
    printf("|------------|--------|-------|-----------|------------|--------------|"
           "------------|-------------|\n");
    size_t count = argc > 1 ? (size_t)argc - 1 : sizeof defaults / sizeof defaults[0];
    int failed = 0;
    for (int warm = 0; warm <= 1; warm++) {
        if (warm) {
            /* Serve big blocks from the heap and never give them back. */
            mallopt(M_MMAP_MAX, 0);
            mallopt(M_TRIM_THRESHOLD, INT32_MAX);
        }
        for (size_t i = 0; i < count; i++) {
            size_t n = argc > 1 ? strtoull(argv[i + 1], NULL, 10) : defaults[i];
            failed |= measure(n, 3, warm ? "warm" : "cold") != 0;
        }
    }
    return failed;
}
