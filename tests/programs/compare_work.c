/* compare_work.c - a program whose runs are compared (scopeprof diff/check):
 *   main > setup, main > solve > {assemble, smooth} x STEPS, main > finish.
 * Every region does real arithmetic (no sleeps: the scheduler stretches a
 * sleep unpredictably, while a fixed amount of work slows down only with the
 * machine).
 *   SCOPEPROF_TEST_SLOWER=REGION[:PCT]  that region does PCT % (default 20)
 *                                 more work per call
 *   SCOPEPROF_TEST_FASTER=REGION[:PCT]  ... PCT % (default 20) less work
 *   SCOPEPROF_TEST_VARIANT=new    adds "refine" under solve, drops "finish"
 *   argv[1]                       steps (default 1000)
 *   argv[2]                       rank given to sp_init (default 0), to make
 *                                 the rank files of a "run" without MPI
 *   argv[3]                       assemble's share of the 40 units of work
 *                                 per step, 1..39 (default 20; smooth does
 *                                 the rest) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"

static volatile uint64_t sink;

typedef struct change {
    char region[64];
    long pct;                 /* of the work added (negative: removed) */
} change;
static change slower, faster;

static void parse_change(change *c, const char *var, long sign)
{
    const char *text = getenv(var);
    if (!text)
        return;
    snprintf(c->region, sizeof c->region, "%s", text);
    char *colon = strchr(c->region, ':');
    c->pct = sign * 20;
    if (colon) {
        *colon = '\0';
        c->pct = sign * atol(colon + 1);
    }
}

static long changed(const change *c, const char *region, long units)
{
    return c->region[0] && !strcmp(c->region, region) ? units + units * c->pct / 100 : units;
}

/* About `units` x 1000 dependent integer steps: CPU-bound, no memory traffic
 * that a neighbour on the machine could disturb. */
static void work(const char *region, long units)
{
    units = changed(&faster, region, changed(&slower, region, units));
    uint64_t x = 0x9E3779B97F4A7C15ull ^ (uint64_t)units;
    for (long i = 0; i < units * 1000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    sink += x;
}

static void region(int id, const char *name, long units)
{
    sp_begin(id);
    work(name, units);
    sp_end(id);
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 1000;
    parse_change(&slower, "SCOPEPROF_TEST_SLOWER", 1);
    parse_change(&faster, "SCOPEPROF_TEST_FASTER", -1);
    const char *variant = getenv("SCOPEPROF_TEST_VARIANT");
    int extra = variant && !strcmp(variant, "new");
    int rank = argc > 2 ? atoi(argv[2]) : 0;
    long assemble_units = argc > 3 ? atol(argv[3]) : 20;
    if (assemble_units < 1 || assemble_units > 39)
        assemble_units = 20;
    if (sp_init("compare", rank) != 0)
        return 1;
    int main_id = sp_region("main"), setup = sp_region("setup"), solve = sp_region("solve");
    int assemble = sp_region("assemble"), smooth = sp_region("smooth");
    int refine = sp_region("refine"), finish = sp_region("finish");
    sp_begin(main_id);
    region(setup, "setup", 400);
    sp_begin(solve);
    for (long s = 0; s < steps; s++) {
        /* short calls (~30 us at the default split): few of them are hit
         * by a preemption on a busy machine, so their median moves only
         * with the work */
        region(assemble, "assemble", assemble_units);
        region(smooth, "smooth", 40 - assemble_units);
        if (extra)
            region(refine, "refine", 4);
    }
    sp_end(solve);
    if (!extra)
        region(finish, "finish", 200);
    sp_end(main_id);
    printf("steps=%ld sink=%llu\n", steps, (unsigned long long)sink);
    return 0;
}
