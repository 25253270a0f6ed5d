/* mpi_regions.c - nested regions with a rank-dependent number of calls.
 *
 * Rank r runs "outer" r+1 times, each with 2 "inner" calls, inside a "main"
 * region that opens before MPI_Init and closes after MPI_Finalize (it must
 * still reach the file, which is written at exit).
 * With "skip-finalize", the last rank returns without MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
    int skip_finalize = argc > 1 && !strcmp(argv[1], "skip-finalize");
    int main_region = sp_region("main");
    sp_begin(main_region);

    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int outer = sp_region("outer"), inner = sp_region("inner");
    for (int i = 0; i <= rank; i++) {
        sp_begin(outer);
        for (int j = 0; j < 2; j++) {
            sp_begin(inner);
            sp_end(inner);
        }
        sp_end(outer);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d of %d done\n", rank, size);
    fflush(stdout);

    if (skip_finalize && rank == size - 1) {
        sp_end(main_region);
        return 0;
    }
    MPI_Finalize();
    sp_end(main_region);
    return 0;
}
