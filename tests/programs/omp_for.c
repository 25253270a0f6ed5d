/* omp_for.c - 5 parallel regions of 4 threads (the libgomp pool is reused),
 * each thread recording a "team" call around its share of a statically
 * scheduled "omp for" of 400 "iter" calls; "step" on the main thread
 * encloses each parallel region. */
#include <omp.h>
#include <stdio.h>

#include "scope_profiler.h"

#define REGIONS 5
#define ITERATIONS 400

int main(void)
{
    int step = sp_region("step");
    int team = sp_region("team");
    int iter = sp_region("iter");
    double sum = 0;
    for (int r = 0; r < REGIONS; r++) {
        sp_begin(step);
#pragma omp parallel num_threads(4) reduction(+ : sum)
        {
            sp_begin(team);
#pragma omp for schedule(static)
            for (int i = 0; i < ITERATIONS; i++) {
                sp_begin(iter);
                for (int k = 0; k < 200; k++)
                    sum += (double)k * i;
                sp_end(iter);
            }
            sp_end(team);
        }
        sp_end(step);
    }
    printf("sum=%.0f\n", sum);
    return 0;
}
