/* dist_launch.c - was this process started by an MPI launcher, and as one
 * of how many?  Only the environment is read: outside a launcher no MPI
 * library is ever loaded. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"

/* Open MPI (mpirun), MPICH's Hydra and Intel MPI (PMI), PMIx launchers
 * (srun --mpi=pmix, prterun), MVAPICH. */
static const char *const size_variables[] = {
    "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MV2_COMM_WORLD_SIZE",
};
static const char *const rank_variables[] = {
    "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK",
};

static int parse_count(const char *text)
{
    if (!text || !*text)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    return errno || *end || v < 0 || v > INT_MAX ? -1 : (int)v;
}

static int first_of(const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int v = parse_count(getenv(names[i]));
        if (v >= 0)
            return v;
    }
    return -1;
}

int sp_dist_launcher_size(void)
{
    const char *off = getenv("SCOPEPROF_DIST");
    if (off && !strcmp(off, "0"))
        return 0;
    int size = first_of(size_variables, sizeof size_variables / sizeof *size_variables);
    if (size > 0)
        return size;
    return sp_dist_launcher_rank() >= 0 ? -1 : 0;
}

int sp_dist_launcher_rank(void)
{
    return first_of(rank_variables, sizeof rank_variables / sizeof *rank_variables);
}

int sp_dist_launcher_is_openmpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("OMPI_COMM_WORLD_RANK") != NULL;
}
