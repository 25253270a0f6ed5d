/* mpi_openmp.c - MPI + OpenMP: each rank runs 2 parallel regions of 2
 * threads inside "step", each thread one "work" call per region.  Region
 * ids are set before any team exists. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#include "scope_profiler.h"

static volatile double sinks[64];

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int step = sp_region("step"), work = sp_region("work");
    for (int r = 0; r < 2; r++) {
        sp_begin(step);
#pragma omp parallel num_threads(2)
        {
            sp_begin(work);
            for (int k = 0; k < 20000; k++)
                sinks[omp_get_thread_num() & 63] += k;
            sp_end(work);
        }
        sp_end(step);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
