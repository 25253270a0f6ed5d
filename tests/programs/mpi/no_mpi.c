/* no_mpi.c - a serial program, not linked to MPI: "step" runs 3 times.
 * Under the shim it must get rank 0 (or the launcher's guess). */
#include <stdio.h>

#include "scope_profiler.h"

int main(void)
{
    int step = sp_region("step");
    for (int i = 0; i < 3; i++) {
        sp_begin(step);
        sp_end(step);
    }
    puts("done");
    return 0;
}
