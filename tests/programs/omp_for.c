/* omp_for.c - 5 parallel regions of 4 threads (the libgomp pool is reused),
 * each thread recording a "team" call around its share of a statically
 * scheduled "omp for" of 400 "iter" calls; "step" on the main thread
 * encloses each parallel region.
 *
 * The parallel regions share no variable of main (region ids are globals
 * set before the pool exists): libgomp is not instrumented, so under
 * ThreadSanitizer its hand-over of shared data would look like a race. */
#include <stdio.h>

#include "scope_profiler.h"

#define REGIONS 5
#define ITERATIONS 400

static int step, team, iter;

int main(void)
{
    step = sp_region("step");
    team = sp_region("team");
    iter = sp_region("iter");
    for (int r = 0; r < REGIONS; r++) {
        sp_begin(step);
#pragma omp parallel num_threads(4)
        {
            volatile double sink = 0;
            sp_begin(team);
#pragma omp for schedule(static)
            for (int i = 0; i < ITERATIONS; i++) {
                sp_begin(iter);
                for (int k = 0; k < 200; k++)
                    sink += (double)k * i;
                sp_end(iter);
            }
            sp_end(team);
        }
        sp_end(step);
    }
    printf("done\n");
    return 0;
}
